package parsers

import (
	"github.com/vrender/vrender/internal/statecodec"
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

const (
	hyBlockOpen  = "<tool_calls>"
	hyBlockClose = "</tool_calls>"
)

var hyMarkers = []string{hyBlockOpen, hyBlockClose, thinkStart, thinkEnd}

// hyPhase is where a Hunyuan machine is.
type hyPhase uint8

const (
	hyText    hyPhase = iota // outside blocks
	hyBlock                  // inside a block body
	hyCalled                 // calls returned: the rest is dropped
	hyNoCalls                // settled without calls: everything is content
)

// hunyuanA13B is the hunyuan_a13b tool machine.
type hunyuanA13B struct {
	phase hyPhase
	scan  markerScan
	// thinkOpen is set inside a <think> region awaiting its "</think>";
	// BlockInThink is set when the current block opened inside one.
	thinkOpen    bool
	blockInThink bool
	// held is text not yet certain, from the start of the earliest
	// unsettled block; BlockAt is where the open block starts in it.
	held    []byte
	blockAt int
	// body is the open block's body.
	body []byte
	// pending are valid-JSON blocks closed inside an open <think> region.
	pending []hyPending
	calls   bool
}

// hyPending is a block waiting for its think region to settle.
type hyPending struct {
	// at is where the block starts in Held.
	at      int
	verdict hyVerdict
}

// hyVerdict is what a JSON-valid block decides.
type hyVerdict struct {
	calls []ToolCallDelta
}

func newHunyuanA13B(Vocab, *Request) (toolMachine, error) { return &hunyuanA13B{}, nil }

// Push implements toolMachine.
func (h *hunyuanA13B) Push(text string) (string, []ToolCallDelta) {
	var out strings.Builder
	var calls []ToolCallDelta
	for text != "" {
		switch h.phase {
		case hyCalled:
			return out.String(), calls
		case hyNoCalls:
			out.WriteString(h.scan.flush())
			out.WriteString(text)
			return out.String(), calls
		}
		before, marker, rest := h.scan.next(text, hyMarkers)
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
func (h *hunyuanA13B) text(out *strings.Builder, s string) {
	switch {
	case h.phase == hyBlock:
		h.body = append(h.body, s...)
		h.held = append(h.held, s...)
	case len(h.pending) > 0:
		h.held = append(h.held, s...)
	case h.phase == hyText:
		out.WriteString(s)
	}
}

func (h *hunyuanA13B) marker(out *strings.Builder, m string, calls []ToolCallDelta) []ToolCallDelta {
	switch m {
	case thinkStart:
		h.thinkOpen = true
	case thinkEnd:
		if h.thinkOpen {
			h.thinkOpen = false
			// Every pending block ends before this region's end.
			h.dropPending(out)
		}
	case hyBlockOpen:
		if h.phase == hyText {
			h.phase = hyBlock
			h.blockAt = len(h.held)
			h.blockInThink = h.thinkOpen
			h.body = h.body[:0]
			h.held = append(h.held, m...)
			return calls
		}
	case hyBlockClose:
		if h.phase == hyBlock {
			h.held = append(h.held, m...)
			h.phase = hyText
			return h.closeBlock(out, calls)
		}
	}
	if h.phase == hyBlock || len(h.pending) > 0 {
		h.held = append(h.held, m...)
		if h.phase == hyBlock {
			h.body = append(h.body, m...)
		}
		return calls
	}
	out.WriteString(m)
	return calls
}

// closeBlock settles a block at its "</tool_calls>".
func (h *hunyuanA13B) closeBlock(out *strings.Builder, calls []ToolCallDelta) []ToolCallDelta {
	v, valid := hyJudge(string(h.body))
	h.body = h.body[:0]
	switch {
	case !valid:
	case h.blockInThink && h.thinkOpen:
		h.pending = append(h.pending, hyPending{at: h.blockAt, verdict: v})
		return calls
	default:
		// Not in think; earlier pending blocks are all in the same open
		// region only if it is still open, so none can be pending here.
		return h.settle(out, h.blockAt, v, calls)
	}
	if len(h.pending) == 0 {
		out.Write(h.held)
		h.held = h.held[:0]
	}
	return calls
}

// dropPending discards the pending blocks, releasing the text before the
// open block (if any) as content.
func (h *hunyuanA13B) dropPending(out *strings.Builder) {
	if len(h.pending) == 0 {
		return
	}
	h.pending = nil
	if h.phase == hyBlock {
		out.Write(h.held[:h.blockAt])
		h.held = append(h.held[:0], h.held[h.blockAt:]...)
		h.blockAt = 0
		return
	}
	out.Write(h.held)
	h.held = h.held[:0]
}

// settle applies the winner starting at at in Held.
func (h *hunyuanA13B) settle(out *strings.Builder, at int, v hyVerdict, calls []ToolCallDelta) []ToolCallDelta {
	if len(v.calls) == 0 {
		h.phase = hyNoCalls
		out.Write(h.held)
		h.held, h.pending = nil, nil
		return calls
	}
	h.phase, h.calls = hyCalled, true
	out.Write(h.held[:at])
	h.held, h.pending = nil, nil
	return append(calls, v.calls...)
}

// Finish implements toolMachine.
func (h *hunyuanA13B) Finish() (string, []ToolCallDelta) {
	var out strings.Builder
	held := h.scan.flush()
	switch h.phase {
	case hyCalled:
		return "", nil
	case hyNoCalls:
		return held, nil
	case hyBlock:
		h.held = append(h.held, held...)
	default:
		h.text(&out, held)
	}
	var calls []ToolCallDelta
	// An unclosed <think> makes no region: pending blocks count, in order.
	if len(h.pending) > 0 {
		p := h.pending[0]
		calls = h.settle(&out, p.at, p.verdict, nil)
	}
	if h.phase != hyCalled {
		out.Write(h.held)
		h.held = nil
		h.phase = hyNoCalls
	}
	return out.String(), calls
}

// Called implements toolMachine.
func (h *hunyuanA13B) Called() bool { return h.calls }

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
	calls, ok := l.namedCalls()
	if !ok {
		return hyVerdict{}, true
	}
	return hyVerdict{calls: calls}, true
}

// codec saves and restores the state of a hunyuanA13B.
func (h *hunyuanA13B) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &h.phase, 4)
	h.scan.codec(c)
	c.Bool(&h.thinkOpen)
	c.Bool(&h.blockInThink)
	c.ByteSlice(&h.held)
	c.Int(&h.blockAt)
	c.ByteSlice(&h.body)
	statecodec.Slice(c, &h.pending, func(c *statecodec.Codec, v *hyPending) { v.codec(c) })
	c.Bool(&h.calls)
	c.Within(len(h.held), h.blockAt)
	for _, p := range h.pending {
		c.Within(len(h.held), p.at)
	}
}

// codec saves and restores the state of a hyPending.
func (h *hyPending) codec(c *statecodec.Codec) {
	c.Int(&h.at)
	h.verdict.codec(c)
}

// codec saves and restores the state of a hyVerdict.
func (h *hyVerdict) codec(c *statecodec.Codec) {
	statecodec.Slice(c, &h.calls, codecCallDelta)
}
