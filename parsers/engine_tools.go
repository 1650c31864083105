package parsers

import (
	"strings"
	"unicode/utf8"

	"github.com/vrender/vrender/internal/statecodec"
)

// What vLLM's engine-grammar tool parsers (the declarative ParserEngine:
// qwen3_coder, minimax_m2, glm45/47, kimi_k2, seed_oss through qwen3_coder)
// share whatever their grammar: how the request uses the parser, and which
// content the engine returns beside the calls.

// engineMode is how a request uses an engine-grammar tool parser.
type engineMode uint8

const (
	engineAuto      engineMode = iota // tool calls are parsed and returned
	engineNoneQuiet                   // tool_choice "none" with tools: calls suppressed
	engineNoneOpen                    // no tools: calls parsed, then dropped
)

// engineGate decides what content vLLM returns, emitting it as soon as it is
// the same whichever way the output ends. With calls the answer is the
// stripped text before the first call ("E"); without, in auto mode, it is
// the raw text ("R"), in the no-tools "none" mode E unstripped. Until a
// difference appears (leading whitespace, a dropped "</think>", a call
// opener), E and R agree and stream, minus trailing whitespace; after it,
// text is held until a call is named or the output ends.
type engineGate struct {
	auto bool
	// streaming is set by SetStreaming (configuration, not state).
	streaming bool
	// decided is set once a call is named; later content is dropped.
	decided  bool
	diverged bool
	// lead is set while the only divergence is leading whitespace (E is
	// then R, and differs from it only by the strip a call would do).
	lead bool
	// any is set once content went out.
	any bool
	// trail is whitespace held while not diverged.
	trail []byte
	// toolSeen is set at the first call opener: E stops there.
	toolSeen bool
	// e, R and T (text after the first call) since the divergence.
	e, r, t []byte
}

func (g *engineGate) diverge() {
	if g.diverged {
		return
	}
	g.diverged = true
	g.e = append(g.e, g.trail...)
	if g.auto {
		g.r = append(g.r, g.trail...)
	}
	g.trail = g.trail[:0]
}

// raw takes every piece of text after the semantic handlers saw it.
func (g *engineGate) raw(s string) {
	if g.auto && g.diverged && !g.decided {
		g.r = append(g.r, s...)
	}
}

func (g *engineGate) content(out *joiner, s string) {
	switch {
	case g.decided:
	case g.toolSeen:
		g.t = append(g.t, s...)
	case g.diverged:
		g.e = append(g.e, s...)
		if g.lead && g.streaming && len(g.e) > engineStreamHold {
			g.commit(out)
		}
	default:
		g.safe(out, s)
	}
}

// safe streams text while E and R agree, holding trailing whitespace.
func (g *engineGate) safe(out *joiner, s string) {
	cut := len(strings.TrimRightFunc(s, pyIsSpace))
	if cut == 0 {
		g.trail = append(g.trail, s...)
		return
	}
	if !g.any {
		if r, _ := utf8.DecodeRuneInString(s); len(g.trail) > 0 || pyIsSpace(r) {
			// Leading whitespace: stripped if a call follows.
			g.diverge()
			g.lead = true
			g.e = append(g.e, s...)
			return
		}
	}
	out.addBytes(g.trail)
	out.add(s[:cut])
	g.trail = append(g.trail[:0], s[cut:]...)
	g.any = true
}

func (g *engineGate) thinkEnd() {
	if g.auto && !g.decided {
		g.diverge() // R keeps it, E drops it
		g.lead = false
	}
}

// engineStreamHold is how much text after leading whitespace a stream holds
// while it cannot tell whether a call follows (then vLLM strips the
// whitespace) or not (then it keeps it): enough for the usual sentence
// before a call, and a bound on what a checkpoint carries.
const engineStreamHold = 512

// commit settles a stream's leading-whitespace divergence on R: the text
// goes out with its whitespace, as the answer without calls has it. A
// call after it then keeps the whitespace that vLLM's non-streaming
// answer strips (docs/compatibility.md); holding on would make the
// stream silent and its checkpoints grow with the answer.
func (g *engineGate) commit(out *joiner) {
	cut := len(strings.TrimRightFunc(string(g.e), pyIsSpace))
	out.addBytes(g.e[:cut])
	g.trail = append(g.trail[:0], g.e[cut:]...)
	g.any, g.diverged, g.lead = true, false, false
	g.e, g.r = nil, nil
}

func (g *engineGate) toolStart() {
	if g.toolSeen || g.decided {
		return
	}
	g.diverge()
	g.lead = false
	g.toolSeen = true
}

// called settles on E, stripped.
func (g *engineGate) called(out *joiner) {
	g.diverge()
	g.decided = true
	e := strings.TrimRightFunc(string(g.e), pyIsSpace)
	if !g.any {
		e = strings.TrimLeftFunc(e, pyIsSpace)
	}
	out.add(e)
	g.e, g.r, g.t = nil, nil, nil
}

// finish settles without calls.
func (g *engineGate) finish(out *joiner) {
	switch {
	case g.decided:
	case !g.diverged:
		out.addBytes(g.trail)
	case g.auto:
		out.addBytes(g.r)
	case !g.toolSeen || g.any:
		// With text already out, vLLM's reordering (text after a nameless
		// call first) cannot be reproduced; E is kept.
		out.addBytes(g.e)
	default:
		s := string(g.t) + string(g.e)
		if strings.TrimFunc(s, pyIsSpace) != "" {
			out.add(s)
		}
	}
	g.trail, g.e, g.r, g.t = nil, nil, nil, nil
}

// codec saves and restores the state of an engineGate.
func (g *engineGate) codec(c *statecodec.Codec) {
	c.Bool(&g.auto)
	c.Bool(&g.decided)
	c.Bool(&g.diverged)
	c.Bool(&g.lead)
	c.Bool(&g.any)
	c.ByteSlice(&g.trail)
	c.Bool(&g.toolSeen)
	c.ByteSlice(&g.e)
	c.ByteSlice(&g.r)
	c.ByteSlice(&g.t)
}
