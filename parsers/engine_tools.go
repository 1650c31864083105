package parsers

import (
	"strings"
	"unicode/utf8"

	"github.com/vrender/vrender/internal/statecodec"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/parsers/pyjson"
	"github.com/vrender/vrender/protocol"
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

// newEngineMode is the mode req puts an engine-grammar parser in.
func newEngineMode(req *Request) engineMode {
	if choice, _, _ := req.Choice(); choice != choiceNone {
		return engineAuto
	}
	if len(req.Tools) > 0 {
		return engineNoneQuiet
	}
	return engineNoneOpen
}

// engineCalls is the grammar-independent half of an engine tool machine:
// the request's mode and tools, the content gate, the calls counted and
// emitted, and one push's output. A family embeds it and adds its half:
// terminals, states and their transitions, and the argument reader.
type engineCalls struct {
	mode  engineMode
	tools []protocol.Tool
	gate  engineGate
	// named is set once a call counts (vLLM's tools_called); nCalls
	// counts the calls emitted.
	named  bool
	nCalls int

	// out and calls collect one push's results.
	out   joiner
	calls deltaSink
	// markers are the grammar's terminals and the special tokens to drop
	// (engine_drop.go).
	markers []string
}

// init sets e up for req, with the grammar's terminals.
func (e *engineCalls) init(v Vocab, req *Request, terminals []string) {
	e.mode, e.tools = newEngineMode(req), req.Tools
	e.markers = engineTerminals(v, terminals)
	e.gate.auto = e.mode == engineAuto
}

// setStreaming implements streamingMachine.
func (e *engineCalls) setStreaming() { e.gate.streaming = true }

// Called implements toolMachine.
func (e *engineCalls) Called() bool { return e.mode == engineAuto && e.named }

// ContentNull reports whether an empty content is null: with tool_choice
// "none" vLLM's engine path returns its own content, None when empty.
func (e *engineCalls) ContentNull() (null, decided bool) {
	return e.mode != engineAuto, e.mode != engineAuto
}

// prepend puts a caller's deltas before the push's (callAppender).
func (e *engineCalls) prepend(calls []ToolCallDelta) {
	e.calls.calls = append(calls, e.calls.calls...)
}

// take hands out one push's results.
func (e *engineCalls) take() (string, []ToolCallDelta) {
	out, calls := e.out.String(), e.calls.take()
	e.out.Reset()
	return out, calls
}

// content takes text outside calls.
func (e *engineCalls) content(s string) {
	if e.mode == engineNoneQuiet {
		e.out.add(s)
		return
	}
	e.gate.content(&e.out, s)
}

// opened is a call opener: the text before the first call ends here.
func (e *engineCalls) opened() {
	if e.mode != engineNoneQuiet {
		e.gate.toolStart()
	}
}

// finishContent settles the content at the end of the output.
func (e *engineCalls) finishContent() {
	if e.mode != engineNoneQuiet {
		e.gate.finish(&e.out)
	}
}

// knownTool is validate_tool_names: without tools any name passes.
func (e *engineCalls) knownTool(name string) bool {
	if len(e.tools) == 0 {
		return true
	}
	for _, t := range e.tools {
		if t.Function.Name == name {
			return true
		}
	}
	return false
}

// name counts a call with a valid name: the content settles on the text
// before the first call, and in auto mode the call goes out as call
// index.
func (e *engineCalls) name(name string) (index int, emit bool) {
	if !e.named {
		e.named = true
		if e.mode != engineNoneQuiet {
			e.gate.called(&e.out)
		}
	}
	if e.mode != engineAuto {
		return 0, false
	}
	index = e.nCalls
	e.nCalls++
	e.calls.add(ToolCallDelta{Index: index, ID: newToolCallID(), Type: "function", Name: name})
	return index, true
}

// argsObject writes a call's arguments as the engine re-serialises its
// parameters: a JSON object in the order they closed, a repeated key
// keeping its first value (vLLM's dict keeps the first position with the
// last value; docs/compatibility.md), "{}" for none.
type argsObject struct {
	n    int
	seen map[string]bool
}

// key is the text before key's value ("{" or ", ", the key, ": "), or
// false for a key already written.
func (a *argsObject) key(key string) (string, bool) {
	if a.seen[key] {
		return "", false
	}
	if a.seen == nil {
		a.seen = map[string]bool{}
	}
	a.seen[key] = true
	sep := ", "
	if a.n == 0 {
		sep = "{"
	}
	a.n++
	return sep + pyjson.Quote(key) + ": ", true
}

// end closes the object.
func (a *argsObject) end() string {
	if a.n == 0 {
		return "{}"
	}
	return "}"
}

// engineCall is the call an XML engine grammar is reading (its family
// keeps the parameter reader beside it).
type engineCall struct {
	rawName  []byte
	nameDone bool
	emitted  bool
	closed   bool
	index    int
	props    map[string]*wire.Node
	args     argsObject
}

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

// codec saves and restores the state of an engineCall; params is the
// family's parameter reader, saved between the call's fields and its
// arguments.
func (e *engineCall) codec(c *statecodec.Codec, params stateMachine) {
	c.ByteSlice(&e.rawName)
	c.Bool(&e.nameDone)
	c.Bool(&e.emitted)
	c.Bool(&e.closed)
	c.Int(&e.index)
	statecodec.Map(c, &e.props, (*statecodec.Codec).String, codecSchema)
	params.codec(c)
	e.args.codec(c)
}

// codec saves and restores the state of an argsObject.
func (a *argsObject) codec(c *statecodec.Codec) {
	c.Int(&a.n)
	statecodec.Map(c, &a.seen, (*statecodec.Codec).String, (*statecodec.Codec).Bool)
}
