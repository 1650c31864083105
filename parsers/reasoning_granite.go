package parsers

import "github.com/vrender/vrender/internal/statecodec"

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

// graniteReasoning is the granite reasoning machine.
type graniteReasoning struct {
	// buf is the output held back until the response phrase arrives.
	buf []byte
	// thinkAt is the end of the first thought phrase in Buf, or -1.
	thinkAt int
	// split is set once both phrases were seen: the rest is content.
	split bool
	find  holdScan
}

// Push implements reasoningMachine.
func (g *graniteReasoning) Push(text string) (reasoning, content string) {
	if g.split {
		return "", text
	}
	g.buf = append(g.buf, text...)
	if g.thinkAt < 0 {
		i, mk := g.find.find(g.buf, graniteThinkPhrases)
		if i < 0 {
			return "", ""
		}
		g.thinkAt = i + len(mk)
		g.find.seek(g.thinkAt)
	}
	i, mk := g.find.find(g.buf, graniteResponsePhrases)
	if i < 0 {
		return "", ""
	}
	g.split = true
	reasoning, content = string(g.buf[g.thinkAt:i]), string(g.buf[i+len(mk):])
	g.buf = nil
	return reasoning, content
}

// Finish implements reasoningMachine.
func (g *graniteReasoning) Finish() (reasoning, content string) {
	content = string(g.buf)
	g.buf = nil
	return "", content
}

// Nulls implements reasoningMachine: split output has a reasoning string
// and null empty content; unsplit output is all content, "" included.
func (g *graniteReasoning) Nulls() (reasoningNull, contentNull bool) {
	return !g.split, g.split
}

// codec saves and restores the state of a graniteReasoning.
func (g *graniteReasoning) codec(c *statecodec.Codec) {
	c.ByteSlice(&g.buf)
	c.Int(&g.thinkAt)
	c.Bool(&g.split)
	g.find.codec(c)
	if !g.split { // the buffer is released at the split
		c.Within(len(g.buf), g.find.next)
		c.Within(len(g.buf)+1, g.thinkAt+1) // -1 before the thought phrase
	}
}

func newGraniteReasoning(Vocab, *Request, []int) (reasoningMachine, error) {
	return &graniteReasoning{thinkAt: -1}, nil
}
