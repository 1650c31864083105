package parsers

import (
	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/statecodec"
)

// Reasoning of vLLM's declarative ParserEngine families (qwen3, seed_oss,
// glm45, kimi_k2, minimax_m2) as their extract_reasoning runs it: the
// engine with tool parsing skipped, fed the whole text. The output starts
// in reasoning; in reasoning the start marker is dropped, the end marker
// ends it and is dropped, and a tool-call opener ends it implicitly and
// stays as content; in content the end marker is dropped and, for glm45,
// the start marker re-enters reasoning. Empty parts are null; most
// families also drop the reasoning's trailing whitespace (Python rstrip).
// With thinking disabled the whole output is content.

// engineSpec parameterises one family.
type engineSpec struct {
	name       string
	start, end string
	// toolOpeners end reasoning and stay as content.
	toolOpeners []string
	// reenter makes the start marker in content re-enter reasoning.
	reenter bool
	// stripTrailing is strip_trailing_reasoning_whitespace.
	stripTrailing bool
	// disabled tells from the request whether thinking is off.
	disabled func(*Request) bool

	reasoningMarkers, contentMarkers []string
	// reasoningStop and contentStop are the markers' first bytes.
	reasoningStop, contentStop *byteSet
}

func (s *engineSpec) init() *engineSpec {
	s.reasoningMarkers = append([]string{s.start, s.end}, s.toolOpeners...)
	s.contentMarkers = []string{s.end}
	if s.reenter {
		s.contentMarkers = append(s.contentMarkers, s.start)
	}
	s.reasoningStop, s.contentStop = newByteSet(s.reasoningMarkers), newByteSet(s.contentMarkers)
	return s
}

// enableThinkingOff is Qwen3Parser's rule: enable_thinking, default true
// when absent (an explicit null turns thinking off).
func enableThinkingOff(r *Request) bool {
	v, ok := r.ChatTemplateKwargs.Get("enable_thinking")
	return ok && !pylax.TruthyNode(v)
}

// thinkingOrEnableOff is the GLM-4.7 and Kimi K2 rule: thinking unless
// "thinking" or "enable_thinking" is given and neither is truthy.
func thinkingOrEnableOff(r *Request) bool {
	a, setA := r.kwargTruthy("thinking")
	b, setB := r.kwargTruthy("enable_thinking")
	return (setA || setB) && !a && !b
}

// qwen3Spec is vLLM's Qwen3Parser engine run with tool parsing skipped
// (its extract_reasoning): output starts in reasoning unless
// chat_template_kwargs.enable_thinking is false; "<think>" inside reasoning
// is dropped, "</think>" ends it and is dropped, "<tool_call>" ends it
// implicitly and stays as content; a "</think>" in content is dropped.
var (
	qwen3Spec = (&engineSpec{name: "qwen3", start: thinkStart, end: thinkEnd,
		toolOpeners: []string{toolCallStart}, disabled: enableThinkingOff}).init()
	seedOSSSpec = (&engineSpec{name: "seed_oss", start: "<seed:think>", end: "</seed:think>",
		toolOpeners: []string{"<seed:tool_call>"}, disabled: enableThinkingOff}).init()
	glm45Spec = (&engineSpec{name: "glm45", start: thinkStart, end: thinkEnd,
		toolOpeners: []string{toolCallStart}, reenter: true, stripTrailing: true, disabled: thinkingOrEnableOff}).init()
	kimiK2Spec = (&engineSpec{name: "kimi_k2", start: thinkStart, end: thinkEnd,
		toolOpeners: []string{"<|tool_calls_section_begin|>"}, stripTrailing: true, disabled: thinkingOrEnableOff}).init()
	minimaxM2Spec = (&engineSpec{name: "minimax_m2", start: thinkStart, end: thinkEnd,
		toolOpeners: []string{"<minimax:tool_call>"}, stripTrailing: true, disabled: func(*Request) bool { return false }}).init()
)

func engineFactory(spec *engineSpec) reasoningFactory {
	return func(_ Vocab, req *Request, _ []int) (reasoningMachine, error) {
		return &engineReasoning{spec: spec, disabled: spec.disabled(req)}, nil
	}
}

// engineReasoning is the machine of the ParserEngine families.
type engineReasoning struct {
	spec *engineSpec
	// disabled is set when thinking is off: all output is content.
	disabled bool
	// inContent is set while outside reasoning.
	inContent bool
	// trailingWS is reasoning whitespace held back: it is dropped if no
	// more reasoning follows (stripTrailing).
	trailingWS []byte
	scan       markerScan
}

// Push implements reasoningMachine.
func (e *engineReasoning) Push(text string) (reasoning, content string) {
	if e.disabled {
		return "", text
	}
	if e.scan.held == "" {
		// Most pushes carry no byte that starts a marker: they go out
		// whole, as the loop below would hand them out.
		if e.inContent && !mayHoldMarker(text, e.spec.contentMarkers) {
			return "", text
		}
		if !e.inContent && !e.spec.stripTrailing && !mayHoldMarker(text, e.spec.reasoningMarkers) {
			return text, ""
		}
	}
	// Joiners, not +=: a push carrying many markers would otherwise copy
	// the growing output once per marker; a push of one piece (most of a
	// stream) hands it out as is.
	var r, c joiner
	for {
		markers := e.spec.reasoningMarkers
		if e.inContent {
			markers = e.spec.contentMarkers
		}
		before, marker, rest := e.scan.next(text, markers)
		if e.inContent {
			c.add(before)
		} else {
			r.add(e.trimReasoning(before))
		}
		switch {
		case marker == "":
			return r.String(), c.String()
		case marker == e.spec.end:
			e.inContent = true
		case marker == e.spec.start:
			e.inContent = false // dropped in reasoning, re-enters from content
		default: // a tool opener
			e.inContent = true
			c.add(marker)
		}
		text = rest
	}
}

// trimReasoning holds back trailing whitespace of reasoning until more
// reasoning shows it was not trailing.
func (e *engineReasoning) trimReasoning(s string) string {
	if !e.spec.stripTrailing || s == "" {
		return s
	}
	n := pySpaceSuffix(s)
	if n == len(s) {
		e.trailingWS = append(e.trailingWS, s...)
		return ""
	}
	out := string(e.trailingWS) + s[:len(s)-n]
	e.trailingWS = append(e.trailingWS[:0], s[len(s)-n:]...)
	return out
}

// Finish implements reasoningMachine.
func (e *engineReasoning) Finish() (reasoning, content string) {
	held := e.scan.flush()
	if e.inContent {
		return "", held
	}
	return e.trimReasoning(held), ""
}

// Nulls implements reasoningMachine: with thinking disabled vLLM returns
// the output itself as content ("" stays ""), otherwise empty parts are null.
func (e *engineReasoning) Nulls() (reasoningNull, contentNull bool) {
	return true, !e.disabled
}

// codec saves and restores the state of a engineReasoning.
func (e *engineReasoning) codec(c *statecodec.Codec) {
	c.Bool(&e.disabled)
	c.Bool(&e.inContent)
	c.ByteSlice(&e.trailingWS)
	e.scan.codec(c)
}
