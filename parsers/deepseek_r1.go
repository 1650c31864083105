package parsers

import "fmt"

// DeepSeek-R1 reasoning, as vLLM's DeepSeekR1ReasoningParser.extract_reasoning
// (BaseThinkingReasoningParser): text up to the first "<think>" is dropped,
// then everything up to the first "</think>" is reasoning and the rest is
// content, later markers included. Without "</think>" all is reasoning. When
// the prompt already closed the reasoning (enable_thinking=false renders
// "<think>\n\n</think>"), newer vLLM passes the prompt ids and the whole
// output is content.

func init() {
	registerReasoning("deepseek_r1", ReasoningInfo{New: newDeepSeekR1Reasoning})
}

// r1Phase is where a DeepSeekR1Reasoning machine is.
type r1Phase uint8

const (
	r1Pre       r1Phase = iota // no marker seen yet
	r1Reasoning                // after "<think>"
	r1Content                  // after "</think>"
)

// DeepSeekR1Reasoning is the deepseek_r1 reasoning machine.
//
// Known deviation: text before a "<think>" that is not at the start of the
// output has already been streamed as reasoning when the tag arrives; vLLM
// drops it. Models emit "<think>" first or not at all.
type DeepSeekR1Reasoning struct {
	// PromptEnded is set when the prompt closed the reasoning.
	PromptEnded bool
	Phase       r1Phase
	Scan        markerScan
}

func newDeepSeekR1Reasoning(v Vocab, _ *Request, promptIDs []int) (ReasoningMachine, error) {
	start, ok1 := v.TokenToID(thinkStart)
	end, ok2 := v.TokenToID(thinkEnd)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("deepseek_r1 reasoning parser: tokenizer has no %s/%s tokens", thinkStart, thinkEnd)
	}
	r := &DeepSeekR1Reasoning{}
	for i := len(promptIDs) - 1; i >= 0; i-- {
		if promptIDs[i] == start {
			break
		}
		if promptIDs[i] == end {
			r.PromptEnded = true
			break
		}
	}
	return r, nil
}

var (
	r1PreMarkers       = []string{thinkStart, thinkEnd}
	r1ReasoningMarkers = []string{thinkEnd}
)

// Push implements ReasoningMachine.
func (r *DeepSeekR1Reasoning) Push(text string) (reasoning, content string) {
	if r.PromptEnded || r.Phase == r1Content {
		return "", text
	}
	for {
		markers := r1PreMarkers
		if r.Phase == r1Reasoning {
			markers = r1ReasoningMarkers
		}
		before, marker, rest := r.Scan.next(text, markers)
		reasoning += before
		switch marker {
		case "":
			return reasoning, content
		case thinkStart:
			r.Phase = r1Reasoning
		case thinkEnd:
			r.Phase = r1Content
			return reasoning, rest
		}
		text = rest
	}
}

// Finish implements ReasoningMachine.
func (r *DeepSeekR1Reasoning) Finish() (reasoning, content string) {
	return r.Scan.flush(), ""
}

// Nulls implements ReasoningMachine: vLLM always returns the reasoning
// string (possibly empty) and null for empty content; with the prompt
// having ended the reasoning, the output is the content as is.
func (r *DeepSeekR1Reasoning) Nulls() (reasoningNull, contentNull bool) {
	if r.PromptEnded {
		return true, false
	}
	return false, true
}

// PromptEndedReasoning reports whether the prompt closed the reasoning.
func (r *DeepSeekR1Reasoning) PromptEndedReasoning() bool { return r.PromptEnded }
