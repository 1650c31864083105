package parsers

import (
	"bytes"
	"github.com/vrender/vrender/internal/statecodec"
	"math"
	"unicode/utf8"
)

// Granite 3 tool calls, as vLLM's GraniteToolParser.extract_tool_calls:
// the output, stripped (Python str.strip), may open with "<|tool_call|>",
// then directly "<tool_call>", then more whitespace; what follows must be
// one JSON list (to the end, trailing whitespace aside) whose elements are
// objects with a string "name" and an "arguments" value, re-serialised
// with json.dumps. Then content is null; anything else gives no calls and
// the whole output as content. The machine decides at the first
// non-whitespace character after the optional markers: plain text streams
// through at once, a list streams its calls and holds the raw text back
// in case the list fails.

const graniteBotToken = "<|tool_call|>"

// granitePhase is where a granite machine is.
type granitePhase uint8

const (
	granitePre    granitePhase = iota // before the first significant character
	graniteList                       // inside the list
	graniteTrail                      // after the list: only whitespace allowed
	granitePlain                      // not a call: everything is content
	graniteFailed                     // the list failed: everything is content
)

// granite is the granite tool-call machine.
type granite struct {
	phase granitePhase
	// Lead is 0 before any marker, 1 right after "<|tool_call|>" and 2
	// once only whitespace and the list may follow.
	leadState int
	// raw is the output so far (the content if no call survives); Pos is
	// how much of it the pre-list and trailing checks have read.
	raw  []byte
	pos  int
	list callList
}

func newGranite(Vocab, *Request) (toolMachine, error) {
	return &granite{list: newCallList(0, []string{"arguments"}, false)}, nil
}

// Push implements toolMachine.
func (g *granite) Push(text string) (string, []ToolCallDelta) {
	switch g.phase {
	case granitePlain, graniteFailed:
		return text, nil
	}
	g.raw = append(g.raw, text...)
	var calls []ToolCallDelta
	if g.phase == granitePre {
		if !g.lead() {
			return g.release(granitePlain), nil
		}
		if g.phase == granitePre {
			return "", nil
		}
		// The list starts at Pos; feed it the rest of Raw.
		text = string(g.raw[g.pos:])
	}
	if g.phase == graniteList {
		n, out := g.list.feed(text, calls)
		calls = out
		if g.list.failed {
			return g.release(graniteFailed), calls
		}
		if g.list.state != clDone {
			return "", calls
		}
		g.phase = graniteTrail
		g.pos = len(g.raw) - (len(text) - n)
	}
	if !g.trail(false) {
		return g.release(graniteFailed), calls
	}
	return "", calls
}

// lead reads the whitespace and markers before the list; it returns false
// once the output cannot be a call list.
func (g *granite) lead() bool {
	for g.pos < len(g.raw) {
		rest := g.raw[g.pos:]
		if g.leadState == 0 {
			if bytes.HasPrefix(rest, []byte(graniteBotToken)) {
				g.pos += len(graniteBotToken)
				g.leadState = 1
				continue
			}
		}
		if g.leadState <= 1 && bytes.HasPrefix(rest, []byte(toolCallStart)) {
			g.pos += len(toolCallStart)
			g.leadState = 2
			continue
		}
		if g.leadState == 0 && isPrefixOf(rest, graniteBotToken) || g.leadState <= 1 && isPrefixOf(rest, toolCallStart) {
			return true
		}
		if rest[0] == '[' {
			g.phase = graniteList
			return true
		}
		if !utf8.FullRune(rest) {
			return true
		}
		r, size := utf8.DecodeRune(rest)
		if !pyIsSpace(r) {
			return false
		}
		g.pos += size
		if g.leadState == 1 {
			g.leadState = 2
		}
	}
	return true
}

// isPrefixOf reports whether b is a prefix of marker.
func isPrefixOf(b []byte, marker string) bool {
	return len(b) <= len(marker) && marker[:len(b)] == string(b)
}

// trail checks that only whitespace follows the list; final treats an
// incomplete rune as text.
func (g *granite) trail(final bool) bool {
	for g.pos < len(g.raw) {
		rest := g.raw[g.pos:]
		if !final && !utf8.FullRune(rest) {
			return true
		}
		r, size := utf8.DecodeRune(rest)
		if !pyIsSpace(r) {
			return false
		}
		g.pos += size
	}
	return true
}

// release switches to a passthrough phase and hands out the held text.
func (g *granite) release(p granitePhase) string {
	g.phase = p
	out := string(g.raw)
	g.raw = nil
	return out
}

// Finish implements toolMachine.
func (g *granite) Finish() (string, []ToolCallDelta) {
	switch g.phase {
	case granitePre:
		return g.release(granitePlain), nil
	case graniteList:
		g.list.end()
		return g.release(graniteFailed), nil
	case graniteTrail:
		if !g.trail(true) {
			return g.release(graniteFailed), nil
		}
		g.raw = nil
	}
	return "", nil
}

// Called implements toolMachine.
func (g *granite) Called() bool { return g.phase == graniteTrail }

// codec saves and restores the state of a granite.
func (g *granite) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &g.phase, 5)
	c.Int(&g.leadState)
	c.ByteSlice(&g.raw)
	c.Int(&g.pos)
	g.list.codec(c)
	c.Within(2, g.leadState)
	// Every use of pos but one is guarded by pos < len(raw); raw is
	// released once the answer is decided.
	c.Within(math.MaxInt, g.pos)
	if g.phase == granitePre {
		c.Within(len(g.raw), g.pos)
	}
}
