package parsers

import (
	"strings"

	"github.com/vrender/vrender/parsers/pyjson"
)

// Hunyuan-A13B tool calls, as vLLM's HunyuanA13BToolParser
// .extract_tool_calls and the chat server around it. The winner is the
// first <tool_calls>(.*?)</tool_calls> match that is not strictly inside a
// <think>(.*?)</think> region and whose stripped body is valid JSON. It
// yields calls when it is a list and no element raises: elements that are
// not objects with "name" and "arguments" are skipped, a non-string name
// or arguments that are neither an object (json.dumps'd) nor a string
// (taken as is) raise. With calls, content is the text before the winner
// (null when blank) and the rest is dropped; without (no winner, not a
// list, nothing kept, an error) the server returns the content unchanged.
//
// Calls go out when the winner's "</tool_calls>" arrives, since one bad
// element voids them all. Text is streamed until a block opens, and from
// then held until the block is settled; a block closed inside a still-open
// <think> region is settled only by that region's "</think>" (skipped) or
// the end of the output (then no region exists and it counts).

func init() {
	registerTool("hunyuan_a13b", ToolInfo{New: newHunyuanA13B, SupportsRequiredAndNamed: true})
}

const (
	hyBlockOpen  = "<tool_calls>"
	hyBlockClose = "</tool_calls>"
	hyThinkOpen  = "<think>"
	hyThinkClose = "</think>"
)

var hyMarkers = []string{hyBlockOpen, hyBlockClose, hyThinkOpen, hyThinkClose}

// hyPhase is where a Hunyuan machine is.
type hyPhase uint8

const (
	hyText    hyPhase = iota // outside blocks
	hyBlock                  // inside a block body
	hyCalled                 // calls returned: the rest is dropped
	hyNoCalls                // settled without calls: everything is content
)

// HunyuanA13B is the hunyuan_a13b tool machine.
type HunyuanA13B struct {
	Phase hyPhase
	Scan  markerScan
	// ThinkOpen is set inside a <think> region awaiting its "</think>";
	// BlockInThink is set when the current block opened inside one.
	ThinkOpen    bool
	BlockInThink bool
	// Held is text not yet certain, from the start of the earliest
	// unsettled block; BlockAt is where the open block starts in it.
	Held    []byte
	BlockAt int
	// Body is the open block's body.
	Body []byte
	// Pending are valid-JSON blocks closed inside an open <think> region.
	Pending []hyPending
	Calls   bool
}

// hyPending is a block waiting for its think region to settle.
type hyPending struct {
	// At is where the block starts in Held.
	At      int
	Verdict hyVerdict
}

// hyVerdict is what a JSON-valid block decides.
type hyVerdict struct {
	Calls []ToolCallDelta
}

func newHunyuanA13B(Vocab, *Request) (ToolMachine, error) { return &HunyuanA13B{}, nil }

// Push implements ToolMachine.
func (h *HunyuanA13B) Push(text string) (string, []ToolCallDelta) {
	var out strings.Builder
	var calls []ToolCallDelta
	for text != "" {
		switch h.Phase {
		case hyCalled:
			return out.String(), calls
		case hyNoCalls:
			out.WriteString(h.Scan.flush())
			out.WriteString(text)
			return out.String(), calls
		}
		before, marker, rest := h.Scan.next(text, hyMarkers)
		h.text(&out, before)
		if marker == "" {
			break
		}
		calls = h.marker(&out, marker, calls)
		text = rest
	}
	return out.String(), calls
}

// text takes plain text of the current phase.
func (h *HunyuanA13B) text(out *strings.Builder, s string) {
	switch {
	case h.Phase == hyBlock:
		h.Body = append(h.Body, s...)
		h.Held = append(h.Held, s...)
	case len(h.Pending) > 0:
		h.Held = append(h.Held, s...)
	case h.Phase == hyText:
		out.WriteString(s)
	}
}

func (h *HunyuanA13B) marker(out *strings.Builder, m string, calls []ToolCallDelta) []ToolCallDelta {
	switch m {
	case hyThinkOpen:
		h.ThinkOpen = true
	case hyThinkClose:
		if h.ThinkOpen {
			h.ThinkOpen = false
			// Every pending block ends before this region's end.
			h.dropPending(out)
		}
	case hyBlockOpen:
		if h.Phase == hyText {
			h.Phase = hyBlock
			h.BlockAt = len(h.Held)
			h.BlockInThink = h.ThinkOpen
			h.Body = h.Body[:0]
			h.Held = append(h.Held, m...)
			return calls
		}
	case hyBlockClose:
		if h.Phase == hyBlock {
			h.Held = append(h.Held, m...)
			h.Phase = hyText
			return h.closeBlock(out, calls)
		}
	}
	if h.Phase == hyBlock || len(h.Pending) > 0 {
		h.Held = append(h.Held, m...)
		if h.Phase == hyBlock {
			h.Body = append(h.Body, m...)
		}
		return calls
	}
	out.WriteString(m)
	return calls
}

// closeBlock settles a block at its "</tool_calls>".
func (h *HunyuanA13B) closeBlock(out *strings.Builder, calls []ToolCallDelta) []ToolCallDelta {
	v, valid := hyJudge(string(h.Body))
	h.Body = h.Body[:0]
	switch {
	case !valid:
	case h.BlockInThink && h.ThinkOpen:
		h.Pending = append(h.Pending, hyPending{At: h.BlockAt, Verdict: v})
		return calls
	default:
		// Not in think; earlier pending blocks are all in the same open
		// region only if it is still open, so none can be pending here.
		return h.settle(out, h.BlockAt, v, calls)
	}
	if len(h.Pending) == 0 {
		out.Write(h.Held)
		h.Held = h.Held[:0]
	}
	return calls
}

// dropPending discards the pending blocks, releasing the text before the
// open block (if any) as content.
func (h *HunyuanA13B) dropPending(out *strings.Builder) {
	if len(h.Pending) == 0 {
		return
	}
	h.Pending = nil
	if h.Phase == hyBlock {
		out.Write(h.Held[:h.BlockAt])
		h.Held = append(h.Held[:0], h.Held[h.BlockAt:]...)
		h.BlockAt = 0
		return
	}
	out.Write(h.Held)
	h.Held = h.Held[:0]
}

// settle applies the winner starting at at in Held.
func (h *HunyuanA13B) settle(out *strings.Builder, at int, v hyVerdict, calls []ToolCallDelta) []ToolCallDelta {
	if len(v.Calls) == 0 {
		h.Phase = hyNoCalls
		out.Write(h.Held)
		h.Held, h.Pending = nil, nil
		return calls
	}
	h.Phase, h.Calls = hyCalled, true
	out.Write(h.Held[:at])
	h.Held, h.Pending = nil, nil
	return append(calls, v.Calls...)
}

// Finish implements ToolMachine.
func (h *HunyuanA13B) Finish() (string, []ToolCallDelta) {
	var out strings.Builder
	held := h.Scan.flush()
	switch h.Phase {
	case hyCalled:
		return "", nil
	case hyNoCalls:
		return held, nil
	case hyBlock:
		h.Held = append(h.Held, held...)
	default:
		h.text(&out, held)
	}
	var calls []ToolCallDelta
	// An unclosed <think> makes no region: pending blocks count, in order.
	if len(h.Pending) > 0 {
		p := h.Pending[0]
		calls = h.settle(&out, p.At, p.Verdict, nil)
	}
	if h.Phase != hyCalled {
		out.Write(h.Held)
		h.Held = nil
		h.Phase = hyNoCalls
	}
	return out.String(), calls
}

// Called implements ToolMachine.
func (h *HunyuanA13B) Called() bool { return h.Calls }

// hyJudge reads a block body: valid reports whether its stripped text is
// JSON; the verdict carries calls only for a list whose elements all pass.
func hyJudge(body string) (hyVerdict, bool) {
	canon, err := pyjson.Canonical(pyStrip(body))
	if err != nil {
		return hyVerdict{}, false
	}
	if canon[0] != '[' {
		return hyVerdict{}, true
	}
	var l jsonList
	l.feed(canon)
	if !l.done() {
		return hyVerdict{}, true
	}
	var calls []ToolCallDelta
	for _, e := range l.Elems {
		if !e.Object {
			continue
		}
		nameCanon, hasName := e.Fields["name"]
		args, hasArgs := e.Fields["arguments"]
		if !hasName || !hasArgs {
			continue
		}
		name, ok := decodeString(nameCanon)
		if !ok {
			return hyVerdict{}, true
		}
		var a string
		switch {
		case len(args) > 0 && args[0] == '{':
			a = string(args)
		case len(args) > 0 && args[0] == '"':
			a, _ = decodeString(args)
		default:
			return hyVerdict{}, true
		}
		calls = append(calls, ToolCallDelta{Index: len(calls), ID: newToolCallID(), Type: "function", Name: name, Arguments: a})
	}
	return hyVerdict{Calls: calls}, true
}
