package parsers

import (
	"strings"

	"github.com/vrender/vrender/internal/statecodec"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/parsers/pyjson"
)

// GLM-4.5/4.7 tool calls, as vLLM's Glm47MoeModelToolParser (registered as
// both "glm45" and "glm47"): a ParserEngine adapter running the glm47_moe
// grammar from the content state (extract_tool_calls_from_content):
//
//	<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>…</tool_call>
//
// "<think>" in content opens a reasoning block that is not content,
// "</think>" is dropped, and a call ends back in content. The name is the
// stripped text before the first "<arg_key>" and must be one of the
// request's tools (any name when it has none). The arguments are the
// "<arg_key>K</arg_key>\s*<arg_value>V</arg_value>" pairs (key stripped,
// value raw), as a JSON object whose values are coerced by the tool's
// schema (schema_coerce.go). With calls the content is the text before
// the first call, stripped; without, the output unchanged (the engine
// rules every engine-grammar family shares, engineGate in engine_tools.go).
//
// Known deviations (pathological outputs): a repeated key keeps its first
// value (Python keeps the first position with the last value); a call
// whose name can only come from json.loads of its arguments is dropped;
// special tokens outside the grammar are not dropped; without tools
// (tool_choice "none") vLLM puts the text after a nameless call before
// the text before it, which this machine reproduces only while nothing
// but whitespace has been streamed (the engineGate limitation).

const (
	glmArgKeyOn  = "<arg_key>"
	glmArgKeyOff = "</arg_key>"
	glmArgValOn  = "<arg_value>"
	glmArgValOff = "</arg_value>"
)

var glmMarkers = []string{thinkStart, thinkEnd, toolCallStart, toolCallEnd, glmArgKeyOn, glmArgKeyOff, glmArgValOn, glmArgValOff}

// glmState is the grammar's parser state.
type glmState uint8

const (
	glmContent glmState = iota
	glmReasoning
	glmName
	glmArgs
)

// glm47 is the glm45 / glm47 tool machine.
type glm47 struct {
	engineCalls
	state glmState
	scan  markerScan
	// started is set once a call opened.
	started bool
	call    glmCall
}

// glmCall is the call being read.
type glmCall struct {
	rawName []byte
	// resolved is set once the name is settled (Valid when it names a
	// call); Emit when the call goes out.
	resolved, valid, emit, closed bool
	hasArgs                       bool
	index                         int
	props                         map[string]*wire.Node
	pairs                         glmPairs
	args                          argsObject
	// raw keeps the argument text while the name may still come from it.
	raw  []byte
	keep bool
}

func newGLM47(v Vocab, req *Request) (toolMachine, error) {
	g := &glm47{}
	g.init(v, req, glmMarkers)
	return g, nil
}

// Push implements toolMachine.
func (g *glm47) Push(text string) (string, []ToolCallDelta) {
	for {
		before, marker, rest := g.scan.next(text, orTerminals(g.markers, glmMarkers))
		g.text(before)
		if marker == "" {
			break
		}
		g.terminal(marker)
		text = rest
	}
	return g.take()
}

// pushAppend implements callAppender: the push's deltas go after calls.
func (g *glm47) pushAppend(text string, calls []ToolCallDelta) (string, []ToolCallDelta) {
	g.prepend(calls)
	return g.Push(text)
}

// Finish implements toolMachine.
func (g *glm47) Finish() (string, []ToolCallDelta) {
	g.text(g.scan.flush())
	if (g.state == glmName || g.state == glmArgs) && g.started {
		g.endCall()
	}
	g.state = glmContent
	g.finishContent()
	return g.take()
}

// text handles non-terminal text in the current state.
func (g *glm47) text(s string) {
	if s == "" {
		return
	}
	switch g.state {
	case glmContent:
		g.content(s)
	case glmName:
		g.call.rawName = append(g.call.rawName, s...)
	case glmArgs:
		g.args(s, false)
	}
	g.gate.raw(s)
}

// terminal applies the grammar's transition for t; one without a
// transition is text of the state.
func (g *glm47) terminal(t string) {
	if isDropToken(t, glmMarkers) {
		return
	}
	switch g.state {
	case glmContent:
		switch t {
		case thinkStart:
			g.state = glmReasoning
			g.gate.thinkEnd() // content and raw text part here
		case thinkEnd:
			g.gate.thinkEnd()
		case toolCallStart:
			g.startCall()
		default:
			g.text(t)
			return
		}
	case glmReasoning:
		switch t {
		case thinkEnd:
			g.state = glmContent
		case toolCallStart:
			g.startCall()
		}
	case glmName:
		switch t {
		case glmArgKeyOn:
			g.state = glmArgs
			g.args(t, true)
		case toolCallEnd:
			g.endCall()
			g.state = glmContent
		default:
			g.text(t)
			return
		}
	case glmArgs:
		if t == toolCallEnd {
			g.endCall()
			g.state = glmContent
		} else {
			g.args(t, true)
		}
	}
	g.gate.raw(t)
}

func (g *glm47) startCall() {
	g.started = true
	g.state = glmName
	g.call = glmCall{}
	g.opened()
}

// args handles argument text; terminal marks an arg tag.
func (g *glm47) args(s string, terminal bool) {
	if g.mode == engineNoneQuiet {
		return
	}
	c := &g.call
	if !c.hasArgs {
		c.hasArgs = true
		if name := pyStrip(string(c.rawName)); name != "" {
			c.resolved = true
			if g.knownTool(name) {
				g.settleName(name)
			}
		} else {
			// The name may still come from a '"name": "…"' in the text.
			c.keep = true
		}
		c.rawName = nil
	}
	if c.keep {
		c.raw = append(c.raw, s...)
	}
	if !c.emit && !c.keep {
		return
	}
	var buf [4]glmPair
	for _, p := range c.pairs.feed(s, terminal, buf[:0]) {
		g.param(p)
	}
}

// settleName settles a valid name: tools were called.
func (g *glm47) settleName(name string) {
	c := &g.call
	c.resolved, c.valid = true, true
	if c.index, c.emit = g.name(name); !c.emit {
		return
	}
	if len(g.tools) > 0 {
		c.props = toolProperties(g.tools, name)
	}
	// Pairs read before the name was known go out now.
	for _, p := range c.pairs.done {
		g.param(p)
	}
	c.pairs.done = nil
}

// param emits one complete pair, or keeps it until the call is named.
func (g *glm47) param(p glmPair) {
	c := &g.call
	if !c.emit {
		c.pairs.done = append(c.pairs.done, p)
		return
	}
	head, ok := c.args.key(p.key)
	if !ok {
		return
	}
	value := ""
	if schema, ok := c.props[p.key]; ok && schema.Kind == wire.Object {
		value = coerceCanonical(p.value, schemaTypes(schema))
	}
	if value == "" {
		value = pyjson.Quote(p.value)
	}
	g.emitArgs(head + value)
}

func (g *glm47) emitArgs(frag string) {
	g.calls.args(g.call.index, frag)
}

// endCall is TOOL_CALL_END.
func (g *glm47) endCall() {
	c := &g.call
	if c.closed || g.mode == engineNoneQuiet {
		return
	}
	c.closed = true
	if !c.resolved {
		name := ""
		if !c.hasArgs {
			name = pyStrip(string(c.rawName))
		} else if m := kimiNameRe.FindSubmatch(c.raw); m != nil && pyStrip(string(m[1])) == string(m[1]) {
			name = string(m[1])
		}
		c.resolved = true
		if name == "" || !g.knownTool(name) {
			return
		}
		g.settleName(name)
	}
	if c.emit {
		g.emitArgs(c.args.end())
	}
}

// glmPair is one complete key/value pair.
type glmPair struct{ key, value string }

// glmPairState is where glmPairs is within
// <arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>.
type glmPairState uint8

const (
	gpSeek  glmPairState = iota // before "<arg_key>"
	gpKey                       // in the key
	gpGap                       // after a "</arg_key>": whitespace, then "<arg_value>"
	gpValue                     // in the value
)

// glmPairs matches the pair regex over argument text as Python's finditer
// does. Tags arrive as separate terminal pieces. A match that starts at an
// "<arg_key>" either succeeds there or no later one can, so the scan never
// backs up: a "</arg_key>" not followed by whitespace and "<arg_value>"
// just becomes part of the key.
type glmPairs struct {
	state glmPairState
	key   []byte
	gap   []byte
	value []byte
	// done holds pairs read before the call was named.
	done []glmPair
}

func (p *glmPairs) feed(s string, terminal bool, out []glmPair) []glmPair {
	switch p.state {
	case gpSeek:
		if terminal && s == glmArgKeyOn {
			p.state = gpKey
			p.key = p.key[:0]
		}
	case gpKey:
		if terminal && s == glmArgKeyOff {
			p.state = gpGap
			p.gap = p.gap[:0]
			return out
		}
		p.key = append(p.key, s...)
	case gpGap:
		switch {
		case terminal && s == glmArgValOn:
			p.state = gpValue
			p.value = p.value[:0]
		case !terminal && strings.TrimLeftFunc(s, pyIsSpace) == "":
			p.gap = append(p.gap, s...)
		case terminal && s == glmArgKeyOff:
			// Another candidate end of the key.
			p.key = append(append(p.key, glmArgKeyOff...), p.gap...)
			p.gap = p.gap[:0]
		default:
			p.key = append(append(append(p.key, glmArgKeyOff...), p.gap...), s...)
			p.state = gpKey
		}
	case gpValue:
		if terminal && s == glmArgValOff {
			p.state = gpSeek
			return append(out, glmPair{key: pyStrip(string(p.key)), value: string(p.value)})
		}
		p.value = append(p.value, s...)
	}
	return out
}

// codec saves and restores the state of a glm47.
func (g *glm47) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &g.mode, 3)
	statecodec.Enum(c, &g.state, 4)
	g.scan.codec(c)
	// tools is the request's, not state.
	g.gate.codec(c)
	c.Bool(&g.started)
	c.Bool(&g.named)
	c.Int(&g.nCalls)
	g.call.codec(c)
}

// codec saves and restores the state of a glmCall.
func (g *glmCall) codec(c *statecodec.Codec) {
	c.ByteSlice(&g.rawName)
	c.Bool(&g.resolved)
	c.Bool(&g.valid)
	c.Bool(&g.emit)
	c.Bool(&g.closed)
	c.Bool(&g.hasArgs)
	c.Int(&g.index)
	statecodec.Map(c, &g.props, (*statecodec.Codec).String, codecSchema)
	g.pairs.codec(c)
	g.args.codec(c)
	c.ByteSlice(&g.raw)
	c.Bool(&g.keep)
}

// codec saves and restores the state of a glmPair.
func (g *glmPair) codec(c *statecodec.Codec) {
	c.String(&g.key)
	c.String(&g.value)
}

// codec saves and restores the state of a glmPairs.
func (p *glmPairs) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &p.state, 4)
	c.ByteSlice(&p.key)
	c.ByteSlice(&p.gap)
	c.ByteSlice(&p.value)
	statecodec.Slice(c, &p.done, func(c *statecodec.Codec, v *glmPair) { v.codec(c) })
}
