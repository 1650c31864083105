package parsers

import "strings"

// A one-token stream inside a tool call makes a tool-call delta on nearly
// every push, and a fresh slice for each would be an allocation per token.
// callArena carves the pushes' delta slices out of shared blocks instead:
// each slice handed out is capped at its length, so it never overlaps
// another and a caller appending to it gets a copy. Deltas stay the
// caller's to keep, as with fresh slices.

// arenaBlock is how many deltas one block holds.
const arenaBlock = 32

type callArena struct {
	// buf's length is the part of its block already handed out.
	buf []ToolCallDelta
}

// free is the unused rest of the current block (a new block when it is
// used up), for a machine to append a push's deltas to.
func (a *callArena) free() []ToolCallDelta {
	if len(a.buf) == cap(a.buf) {
		a.buf = make([]ToolCallDelta, 0, arenaBlock)
	}
	return a.buf[len(a.buf):len(a.buf):cap(a.buf)]
}

// commit takes calls, which a machine appended to free(): when they stayed
// in the block, that part is marked handed out and the slice capped.
// Otherwise (none, or more than fitted, so append moved them) the block
// is untouched.
func (a *callArena) commit(calls []ToolCallDelta) []ToolCallDelta {
	if len(calls) == 0 {
		return nil
	}
	n := len(a.buf)
	if cap(a.buf) > n && &a.buf[:n+1][n] == &calls[0] {
		a.buf = a.buf[:n+len(calls)]
		return calls[:len(calls):len(calls)]
	}
	return calls
}

// textArena makes the short strings a stream joins on the way out (an
// escape's held backslash and the push after it) without an allocation
// each: they are cut from a strings.Builder's buffer, which the Builder
// never writes again once String has exposed it (it grows into a new
// buffer), so every string handed out stays as it was.
type textArena struct {
	b strings.Builder
	// lastIn and lastOut memoise escaped: code arguments repeat the
	// token after a split escape ("nx" after ")\\") line after line.
	lastIn, lastOut string
}

// escaped returns a backslash joined to s.
func (t *textArena) escaped(s string) string {
	if t.lastOut != "" && t.lastIn == s {
		return t.lastOut
	}
	t.lastIn, t.lastOut = s, t.join("\\", s)
	return t.lastOut
}

// textArenaBlock is the size of one arena buffer; longer joins allocate.
const textArenaBlock = 2048

// join returns a+b.
func (t *textArena) join(a, b string) string {
	n := len(a) + len(b)
	if n > textArenaBlock/8 {
		return a + b
	}
	if t.b.Cap()-t.b.Len() < n {
		t.b = strings.Builder{}
		t.b.Grow(textArenaBlock)
	}
	start := t.b.Len()
	t.b.WriteString(a)
	t.b.WriteString(b)
	return t.b.String()[start:]
}
