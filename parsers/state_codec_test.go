package parsers

import "testing"

// bytePieces splits text into single bytes: every byte boundary, runes
// cut included, becomes a checkpoint.
func bytePieces(text string) []string {
	out := make([]string, len(text))
	for i := range text {
		out[i] = text[i : i+1]
	}
	return out
}

// registeredConfigs is every registered reasoning and tool parser, alone
// and paired (hermes behind each reasoning parser, qwen3 before each tool
// parser).
func registeredConfigs() []Config {
	var cfgs []Config
	for _, r := range ReasoningParsers() {
		cfgs = append(cfgs, Config{ReasoningParser: r})
		cfgs = append(cfgs, Config{ReasoningParser: r, ToolParser: "hermes", EnableAutoToolChoice: true})
	}
	for _, tp := range ToolParsers() {
		cfgs = append(cfgs, Config{ToolParser: tp, EnableAutoToolChoice: true})
		cfgs = append(cfgs, Config{ReasoningParser: "qwen3", ToolParser: tp, EnableAutoToolChoice: true})
	}
	return cfgs
}

// FuzzRestoreState decodes arbitrary bytes as the state of every
// registered parser configuration (a checkpoint signed by a leaked key):
// Restore answers an error or a parser that then pushes, finishes and
// saves again without a panic, its saved state restoring once more.
func FuzzRestoreState(f *testing.F) {
	req := mustRequest(f, stateTools)
	cfgs := registeredConfigs()
	// Seeds: real states, mid-marker and mid-call, of every configuration.
	for ci, cfg := range cfgs {
		for _, text := range []string{stateCorpus[4], stateCorpus[5], stateCorpus[6], stateCorpus[8], stateCorpus[14]} {
			p, err := New(cfg, everyVocab{}, req, nil)
			if err != nil {
				f.Fatal(err)
			}
			cut := len(text) * (ci%3 + 1) / 4
			p.Push(text[:cut], new(Delta))
			f.Add(uint8(ci), p.AppendState(nil), text[cut:])
		}
	}
	f.Add(uint8(0), []byte{}, "x")
	f.Add(uint8(1), []byte{0, 0, 0, 0, 1, 0xff}, "")
	f.Fuzz(func(t *testing.T, ci uint8, state []byte, more string) {
		cfg := cfgs[int(ci)%len(cfgs)]
		p, err := Restore(cfg, everyVocab{}, req, state)
		if err != nil {
			return
		}
		var d Delta
		p.Push(more, &d)
		saved := p.AppendState(nil)
		p.Finish(&d)
		finalAnswers(p)
		if _, err := Restore(cfg, everyVocab{}, req, saved); err != nil {
			t.Fatalf("%+v: a state the parser saved does not restore: %v", cfg, err)
		}
	})
}
