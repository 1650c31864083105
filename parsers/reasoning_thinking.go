package parsers

import (
	"fmt"

	"github.com/vrender/vrender/internal/statecodec"
)

// The BaseThinkingReasoningParser family of vLLM (deepseek_r1, step3,
// ernie45, …) as one machine parameterised by its markers. Its
// extract_reasoning drops the text up to the first start marker, then
// everything up to the first end marker is reasoning and the rest is
// content, later markers included. Without an end marker all is reasoning.
// Reasoning is always a string; empty content is null.

// thinkingSpec names a family's markers.
type thinkingSpec struct {
	name string
	// start is "" for families that only close reasoning (step3): then
	// the output starts in reasoning and "<think>" is ordinary text.
	start, end string
	// preMarkers and reasoningMarkers are the markers looked for before
	// and after the start marker.
	preMarkers, reasoningMarkers []string
}

func newThinkingSpec(name, start, end string) *thinkingSpec {
	s := &thinkingSpec{name: name, start: start, end: end, reasoningMarkers: []string{end}}
	s.preMarkers = []string{end}
	if start != "" {
		s.preMarkers = []string{start, end}
	}
	return s
}

// r1Phase is where a thinkingReasoning machine is.
type r1Phase uint8

const (
	r1Pre       r1Phase = iota // no marker seen yet
	r1Reasoning                // after the start marker
	r1Content                  // after the end marker
)

// thinkingReasoning is the machine of the start/end marker family.
//
// Known deviation: text before a start marker that is not at the start of
// the output has already been streamed as reasoning when the marker
// arrives; vLLM drops it (and with it an end marker seen before the start
// marker). Models emit the start marker first or not at all.
type thinkingReasoning struct {
	spec *thinkingSpec
	// promptEnded is set when the prompt closed the reasoning.
	promptEnded bool
	phase       r1Phase
	scan        markerScan
}

// thinkingFactory builds machines of spec. checkPrompt makes a prompt
// whose last think marker is the end marker put the whole output in
// content, as the vLLM the golden set follows does for deepseek_r1.
func thinkingFactory(spec *thinkingSpec, checkPrompt bool) reasoningFactory {
	return func(v Vocab, _ *Request, promptIDs []int) (reasoningMachine, error) {
		return newThinking(spec, checkPrompt, v, promptIDs)
	}
}

func newThinking(spec *thinkingSpec, checkPrompt bool, v Vocab, promptIDs []int) (*thinkingReasoning, error) {
	end, ok := v.TokenToID(spec.end)
	start := -1
	if spec.start != "" {
		var ok2 bool
		start, ok2 = v.TokenToID(spec.start)
		ok = ok && ok2
	}
	if !ok {
		return nil, fmt.Errorf("%s reasoning parser: tokenizer has no %q/%q tokens", spec.name, spec.start, spec.end)
	}
	r := &thinkingReasoning{spec: spec}
	if spec.start == "" {
		r.phase = r1Reasoning
	}
	if checkPrompt {
		for i := len(promptIDs) - 1; i >= 0; i-- {
			if promptIDs[i] == start {
				break
			}
			if promptIDs[i] == end {
				r.promptEnded = true
				break
			}
		}
	}
	return r, nil
}

// Push implements reasoningMachine.
func (r *thinkingReasoning) Push(text string) (reasoning, content string) {
	if r.promptEnded || r.phase == r1Content {
		return "", text
	}
	for {
		markers := r.spec.preMarkers
		if r.phase == r1Reasoning {
			markers = r.spec.reasoningMarkers
		}
		before, marker, rest := r.scan.next(text, markers)
		reasoning += before
		switch marker {
		case "":
			return reasoning, content
		case r.spec.end:
			r.phase = r1Content
			return reasoning, rest
		default: // the start marker
			r.phase = r1Reasoning
		}
		text = rest
	}
}

// Finish implements reasoningMachine.
func (r *thinkingReasoning) Finish() (reasoning, content string) {
	return r.scan.flush(), ""
}

// Nulls implements reasoningMachine: vLLM always returns the reasoning
// string (possibly empty) and null for empty content; with the prompt
// having ended the reasoning, the output is the content as is.
func (r *thinkingReasoning) Nulls() (reasoningNull, contentNull bool) {
	if r.promptEnded {
		return true, false
	}
	return false, true
}

// PromptEndedReasoning reports whether the prompt closed the reasoning.
func (r *thinkingReasoning) PromptEndedReasoning() bool { return r.promptEnded }

// codec saves and restores the state of a thinkingReasoning.
func (r *thinkingReasoning) codec(c *statecodec.Codec) {
	c.Bool(&r.promptEnded)
	statecodec.Enum(c, &r.phase, 3)
	r.scan.codec(c)
}

// step3Spec: step3 closes reasoning with "</think>" only; "<think>" is
// ordinary text.
var step3Spec = newThinkingSpec("step3", "", thinkEnd)
