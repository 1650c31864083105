package parsers

import (
	"strings"
	"unicode/utf8"

	"github.com/vrender/vrender/parsers/pyjson"
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

// JSONChoice is the machine for tool_choice "required" or a named function.
type JSONChoice struct {
	// Named mode: Held is leading whitespace not yet known to be followed
	// by anything else; Started is set once the call is out.
	Held    []byte
	Started bool

	// Required mode.
	Phase  jcPhase
	Failed bool
	Obj    pyjson.Object
	Cur    jcElem
	// Elems counts the elements begun; Emitted the calls streamed.
	Elems   int
	Emitted int

	// named is the requested function ("" in required mode).
	named string
	// out collects the deltas of one Push while the object reader runs.
	out []ToolCallDelta
}

// jcElem is what one list element has shown so far. The OK and Bad flags
// judge the last value of each FunctionDefinition field, as pydantic
// validates the last of repeated keys.
type jcElem struct {
	// Val is the canonical text of the current field's value, for fields
	// checked once complete.
	Val    []byte
	NameOK bool
	Name   string
	// Params is the canonical parameters value, buffered until the name is
	// out; ParamsSeen and ParamsOK describe the last one given, Typed is
	// set once its first byte was checked.
	Params     []byte
	ParamsSeen bool
	ParamsOK   bool
	Typed      bool
	// Streaming is set while a parameters value streams as arguments;
	// Sent once one has gone out (with the name or streamed).
	Streaming bool
	Sent      bool
	// Out is set once the call is streamed.
	Out bool
	// BadDesc, BadStrict and BadDefer are set when the last description,
	// strict or defer_loading value fails its type.
	BadDesc, BadStrict, BadDefer bool
}

// newJSONChoice builds the machine for choice (required or named).
func newJSONChoice(choice ToolChoiceKind, name string) *JSONChoice {
	if choice == ChoiceNamed {
		return &JSONChoice{named: name}
	}
	return &JSONChoice{}
}

// Push implements ToolMachine.
func (j *JSONChoice) Push(text string) (string, []ToolCallDelta) {
	if j.named != "" {
		return "", j.pushNamed(text, false)
	}
	j.feed(text)
	calls := j.out
	j.out = nil
	return "", calls
}

// Finish implements ToolMachine.
func (j *JSONChoice) Finish() (string, []ToolCallDelta) {
	if j.named != "" {
		return "", j.pushNamed("", true)
	}
	if j.Phase != jcDone {
		// Truncated: validate_json fails on the whole list.
		j.Failed = true
	}
	return "", nil
}

// Called implements ToolMachine.
func (j *JSONChoice) Called() bool {
	if j.named != "" {
		return j.Started
	}
	return !j.Failed && j.Phase == jcDone && j.Emitted > 0
}

// pushNamed streams the content as the arguments of the named call once
// it is more than whitespace.
func (j *JSONChoice) pushNamed(text string, final bool) []ToolCallDelta {
	if j.Started {
		if text == "" {
			return nil
		}
		return []ToolCallDelta{{Index: 0, Arguments: text}}
	}
	j.Held = append(j.Held, text...)
	if !hasNonSpace(j.Held, final) {
		if final {
			j.Held = nil
		}
		return nil
	}
	j.Started = true
	args := string(j.Held)
	j.Held = nil
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
func (j *JSONChoice) feed(s string) {
	for i := 0; i < len(s) && !j.Failed; {
		c := s[i]
		if j.Phase == jcInElem {
			n, err := j.Obj.Feed(s[i:], j)
			i += n
			if err != nil {
				j.Failed = true
				return
			}
			if j.Obj.Done() {
				j.endElem()
				j.Phase = jcAfter
			}
			continue
		}
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case j.Phase == jcOpen && c == '[':
			j.Phase = jcFirst
		case (j.Phase == jcFirst || j.Phase == jcAfter) && c == ']':
			j.Phase = jcDone
		case j.Phase == jcAfter && c == ',':
			j.Phase = jcNext
		case (j.Phase == jcFirst || j.Phase == jcNext) && c == '{':
			j.Phase = jcInElem
			j.Obj = pyjson.Object{}
			j.Cur = jcElem{}
			j.Elems++
			continue // the object reader consumes its own '{'
		default:
			// Not a list of objects, or text after the list.
			j.Failed = true
			return
		}
		i++
	}
}

// endElem settles an element at its closing brace.
func (j *JSONChoice) endElem() {
	e := &j.Cur
	if !e.NameOK || e.ParamsSeen && !e.ParamsOK || e.BadDesc || e.BadStrict || e.BadDefer {
		j.Failed = true
		return
	}
	if !e.Sent {
		// No parameters: json.dumps(None).
		j.out = append(j.out, ToolCallDelta{Index: j.Elems - 1, Arguments: "null"})
	}
}

// emit streams the current element's call: id, name and the parameters
// buffered so far.
func (j *JSONChoice) emit() {
	e := &j.Cur
	e.Out = true
	j.Emitted++
	args := ""
	if e.ParamsSeen && e.ParamsOK {
		args, e.Sent = string(e.Params), true
	}
	e.Params = nil
	j.out = append(j.out, ToolCallDelta{Index: j.Elems - 1, ID: newToolCallID(), Type: "function", Name: e.Name, Arguments: args})
}

// Field implements pyjson.FieldSink.
func (j *JSONChoice) Field(key string) {
	e := &j.Cur
	e.Val = e.Val[:0]
	if key == "parameters" {
		e.ParamsSeen, e.ParamsOK, e.Typed = true, false, false
		e.Params = e.Params[:0]
		// Once the call is out only the first valid parameters stream
		// (see the known deviations); a repeat is read but not sent.
		e.Streaming = e.Out && !e.Sent
		e.Sent = e.Sent || e.Streaming
	}
}

// FieldBytes implements pyjson.FieldSink.
func (j *JSONChoice) FieldBytes(key string, canon []byte) {
	e := &j.Cur
	switch key {
	case "parameters":
		if !e.Typed {
			// The first byte decides the type: an object or null.
			e.Typed = true
			e.ParamsOK = canon[0] == '{' || canon[0] == 'n'
			if !e.ParamsOK && e.Streaming {
				e.Streaming, e.Sent = false, false
			}
		}
		switch {
		case !e.ParamsOK:
		case e.Streaming:
			j.out = append(j.out, ToolCallDelta{Index: j.Elems - 1, Arguments: string(canon)})
		case !e.Out:
			e.Params = append(e.Params, canon...)
		}
	case "name", "description", "strict", "defer_loading":
		e.Val = append(e.Val, canon...)
	}
}

// FieldEnd implements pyjson.FieldSink.
func (j *JSONChoice) FieldEnd(key string) {
	e := &j.Cur
	switch key {
	case "name":
		name, ok := decodeString(e.Val)
		e.NameOK = ok
		if ok && !e.Out {
			e.Name = name
			j.emit()
		}
	case "parameters":
		e.Streaming = false
	case "description":
		e.BadDesc = !(len(e.Val) > 0 && e.Val[0] == '"' || string(e.Val) == "null")
	case "strict":
		e.BadStrict = !laxBool(e.Val)
	case "defer_loading":
		e.BadDefer = !laxBool(e.Val)
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
