package parsers

import "strings"

// OLMo 3 reasoning, as vLLM's Olmo3ReasoningParser.extract_reasoning (the
// regex ^(?:<think>)?(.*?)</think>(.*)$): with a "</think>" the text before
// the first one is reasoning (less a leading "<think>") and the rest is
// content, empty parts being null; without one the whole output is content
// (a string, even empty). The tags are ordinary text and nothing is
// certain before "</think>", so the output is held back until it arrives.

func init() {
	registerReasoning("olmo3", ReasoningInfo{New: func(Vocab, *Request, []int) (ReasoningMachine, error) {
		return &Olmo3Reasoning{}, nil
	}})
}

var olmo3EndMarkers = []string{thinkEnd}

// Olmo3Reasoning is the olmo3 reasoning machine.
type Olmo3Reasoning struct {
	// Buf is the output held back until "</think>".
	Buf []byte
	// Split is set once "</think>" was seen: the rest is content.
	Split bool
	Find  holdScan
}

// Push implements ReasoningMachine.
func (o *Olmo3Reasoning) Push(text string) (reasoning, content string) {
	if o.Split {
		return "", text
	}
	o.Buf = append(o.Buf, text...)
	i, _ := o.Find.find(o.Buf, olmo3EndMarkers)
	if i < 0 {
		return "", ""
	}
	o.Split = true
	reasoning = strings.TrimPrefix(string(o.Buf[:i]), thinkStart)
	content = string(o.Buf[i+len(thinkEnd):])
	o.Buf = nil
	return reasoning, content
}

// Finish implements ReasoningMachine.
func (o *Olmo3Reasoning) Finish() (reasoning, content string) {
	content = string(o.Buf)
	o.Buf = nil
	return "", content
}

// Nulls implements ReasoningMachine.
func (o *Olmo3Reasoning) Nulls() (reasoningNull, contentNull bool) {
	return true, o.Split
}
