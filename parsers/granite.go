package parsers

import (
	"bytes"
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

func init() {
	registerTool("granite", ToolInfo{New: newGranite, SupportsRequiredAndNamed: true})
}

const (
	graniteBotToken  = "<|tool_call|>"
	graniteBotString = "<tool_call>"
)

// granitePhase is where a Granite machine is.
type granitePhase uint8

const (
	granitePre    granitePhase = iota // before the first significant character
	graniteList                       // inside the list
	graniteTrail                      // after the list: only whitespace allowed
	granitePlain                      // not a call: everything is content
	graniteFailed                     // the list failed: everything is content
)

// Granite is the granite tool-call machine.
type Granite struct {
	Phase granitePhase
	// Lead is 0 before any marker, 1 right after "<|tool_call|>" and 2
	// once only whitespace and the list may follow.
	Lead int
	// Raw is the output so far (the content if no call survives); Pos is
	// how much of it the pre-list and trailing checks have read.
	Raw  []byte
	Pos  int
	List callList
}

func newGranite(Vocab, *Request) (ToolMachine, error) {
	return &Granite{List: newCallList(0, []string{"arguments"}, false)}, nil
}

// Push implements ToolMachine.
func (g *Granite) Push(text string) (string, []ToolCallDelta) {
	switch g.Phase {
	case granitePlain, graniteFailed:
		return text, nil
	}
	g.Raw = append(g.Raw, text...)
	var calls []ToolCallDelta
	if g.Phase == granitePre {
		if !g.lead() {
			return g.release(granitePlain), nil
		}
		if g.Phase == granitePre {
			return "", nil
		}
		// The list starts at Pos; feed it the rest of Raw.
		text = string(g.Raw[g.Pos:])
	}
	if g.Phase == graniteList {
		n, out := g.List.feed(text, calls)
		calls = out
		if g.List.Failed {
			return g.release(graniteFailed), calls
		}
		if g.List.State != clDone {
			return "", calls
		}
		g.Phase = graniteTrail
		g.Pos = len(g.Raw) - (len(text) - n)
	}
	if !g.trail(false) {
		return g.release(graniteFailed), calls
	}
	return "", calls
}

// lead reads the whitespace and markers before the list; it returns false
// once the output cannot be a call list.
func (g *Granite) lead() bool {
	for g.Pos < len(g.Raw) {
		rest := g.Raw[g.Pos:]
		if g.Lead == 0 {
			if bytes.HasPrefix(rest, []byte(graniteBotToken)) {
				g.Pos += len(graniteBotToken)
				g.Lead = 1
				continue
			}
		}
		if g.Lead <= 1 && bytes.HasPrefix(rest, []byte(graniteBotString)) {
			g.Pos += len(graniteBotString)
			g.Lead = 2
			continue
		}
		if g.Lead == 0 && isPrefixOf(rest, graniteBotToken) || g.Lead <= 1 && isPrefixOf(rest, graniteBotString) {
			return true
		}
		if rest[0] == '[' {
			g.Phase = graniteList
			return true
		}
		if !utf8.FullRune(rest) {
			return true
		}
		r, size := utf8.DecodeRune(rest)
		if !pyIsSpace(r) {
			return false
		}
		g.Pos += size
		if g.Lead == 1 {
			g.Lead = 2
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
func (g *Granite) trail(final bool) bool {
	for g.Pos < len(g.Raw) {
		rest := g.Raw[g.Pos:]
		if !final && !utf8.FullRune(rest) {
			return true
		}
		r, size := utf8.DecodeRune(rest)
		if !pyIsSpace(r) {
			return false
		}
		g.Pos += size
	}
	return true
}

// release switches to a passthrough phase and hands out the held text.
func (g *Granite) release(p granitePhase) string {
	g.Phase = p
	out := string(g.Raw)
	g.Raw = nil
	return out
}

// Finish implements ToolMachine.
func (g *Granite) Finish() (string, []ToolCallDelta) {
	switch g.Phase {
	case granitePre:
		return g.release(granitePlain), nil
	case graniteList:
		g.List.end()
		return g.release(graniteFailed), nil
	case graniteTrail:
		if !g.trail(true) {
			return g.release(graniteFailed), nil
		}
		g.Raw = nil
	}
	return "", nil
}

// Called implements ToolMachine.
func (g *Granite) Called() bool { return g.Phase == graniteTrail }
