package parsers

import (
	"strings"

	"github.com/vrender/vrender/internal/statecodec"
)

// OLMo 3 reasoning, as vLLM's Olmo3ReasoningParser.extract_reasoning (the
// regex ^(?:<think>)?(.*?)</think>(.*)$): with a "</think>" the text before
// the first one is reasoning (less a leading "<think>") and the rest is
// content, empty parts being null; without one the whole output is content
// (a string, even empty). The tags are ordinary text and nothing is
// certain before "</think>", so the output is held back until it arrives.

var olmo3EndMarkers = []string{thinkEnd}

// olmo3Reasoning is the olmo3 reasoning machine.
type olmo3Reasoning struct {
	// buf is the output held back until "</think>".
	buf []byte
	// split is set once "</think>" was seen: the rest is content.
	split bool
	find  holdScan
}

// Push implements reasoningMachine.
func (o *olmo3Reasoning) Push(text string) (reasoning, content string) {
	if o.split {
		return "", text
	}
	o.buf = append(o.buf, text...)
	i, _ := o.find.find(o.buf, olmo3EndMarkers)
	if i < 0 {
		return "", ""
	}
	o.split = true
	reasoning = strings.TrimPrefix(string(o.buf[:i]), thinkStart)
	content = string(o.buf[i+len(thinkEnd):])
	o.buf = nil
	return reasoning, content
}

// Finish implements reasoningMachine.
func (o *olmo3Reasoning) Finish() (reasoning, content string) {
	content = string(o.buf)
	o.buf = nil
	return "", content
}

// Nulls implements reasoningMachine.
func (o *olmo3Reasoning) Nulls() (reasoningNull, contentNull bool) {
	return true, o.split
}

// codec saves and restores the state of a olmo3Reasoning.
func (o *olmo3Reasoning) codec(c *statecodec.Codec) {
	c.ByteSlice(&o.buf)
	c.Bool(&o.split)
	o.find.codec(c)
	if !o.split { // the buffer is released at the split
		c.Within(len(o.buf), o.find.next)
	}
}

func newOlmo3Reasoning(Vocab, *Request, []int) (reasoningMachine, error) {
	return &olmo3Reasoning{}, nil
}
