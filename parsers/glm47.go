package parsers

import (
	"encoding/json"
	"strings"

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
// the first call, stripped; without, the output unchanged (glmGate reuses
// the qwen3_coder gate, which implements the same engine rules).
//
// Known deviations (pathological outputs): a repeated key keeps its first
// value (Python keeps the first position with the last value); a call
// whose name can only come from json.loads of its arguments is dropped;
// special tokens outside the grammar are not dropped; without tools
// (tool_choice "none") vLLM puts the text after a nameless call before
// the text before it, which this machine reproduces only while nothing
// but whitespace has been streamed (the qcGate limitation).

func init() {
	for _, name := range []string{"glm45", "glm47"} {
		registerTool(name, ToolInfo{New: newGLM47, NeedsSpecialTokens: true, EngineBased: true, StructuralTagModel: "glm_4_7"})
	}
}

const (
	glmArgKeyOn  = "<arg_key>"
	glmArgKeyOff = "</arg_key>"
	glmArgValOn  = "<arg_value>"
	glmArgValOff = "</arg_value>"
)

var glmMarkers = []string{qcThinkStart, qcThinkEnd, qcToolStart, qcToolEnd, glmArgKeyOn, glmArgKeyOff, glmArgValOn, glmArgValOff}

// glmState is the grammar's parser state.
type glmState uint8

const (
	glmContent glmState = iota
	glmReasoning
	glmName
	glmArgs
)

// GLM47 is the glm45 / glm47 tool machine.
type GLM47 struct {
	Mode  qcMode
	State glmState
	Scan  markerScan
	Tools []Tool
	Gate  qcGate
	// Started is set once a call opened; Named once one was named (vLLM's
	// tools_called); Calls counts calls emitted.
	Started bool
	Named   bool
	Calls   int
	Call    glmCall

	out   strings.Builder
	calls deltaSink
	// markers are glmMarkers and the special tokens to drop (engine_drop.go).
	markers []string
}

// glmCall is the call being read.
type glmCall struct {
	RawName []byte
	// Resolved is set once the name is settled (Valid when it names a
	// call); Emit when the call goes out.
	Resolved, Valid, Emit, Closed bool
	HasArgs                       bool
	Index                         int
	Props                         map[string]json.RawMessage
	Pairs                         glmPairs
	NParams                       int
	Seen                          map[string]bool
	// Raw keeps the argument text while the name may still come from it.
	Raw  []byte
	Keep bool
}

func newGLM47(v Vocab, req *Request) (ToolMachine, error) {
	g := &GLM47{Tools: req.Tools, markers: engineTerminals(v, glmMarkers)}
	if choice, _, _ := req.Choice(); choice == ChoiceNone {
		g.Mode = qcNoneOpen
		if len(req.Tools) > 0 {
			g.Mode = qcNoneQuiet
		}
	}
	g.Gate.Auto = g.Mode == qcAuto
	return g, nil
}

// Push implements ToolMachine.
func (g *GLM47) Push(text string) (string, []ToolCallDelta) {
	for {
		before, marker, rest := g.Scan.next(text, orTerminals(g.markers, glmMarkers))
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
func (g *GLM47) pushAppend(text string, calls []ToolCallDelta) (string, []ToolCallDelta) {
	g.calls.calls = append(calls, g.calls.calls...)
	return g.Push(text)
}

// Finish implements ToolMachine.
func (g *GLM47) Finish() (string, []ToolCallDelta) {
	g.text(g.Scan.flush())
	if (g.State == glmName || g.State == glmArgs) && g.Started {
		g.endCall()
	}
	g.State = glmContent
	if g.Mode != qcNoneQuiet {
		g.Gate.finish(&g.out)
	}
	return g.take()
}

// Called implements ToolMachine.
func (g *GLM47) Called() bool { return g.Mode == qcAuto && g.Named }

// ContentNull reports whether an empty content is null: with tool_choice
// "none" vLLM's engine path returns its own content, None when empty.
func (g *GLM47) ContentNull() (null, decided bool) {
	return g.Mode != qcAuto, g.Mode != qcAuto
}

func (g *GLM47) take() (string, []ToolCallDelta) {
	out, calls := g.out.String(), g.calls.take()
	g.out.Reset()
	return out, calls
}

// text handles non-terminal text in the current state.
func (g *GLM47) text(s string) {
	if s == "" {
		return
	}
	switch g.State {
	case glmContent:
		if g.Mode == qcNoneQuiet {
			g.out.WriteString(s)
		} else {
			g.Gate.content(&g.out, s)
		}
	case glmName:
		g.Call.RawName = append(g.Call.RawName, s...)
	case glmArgs:
		g.args(s, false)
	}
	g.Gate.raw(s)
}

// terminal applies the grammar's transition for t; one without a
// transition is text of the state.
func (g *GLM47) terminal(t string) {
	if isDropToken(t, glmMarkers) {
		return
	}
	switch g.State {
	case glmContent:
		switch t {
		case qcThinkStart:
			g.State = glmReasoning
			g.Gate.thinkEnd() // content and raw text part here
		case qcThinkEnd:
			g.Gate.thinkEnd()
		case qcToolStart:
			g.startCall()
		default:
			g.text(t)
			return
		}
	case glmReasoning:
		switch t {
		case qcThinkEnd:
			g.State = glmContent
		case qcToolStart:
			g.startCall()
		}
	case glmName:
		switch t {
		case glmArgKeyOn:
			g.State = glmArgs
			g.args(t, true)
		case qcToolEnd:
			g.endCall()
			g.State = glmContent
		default:
			g.text(t)
			return
		}
	case glmArgs:
		if t == qcToolEnd {
			g.endCall()
			g.State = glmContent
		} else {
			g.args(t, true)
		}
	}
	g.Gate.raw(t)
}

func (g *GLM47) startCall() {
	g.Started = true
	g.State = glmName
	g.Call = glmCall{}
	if g.Mode != qcNoneQuiet {
		g.Gate.toolStart()
	}
}

// valid is _is_valid_tool_name with validate_tool_names on.
func (g *GLM47) valid(name string) bool {
	if len(g.Tools) == 0 {
		return true
	}
	for _, t := range g.Tools {
		if (t.Type == "" || t.Type == "function") && t.Function.Name == name {
			return true
		}
	}
	return false
}

// args handles argument text; terminal marks an arg tag.
func (g *GLM47) args(s string, terminal bool) {
	if g.Mode == qcNoneQuiet {
		return
	}
	c := &g.Call
	if !c.HasArgs {
		c.HasArgs = true
		if name := pyStrip(string(c.RawName)); name != "" {
			c.Resolved = true
			if g.valid(name) {
				g.name(name)
			}
		} else {
			// The name may still come from a '"name": "…"' in the text.
			c.Keep = true
		}
		c.RawName = nil
	}
	if c.Keep {
		c.Raw = append(c.Raw, s...)
	}
	if !c.Emit && !c.Keep {
		return
	}
	var buf [4]glmPair
	for _, p := range c.Pairs.feed(s, terminal, buf[:0]) {
		g.param(p)
	}
}

// name settles a valid name: tools were called.
func (g *GLM47) name(name string) {
	c := &g.Call
	c.Resolved, c.Valid = true, true
	if !g.Named {
		g.Named = true
		if g.Mode != qcNoneQuiet {
			g.Gate.called(&g.out)
		}
	}
	if g.Mode != qcAuto {
		return
	}
	c.Emit, c.Index = true, g.Calls
	g.Calls++
	if len(g.Tools) > 0 {
		c.Props = toolProperties(g.Tools, name)
	}
	g.calls.add(ToolCallDelta{Index: c.Index, ID: newToolCallID(), Type: "function", Name: name})
	// Pairs read before the name was known go out now.
	for _, p := range c.Pairs.Done {
		g.param(p)
	}
	c.Pairs.Done = nil
}

// param emits one complete pair, or keeps it until the call is named.
func (g *GLM47) param(p glmPair) {
	c := &g.Call
	if !c.Emit {
		c.Pairs.Done = append(c.Pairs.Done, p)
		return
	}
	if c.Seen == nil {
		c.Seen = map[string]bool{}
	}
	if c.Seen[p.Key] {
		return
	}
	c.Seen[p.Key] = true
	sep := ", "
	if c.NParams == 0 {
		sep = "{"
	}
	c.NParams++
	value := ""
	if schema, ok := c.Props[p.Key]; ok && isJSONObjectText(schema) {
		value = coerceCanonical(p.Value, schemaTypes(schema))
	}
	if value == "" {
		value = pyjson.Quote(p.Value)
	}
	g.emitArgs(sep + pyjson.Quote(p.Key) + ": " + value)
}

func (g *GLM47) emitArgs(frag string) {
	g.calls.args(g.Call.Index, frag)
}

// endCall is TOOL_CALL_END.
func (g *GLM47) endCall() {
	c := &g.Call
	if c.Closed || g.Mode == qcNoneQuiet {
		return
	}
	c.Closed = true
	if !c.Resolved {
		name := ""
		if !c.HasArgs {
			name = pyStrip(string(c.RawName))
		} else if m := kimiNameRe.FindSubmatch(c.Raw); m != nil && pyStrip(string(m[1])) == string(m[1]) {
			name = string(m[1])
		}
		c.Resolved = true
		if name == "" || !g.valid(name) {
			return
		}
		g.name(name)
	}
	if !c.Emit {
		return
	}
	if c.NParams == 0 {
		g.emitArgs("{}")
	} else {
		g.emitArgs("}")
	}
}

// glmPair is one complete key/value pair.
type glmPair struct{ Key, Value string }

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
	State glmPairState
	Key   []byte
	Gap   []byte
	Value []byte
	// Done holds pairs read before the call was named.
	Done []glmPair
}

func (p *glmPairs) feed(s string, terminal bool, out []glmPair) []glmPair {
	switch p.State {
	case gpSeek:
		if terminal && s == glmArgKeyOn {
			p.State = gpKey
			p.Key = p.Key[:0]
		}
	case gpKey:
		if terminal && s == glmArgKeyOff {
			p.State = gpGap
			p.Gap = p.Gap[:0]
			return out
		}
		p.Key = append(p.Key, s...)
	case gpGap:
		switch {
		case terminal && s == glmArgValOn:
			p.State = gpValue
			p.Value = p.Value[:0]
		case !terminal && strings.TrimLeftFunc(s, pyIsSpace) == "":
			p.Gap = append(p.Gap, s...)
		case terminal && s == glmArgKeyOff:
			// Another candidate end of the key.
			p.Key = append(append(p.Key, glmArgKeyOff...), p.Gap...)
			p.Gap = p.Gap[:0]
		default:
			p.Key = append(append(append(p.Key, glmArgKeyOff...), p.Gap...), s...)
			p.State = gpKey
		}
	case gpValue:
		if terminal && s == glmArgValOff {
			p.State = gpSeek
			return append(out, glmPair{Key: pyStrip(string(p.Key)), Value: string(p.Value)})
		}
		p.Value = append(p.Value, s...)
	}
	return out
}
