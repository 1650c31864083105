package parsers

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/vrender/vrender/internal/statecodec"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/parsers/pyjson"
	"github.com/vrender/vrender/protocol"
)

// Step3 tool calls, as vLLM's Step3ToolParser.extract_tool_calls:
//
//	<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="F">
//	<steptml:parameter name="K">V</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>
//
// The block runs from the first calls-begin to the first calls-end after
// it. Each part of it after a call-begin (and the part before the first)
// that holds a call-end, a tool_sep with "function" (stripped) before it
// and an invoke tag is a call; its parameters are the values of
// <steptml:parameter name="K">V</steptml:parameter> (V without '<',
// stripped, the last of a repeated K), cast by the tool's schema "type"
// (integer: int(), number: float(), boolean and null by spelling). With
// calls, content is (text before + text after the block).strip(), null
// when empty; without (no block, no calls-end, no valid call) the server
// returns the output unchanged.
//
// Calls exist only once calls-end arrives, so they go out then (the block
// is parsed once, at its end). Text before the block streams when the
// output starts with non-space (both answers agree on it, minus trailing
// space); after leading space it is held until the verdict.

const (
	s3CallsBegin = "<｜tool_calls_begin｜>"
	s3CallsEnd   = "<｜tool_calls_end｜>"
	s3CallBegin  = "<｜tool_call_begin｜>"
	s3CallEnd    = "<｜tool_call_end｜>"
	s3Sep        = "<｜tool_sep｜>"
	s3InvokeOpen = `<steptml:invoke name="`
	s3ParamOpen  = `<steptml:parameter name="`
	s3ParamEnd   = "</steptml:parameter>"
)

var (
	s3BeginMarkers = []string{s3CallsBegin}
	s3EndMarkers   = []string{s3CallsEnd}
)

// s3Phase is where a step3 machine is.
type s3Phase uint8

const (
	s3Before  s3Phase = iota // before calls-begin
	s3Block                  // inside the block
	s3After                  // after the block, calls returned
	s3NoCalls                // settled without calls: the rest is content
)

// step3 is the step3 tool machine.
type step3 struct {
	phase s3Phase
	scan  markerScan
	tools []protocol.Tool
	gate  stripGate
	// block is the raw text from calls-begin on.
	block []byte
	calls bool
}

func newStep3(_ Vocab, req *Request) (toolMachine, error) { return &step3{tools: req.Tools}, nil }

// Push implements toolMachine.
func (s *step3) Push(text string) (string, []ToolCallDelta) {
	var out strings.Builder
	var calls []ToolCallDelta
	for {
		switch s.phase {
		case s3NoCalls:
			out.WriteString(text)
			return out.String(), nil
		case s3After:
			s.gate.text(&out, text)
			return out.String(), calls
		case s3Before:
			before, marker, rest := s.scan.next(text, s3BeginMarkers)
			s.gate.text(&out, before)
			if marker == "" {
				return out.String(), calls
			}
			s.block = append(s.block, marker...)
			s.phase, text = s3Block, rest
		case s3Block:
			before, marker, rest := s.scan.next(text, s3EndMarkers)
			s.block = append(s.block, before...)
			if marker == "" {
				return out.String(), calls
			}
			body := string(s.block[len(s3CallsBegin):])
			s.block = append(s.block, marker...)
			calls = s.parseBlock(body)
			if len(calls) == 0 {
				s.phase = s3NoCalls
				s.gate.raw(&out)
				out.Write(s.block)
				s.block = nil
			} else {
				s.phase, s.calls, s.block = s3After, true, nil
				s.gate.called(&out)
			}
			text = rest
		}
	}
}

// Finish implements toolMachine.
func (s *step3) Finish() (string, []ToolCallDelta) {
	var out strings.Builder
	held := s.scan.flush()
	switch s.phase {
	case s3NoCalls:
		return held, nil
	case s3After:
		s.gate.text(&out, held)
		s.gate.finish(&out)
		return out.String(), nil
	case s3Block:
		s.block = append(s.block, held...)
	default:
		s.gate.text(&out, held)
	}
	s.phase = s3NoCalls
	s.gate.raw(&out)
	out.Write(s.block)
	s.block = nil
	return out.String(), nil
}

// Called implements toolMachine.
func (s *step3) Called() bool { return s.calls }

// parseBlock returns the block's calls.
func (s *step3) parseBlock(block string) []ToolCallDelta {
	var calls []ToolCallDelta
	for _, part := range strings.Split(block, s3CallBegin) {
		body, _, ok := strings.Cut(part, s3CallEnd)
		if !ok {
			continue
		}
		typ, invoke, ok := strings.Cut(body, s3Sep)
		if !ok || pyStrip(typ) != "function" {
			continue
		}
		name, ok := s3InvokeName(invoke)
		if !ok {
			continue
		}
		args := s3Arguments(invoke, s3PropTypes(s.tools, name))
		calls = append(calls, ToolCallDelta{Index: len(calls), ID: newToolCallID(), Type: "function", Name: name, Arguments: args})
	}
	return calls
}

// s3InvokeName is re.search(r'<steptml:invoke name="([^"]+)">').
func s3InvokeName(s string) (string, bool) {
	for {
		i := strings.Index(s, s3InvokeOpen)
		if i < 0 {
			return "", false
		}
		rest := s[i+len(s3InvokeOpen):]
		if j := strings.IndexByte(rest, '"'); j > 0 && strings.HasPrefix(rest[j:], `">`) {
			return rest[:j], true
		}
		s = s[i+1:]
	}
}

// s3Arguments is json.dumps of the cast parameters found by
// re.findall(r'<steptml:parameter name="([^"]+)">([^<]*)</steptml:parameter>').
func s3Arguments(s string, types map[string]string) string {
	var keys []string
	values := map[string]string{}
	for {
		i := strings.Index(s, s3ParamOpen)
		if i < 0 {
			break
		}
		rest := s[i+len(s3ParamOpen):]
		j := strings.IndexByte(rest, '"')
		if j <= 0 || !strings.HasPrefix(rest[j:], `">`) {
			s = s[i+1:]
			continue
		}
		name, val := rest[:j], rest[j+2:]
		k := strings.IndexByte(val, '<')
		if k < 0 || !strings.HasPrefix(val[k:], s3ParamEnd) {
			s = s[i+1:]
			continue
		}
		if _, seen := values[name]; !seen {
			keys = append(keys, name)
		}
		values[name] = pyStrip(val[:k])
		s = val[k+len(s3ParamEnd):]
	}
	var b strings.Builder
	b.WriteByte('{')
	for n, k := range keys {
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pyjson.Quote(k))
		b.WriteString(": ")
		b.WriteString(s3Cast(values[k], types[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// s3PropTypes maps the first tool named name's properties to their
// "type" when it is a string.
func s3PropTypes(tools []protocol.Tool, name string) map[string]string {
	types := map[string]string{}
	for k, schema := range toolProperties(tools, name) {
		if schema.Kind != wire.Object {
			continue
		}
		if t, ok := schema.Get("type"); ok && t.Kind == wire.String {
			types[k] = t.S
		}
	}
	return types
}

// s3Cast is _cast_arguments for one value, as canonical JSON.
func s3Cast(v, typ string) string {
	switch typ {
	case "integer":
		if s, ok := coerceInt(v); ok {
			return s
		}
	case "number":
		if s, ok := pyFloat(v); ok {
			return s
		}
	case "boolean":
		switch strings.ToLower(v) {
		case "true":
			return "true"
		case "false":
			return "false"
		}
	case "null":
		if strings.ToLower(v) == "null" {
			return "null"
		}
	}
	return pyjson.Quote(v)
}

// pyFloat is json.dumps(float(v)): Python's float() accepts surrounding
// space, one sign, digits with single underscores between them, a
// fraction, an exponent, and inf/infinity/nan in any case; out-of-range
// values become infinities or zero.
func pyFloat(v string) (string, bool) {
	s := strings.ToLower(pyStrip(v))
	sign := ""
	if s != "" && (s[0] == '+' || s[0] == '-') {
		sign, s = s[:1], s[1:]
	}
	switch s {
	case "inf", "infinity":
		if sign == "-" {
			return "-Infinity", true
		}
		return "Infinity", true
	case "nan":
		return "NaN", true
	}
	mant, exp, hasExp := strings.Cut(s, "e")
	intPart, frac, hasDot := strings.Cut(mant, ".")
	if intPart == "" && frac == "" {
		return "", false
	}
	clean := sign
	if intPart != "" {
		d, ok := cleanDigits(intPart)
		if !ok {
			return "", false
		}
		clean += d
	}
	if hasDot {
		clean += "."
		if frac != "" {
			d, ok := cleanDigits(frac)
			if !ok {
				return "", false
			}
			clean += d
		}
	}
	if hasExp {
		e := exp
		clean += "e"
		if e != "" && (e[0] == '+' || e[0] == '-') {
			clean += e[:1]
			e = e[1:]
		}
		d, ok := cleanDigits(e)
		if !ok {
			return "", false
		}
		clean += d
	}
	f, err := strconv.ParseFloat(clean, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return "", false
	}
	if math.IsInf(f, 0) {
		if f < 0 {
			return "-Infinity", true
		}
		return "Infinity", true
	}
	return string(pyjson.AppendFloat(nil, f)), true
}

// codec saves and restores the state of a step3.
func (s *step3) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &s.phase, 4)
	s.scan.codec(c)
	// tools is the request's, not state.
	s.gate.codec(c)
	c.ByteSlice(&s.block)
	c.Bool(&s.calls)
}
