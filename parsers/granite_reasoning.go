package parsers

// IBM Granite reasoning, as vLLM's GraniteReasoningParser.extract_reasoning:
// the first "Here is my thought process:" (or "Here's …") followed later by
// "Here is my response:" (or "Here's …") splits the output: reasoning is
// between the two phrases (a string, even empty), content is what follows
// (empty is null), text before the first phrase is dropped. Without both
// phrases the whole output is content. The phrases are ordinary text, so
// nothing is certain until the response phrase arrives: until then the
// output is held back.

var (
	graniteThinkPhrases    = []string{"Here's my thought process:", "Here is my thought process:"}
	graniteResponsePhrases = []string{"Here's my response:", "Here is my response:"}
)

func init() {
	registerReasoning("granite", ReasoningInfo{New: func(Vocab, *Request, []int) (ReasoningMachine, error) {
		return &GraniteReasoning{ThinkAt: -1}, nil
	}})
}

// GraniteReasoning is the granite reasoning machine.
type GraniteReasoning struct {
	// Buf is the output held back until the response phrase arrives.
	Buf []byte
	// ThinkAt is the end of the first thought phrase in Buf, or -1.
	ThinkAt int
	// Split is set once both phrases were seen: the rest is content.
	Split bool
	Find  holdScan
}

// Push implements ReasoningMachine.
func (g *GraniteReasoning) Push(text string) (reasoning, content string) {
	if g.Split {
		return "", text
	}
	g.Buf = append(g.Buf, text...)
	if g.ThinkAt < 0 {
		i, mk := g.Find.find(g.Buf, graniteThinkPhrases)
		if i < 0 {
			return "", ""
		}
		g.ThinkAt = i + len(mk)
		g.Find.seek(g.ThinkAt)
	}
	i, mk := g.Find.find(g.Buf, graniteResponsePhrases)
	if i < 0 {
		return "", ""
	}
	g.Split = true
	reasoning, content = string(g.Buf[g.ThinkAt:i]), string(g.Buf[i+len(mk):])
	g.Buf = nil
	return reasoning, content
}

// Finish implements ReasoningMachine.
func (g *GraniteReasoning) Finish() (reasoning, content string) {
	content = string(g.Buf)
	g.Buf = nil
	return "", content
}

// Nulls implements ReasoningMachine: split output has a reasoning string
// and null empty content; unsplit output is all content, "" included.
func (g *GraniteReasoning) Nulls() (reasoningNull, contentNull bool) {
	return !g.Split, g.Split
}
