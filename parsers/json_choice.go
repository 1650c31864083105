package parsers

import (
	"github.com/vrender/vrender/internal/statecodec"
	"strings"
	"unicode/utf8"

	"github.com/vrender/vrender/parsers/pyjson"
	"github.com/vrender/vrender/protocol"
)

// tool_choice "required" and named functions for tool parsers vLLM marks
// supports_required_and_named. vLLM does not run the model's own parser
// for them: generation is constrained to JSON and the generic path of
// vllm/parser/abstract_parser.py's _extract_tool_calls reads it:
//
//   - named: content that is empty or whitespace (Python's str.strip) gives
//     no call; otherwise one call with the requested name whose arguments
//     are the content verbatim (not re-serialised);
//   - required: TypeAdapter(list[FunctionDefinition]).validate_json(content)
//     with validation errors suppressed. Valid: one call per element,
//     arguments json.dumps(parameters, ensure_ascii=False) ("null" when
//     absent). Invalid (bad JSON, truncated, trailing text, an element that
//     fails FunctionDefinition): no calls at all, never content.
//
// Content is "" either way (the chat server's content or ""). Calls stream
// optimistically, as the hermes machine's do: a name once it is complete,
// arguments as they arrive once the name is out, and a later failure
// withdraws them all through Called() == false.
//
// Known deviations, only for output structured outputs would not let a
// model write: when an element repeats "name" with a different value, or
// repeats "parameters", after its call was streamed, the call keeps the
// first values (pydantic keeps the last). JSON is read by pyjson, which
// follows Python's json module; where pydantic's own JSON parser (jiter)
// differs from it (e.g. lone UTF-16 surrogate escapes) the verdict follows
// pyjson.

// jcPhase is where a required-list machine is within its list.
type jcPhase uint8

const (
	jcOpen   jcPhase = iota // before '['
	jcFirst                 // after '[': an element or ']'
	jcInElem                // inside an element
	jcAfter                 // after an element: ',' or ']'
	jcNext                  // after ',': an element
	jcDone                  // after ']': only whitespace may follow
)

// jsonChoice is the machine for tool_choice "required" or a named function.
type jsonChoice struct {
	// Named mode: Held is leading whitespace not yet known to be followed
	// by anything else; Started is set once the call is out.
	held    []byte
	started bool

	// Required mode.
	phase  jcPhase
	failed bool
	obj    pyjson.Object
	cur    jcElem
	// elems counts the elements begun; Emitted the calls streamed.
	elems   int
	emitted int

	// named is the requested function ("" in required mode).
	named string
	// out collects the deltas of one Push while the object reader runs.
	out []ToolCallDelta
}

// jcElem is what one list element has shown so far. The OK and Bad flags
// judge the last value of each FunctionDefinition field, as pydantic
// validates the last of repeated keys.
type jcElem struct {
	// val is the canonical text of the current field's value, for fields
	// checked once complete.
	val    []byte
	nameOK bool
	name   string
	// params is the canonical parameters value, buffered until the name is
	// out; ParamsSeen and ParamsOK describe the last one given, Typed is
	// set once its first byte was checked.
	params     []byte
	paramsSeen bool
	paramsOK   bool
	typed      bool
	// streaming is set while a parameters value streams as arguments;
	// Sent once one has gone out (with the name or streamed).
	streaming bool
	sent      bool
	// out is set once the call is streamed.
	out bool
	// badDesc, BadStrict and BadDefer are set when the last description,
	// strict or defer_loading value fails its type.
	badDesc, badStrict, badDefer bool
}

// newJSONChoice builds the machine for choice (required or named).
func newJSONChoice(choice protocol.ToolChoiceKind, name string) *jsonChoice {
	if choice == choiceNamed {
		return &jsonChoice{named: name}
	}
	return &jsonChoice{}
}

// Push implements toolMachine.
func (j *jsonChoice) Push(text string) (string, []ToolCallDelta) {
	if j.named != "" {
		return "", j.pushNamed(text, false)
	}
	j.feed(text)
	calls := j.out
	j.out = nil
	return "", calls
}

// Finish implements toolMachine.
func (j *jsonChoice) Finish() (string, []ToolCallDelta) {
	if j.named != "" {
		return "", j.pushNamed("", true)
	}
	if j.phase != jcDone {
		// Truncated: validate_json fails on the whole list.
		j.failed = true
	}
	return "", nil
}

// Called implements toolMachine.
func (j *jsonChoice) Called() bool {
	if j.named != "" {
		return j.started
	}
	return !j.failed && j.phase == jcDone && j.emitted > 0
}

// pushNamed streams the content as the arguments of the named call once
// it is more than whitespace.
func (j *jsonChoice) pushNamed(text string, final bool) []ToolCallDelta {
	if j.started {
		if text == "" {
			return nil
		}
		return []ToolCallDelta{{Index: 0, Arguments: text}}
	}
	j.held = append(j.held, text...)
	if !hasNonSpace(j.held, final) {
		if final {
			j.held = nil
		}
		return nil
	}
	j.started = true
	args := string(j.held)
	j.held = nil
	return []ToolCallDelta{{Index: 0, ID: newToolCallID(), Type: "function", Name: j.named, Arguments: args}}
}

// hasNonSpace reports whether b holds a character Python's str.strip
// keeps. An incomplete UTF-8 sequence at the end may still become
// whitespace, unless the input has ended (then it decodes to U+FFFD).
func hasNonSpace(b []byte, final bool) bool {
	for len(b) > 0 {
		if !utf8.FullRune(b) && !final {
			return false
		}
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 || !pyIsSpace(r) {
			return true
		}
		b = b[n:]
	}
	return false
}

// feed advances the list reader over s.
func (j *jsonChoice) feed(s string) {
	for i := 0; i < len(s) && !j.failed; {
		c := s[i]
		if j.phase == jcInElem {
			n, err := j.obj.Feed(s[i:], j)
			i += n
			if err != nil {
				j.failed = true
				return
			}
			if j.obj.Done() {
				j.endElem()
				j.phase = jcAfter
			}
			continue
		}
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case j.phase == jcOpen && c == '[':
			j.phase = jcFirst
		case (j.phase == jcFirst || j.phase == jcAfter) && c == ']':
			j.phase = jcDone
		case j.phase == jcAfter && c == ',':
			j.phase = jcNext
		case (j.phase == jcFirst || j.phase == jcNext) && c == '{':
			j.phase = jcInElem
			j.obj = pyjson.Object{}
			j.cur = jcElem{}
			j.elems++
			continue // the object reader consumes its own '{'
		default:
			// Not a list of objects, or text after the list.
			j.failed = true
			return
		}
		i++
	}
}

// endElem settles an element at its closing brace.
func (j *jsonChoice) endElem() {
	e := &j.cur
	if !e.nameOK || e.paramsSeen && !e.paramsOK || e.badDesc || e.badStrict || e.badDefer {
		j.failed = true
		return
	}
	if !e.sent {
		// No parameters: json.dumps(None).
		j.out = append(j.out, ToolCallDelta{Index: j.elems - 1, Arguments: "null"})
	}
}

// emit streams the current element's call: id, name and the parameters
// buffered so far.
func (j *jsonChoice) emit() {
	e := &j.cur
	e.out = true
	j.emitted++
	args := ""
	if e.paramsSeen && e.paramsOK {
		args, e.sent = string(e.params), true
	}
	e.params = nil
	j.out = append(j.out, ToolCallDelta{Index: j.elems - 1, ID: newToolCallID(), Type: "function", Name: e.name, Arguments: args})
}

// Field implements pyjson.FieldSink.
func (j *jsonChoice) Field(key string) {
	e := &j.cur
	e.val = e.val[:0]
	if key == "parameters" {
		e.paramsSeen, e.paramsOK, e.typed = true, false, false
		e.params = e.params[:0]
		// Once the call is out only the first valid parameters stream
		// (see the known deviations); a repeat is read but not sent.
		e.streaming = e.out && !e.sent
		e.sent = e.sent || e.streaming
	}
}

// FieldBytes implements pyjson.FieldSink.
func (j *jsonChoice) FieldBytes(key string, canon []byte) {
	e := &j.cur
	switch key {
	case "parameters":
		if !e.typed {
			// The first byte decides the type: an object or null.
			e.typed = true
			e.paramsOK = canon[0] == '{' || canon[0] == 'n'
			if !e.paramsOK && e.streaming {
				e.streaming, e.sent = false, false
			}
		}
		switch {
		case !e.paramsOK:
		case e.streaming:
			j.out = append(j.out, ToolCallDelta{Index: j.elems - 1, Arguments: string(canon)})
		case !e.out:
			e.params = append(e.params, canon...)
		}
	case "name", "description", "strict", "defer_loading":
		e.val = append(e.val, canon...)
	}
}

// FieldEnd implements pyjson.FieldSink.
func (j *jsonChoice) FieldEnd(key string) {
	e := &j.cur
	switch key {
	case "name":
		name, ok := decodeString(e.val)
		e.nameOK = ok
		if ok && !e.out {
			e.name = name
			j.emit()
		}
	case "parameters":
		e.streaming = false
	case "description":
		e.badDesc = !(len(e.val) > 0 && e.val[0] == '"' || string(e.val) == "null")
	case "strict":
		e.badStrict = !laxBool(e.val)
	case "defer_loading":
		e.badDefer = !laxBool(e.val)
	}
}

// laxBool reports whether pydantic's lax bool | None accepts the JSON
// value canon: null, a boolean, 0 or 1, or one of its boolean words.
func laxBool(canon []byte) bool {
	switch string(canon) {
	case "null", "true", "false", "0", "1", "0.0", "1.0", "-0.0":
		return true
	}
	s, ok := decodeString(canon)
	if !ok {
		return false
	}
	switch strings.ToLower(s) {
	case "0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes":
		return true
	}
	return false
}

// codec saves and restores the state of a jsonChoice.
func (j *jsonChoice) codec(c *statecodec.Codec) {
	c.ByteSlice(&j.held)
	c.Bool(&j.started)
	statecodec.Enum(c, &j.phase, 6)
	c.Bool(&j.failed)
	j.obj.Codec(c)
	j.cur.codec(c)
	c.Int(&j.elems)
	c.Int(&j.emitted)
}

// codec saves and restores the state of a jcElem.
func (j *jcElem) codec(c *statecodec.Codec) {
	c.ByteSlice(&j.val)
	c.Bool(&j.nameOK)
	c.String(&j.name)
	c.ByteSlice(&j.params)
	c.Bool(&j.paramsSeen)
	c.Bool(&j.paramsOK)
	c.Bool(&j.typed)
	c.Bool(&j.streaming)
	c.Bool(&j.sent)
	c.Bool(&j.out)
	c.Bool(&j.badDesc)
	c.Bool(&j.badStrict)
	c.Bool(&j.badDefer)
}
