package parsers

import (
	"fmt"
	"github.com/vrender/vrender/internal/parity"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/vrender/vrender/tokenizer"
)

// everyVocab knows every string as a token, so factories that insist on
// their markers being tokens (mistral, deepseek) build their machines.
type everyVocab struct{}

func (everyVocab) TokenToID(s string) (int, bool) {
	h := fnv.New32a()
	h.Write([]byte(s))
	return int(h.Sum32() >> 2), true
}

// stateTools has a string, a number and an object parameter so the
// schema-coercing parsers exercise their paths.
const stateTools = `{"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",` +
	`"properties":{"location":{"type":"string"},"days":{"type":"integer"},"opts":{"type":"object"}}}}},` +
	`{"type":"function","function":{"name":"search","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}]}`

// stateCorpus spells tool calls and reasoning the ways the registered
// families do, so every registered machine is driven through its states
// mid-marker, mid-call and mid-argument. A parser registered later runs
// through the same corpus: its checkpoint gaps show here.
var stateCorpus = []string{
	"Plain answer with no markers at all.",
	"   \n ",
	"<think>Let me think about Paris.</think>The answer is Paris.",
	"I reason here</think>\n\nThen content <think>not again</think>",
	"<think>reasoning <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}</tool_call>",
	"Sure.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris, ü 🌍\", \"days\": 3, \"opts\": {\"a\": [1, 2.50, -1e-7]}}}\n</tool_call>\n<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"x\\\"y\"}}\n</tool_call>",
	"<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
	"{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\", \"days\": 2}}; {\"name\": \"search\", \"parameters\": {\"q\": \"a\"}}",
	"[get_weather(location='Paris', days=3), search(q=\"x\")]",
	"<|python_start|>[get_weather(location='Paris')]<|python_end|>",
	"[TOOL_CALLS]get_weather{\"location\": \"Paris\"}[TOOL_CALLS]search{\"q\": \"b\"}",
	"[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}]",
	"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
	"text<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\": \"Paris\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
	"<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"location\": \"Paris\"}<|tool_call_end|><|tool_calls_section_end|>",
	"<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key><arg_value>3</arg_value>\n</tool_call>",
	"<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}]",
	"<tool_call>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}]</tool_call>",
	"Calling<|action_start|><|plugin|>\n{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\"}}<|action_end|>",
	"<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}]</tool_calls>",
	"functools[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}]",
	"<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"location\">Paris</parameter>\n</invoke>\n</minimax:tool_call>",
	"```json\n[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}]\n```",
	"<seed:think>hmm</seed:think><seed:tool_call>\n<function=get_weather>\n<parameter=location>Paris</parameter>\n</function>\n</seed:tool_call>",
	"<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_weather\"><steptml:parameter name=\"location\">Paris</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
	"Here is my thought process: hmm. Here is my response: done.",
	"[THINK]maybe[/THINK]answer",
	"<answer>final</answer> <tool_call>{\"name\": \"get_weather\", \"arguments\": {broken",
	"<tool_call>{\"name\": \"nope\", \"arguments\": {\"a\": 1}}</tool_call> trailing text",
}

// stateRun is every delta a parser returned plus its final answers.
type stateRun struct {
	Deltas []Delta
	Final  string
}

func finalAnswers(p *Parser) string {
	return fmt.Sprintf("finish=%s tools=%v contentNull=%v reasoningNull=%v",
		p.FinishReason("stop"), p.ToolsCalled(), p.ContentNull(), p.ReasoningNull())
}

// runPieces feeds pieces, checkpointing and restoring before each push
// when roundTrip is set.
func runPieces(t *testing.T, cfg Config, v Vocab, req *Request, prompt []int, pieces []string, ids [][]int, roundTrip bool) stateRun {
	t.Helper()
	p, err := New(cfg, v, req, prompt)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	restore := func() {
		if !roundTrip {
			return
		}
		st, err := marshalState(p)
		if err != nil {
			t.Fatalf("AppendState: %v", err)
		}
		if p, err = Restore(cfg, v, req, st); err != nil {
			t.Fatalf("Restore: %v", err)
		}
	}
	var run stateRun
	for _, s := range pieces {
		restore()
		run.Deltas = append(run.Deltas, pushDelta(p, s))
	}
	restore()
	run.Deltas = append(run.Deltas, finishDelta(p))
	restore()
	run.Final = finalAnswers(p)
	return run
}

// runeChunks splits text at rune boundaries: whole, and at random with
// pieces of about four runes (per-rune splits are the golden test's).
func runeChunks(text string, seed uint64) [][]string {
	out := [][]string{{text}}
	rng := rand.New(rand.NewPCG(seed, 3))
	for range 1 {
		var pieces []string
		prev := 0
		for i := range text {
			if i > prev && rng.IntN(4) == 0 {
				pieces = append(pieces, text[prev:i])
				prev = i
			}
		}
		out = append(out, append(pieces, text[prev:]))
	}
	return out
}

func checkRoundTrip(t *testing.T, cfg Config, v Vocab, req *Request, prompt []int, pieces []string, ids [][]int) {
	t.Helper()
	want := runPieces(t, cfg, v, req, prompt, pieces, ids, false)
	got := runPieces(t, cfg, v, req, prompt, pieces, ids, true)
	if !reflect.DeepEqual(normDeltas(got), normDeltas(want)) {
		t.Fatalf("restored after every chunk differs on %q: %s", pieces, firstDiff(got, want))
	}
}

// normDeltas makes nil and empty call lists compare equal and replaces
// tool-call ids, which parsers draw at random (derender pins its own), by
// whether one was given.
func normDeltas(r stateRun) stateRun {
	out := stateRun{Final: r.Final}
	for _, d := range r.Deltas {
		calls := d.ToolCalls
		d.ToolCalls = nil
		for _, c := range calls {
			if c.ID != "" {
				c.ID = "<id>"
			}
			d.ToolCalls = append(d.ToolCalls, c)
		}
		out.Deltas = append(out.Deltas, d)
	}
	return out
}

// TestStateRoundTripRegistered runs every registered reasoning and tool
// parser, alone and behind each reasoning parser family sample, through
// the corpus with a checkpoint after every chunk, one chunking being
// every byte.
func TestStateRoundTripRegistered(t *testing.T) {
	req := mustRequest(t, stateTools)
	for _, cfg := range registeredConfigs() {
		t.Run(cfg.ReasoningParser+"+"+cfg.ToolParser, func(t *testing.T) {
			for i, text := range stateCorpus {
				for _, pieces := range append(runeChunks(text, uint64(i)), bytePieces(text)) {
					checkRoundTrip(t, cfg, everyVocab{}, req, nil, pieces, nil)
				}
			}
		})
	}
}

// TestStateRoundTripGolden checkpoints after every chunk of every golden
// case under one-token, one-chunk, random and one-byte chunkings: each
// push is followed by a save and a restore into a fresh parser, and the
// answer must be the uninterrupted run's.
func TestStateRoundTripGolden(t *testing.T) {
	_, sets := parity.Load(t)
	toks := map[string]*tokenizer.Tokenizer{}
	for file, cases := range sets {
		for i := range cases {
			c := &cases[i]
			t.Run(file+"/"+c.ID, func(t *testing.T) {
				req, err := decodeRequest(c.ChatRequest)
				if err != nil {
					t.Fatal(err)
				}
				tok := goldenTokenizer(t, toks, c.Tokenizer)
				pieces, ids := detokPieces(tok, c, &req)
				for k, cuts := range parity.Chunkings(len(ids), uint64(i)) {
					if k > 2 {
						break // one chunk, one token, one random
					}
					var ps []string
					var is [][]int
					prev := 0
					for _, cut := range cuts {
						s := ""
						for _, p := range pieces[prev:cut] {
							s += p
						}
						ps, is = append(ps, s), append(is, ids[prev:cut])
						prev = cut
					}
					checkRoundTrip(t, goldenConfig(c), tok, &req, c.PromptTokenIDs, ps, is)
				}
				// Every byte boundary, runes cut included.
				checkRoundTrip(t, goldenConfig(c), tok, &req, c.PromptTokenIDs, bytePieces(strings.Join(pieces, "")), nil)
			})
		}
	}
}

func firstDiff(got, want stateRun) string {
	for i := range min(len(got.Deltas), len(want.Deltas)) {
		if !reflect.DeepEqual(normDeltas(stateRun{Deltas: got.Deltas[i : i+1]}), normDeltas(stateRun{Deltas: want.Deltas[i : i+1]})) {
			return fmt.Sprintf("delta %d: got %+v want %+v", i, got.Deltas[i], want.Deltas[i])
		}
	}
	return fmt.Sprintf("final: got %s want %s", got.Final, want.Final)
}

// TestHermesStreamingState: a streaming hermes machine stops keeping the
// raw call text once a call went out, so its state stays flat inside a
// long argument; the batch machine keeps it for vLLM's failed-call answer.
func TestHermesStreamingState(t *testing.T) {
	req, err := decodeRequest([]byte(stateTools))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{ToolParser: "hermes", EnableAutoToolChoice: true}
	head := "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \""
	for _, tc := range []struct {
		name      string
		streaming bool
	}{{"batch", false}, {"stream", true}} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(cfg, everyVocab{}, &req, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.streaming {
				p.SetStreaming()
			}
			pushDelta(p, head)
			var sizes []int
			for range 200 {
				pushDelta(p, "abcdefgh ")
				st, err := marshalState(p)
				if err != nil {
					t.Fatal(err)
				}
				sizes = append(sizes, len(st))
			}
			// Truncated: the call never closes, so it fails at Finish.
			d := finishDelta(p)
			grew := sizes[len(sizes)-1] - sizes[0]
			if tc.streaming {
				if grew != 0 || d.Content != "" {
					t.Fatalf("streaming: state grew %d bytes, final content %q", grew, d.Content)
				}
				return
			}
			if grew < 199*9 || d.Content == "" || d.Content[:len(head)] != head {
				t.Fatalf("batch: state grew %d bytes, final content %.40q", grew, d.Content)
			}
		})
	}
}
