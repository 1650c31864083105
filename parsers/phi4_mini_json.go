package parsers

import "github.com/vrender/vrender/parsers/pyjson"

// Phi-4-mini JSON tool calls, as vLLM's Phi4MiniJsonToolParser
// .extract_tool_calls: the regex functools\[(.*?)\] takes the text from the
// first "functools[" to the first "]" after it (even one inside a string or
// a nested list), and json.loads("[" + that + "]") must succeed:
//
//   - no "functools[" followed by a "]": no calls, the whole text is content;
//   - invalid JSON: tools_called with no calls and null content;
//   - an element that is not an object with a string "name" and an
//     "arguments" (else "parameters") field: no calls, the whole text;
//   - otherwise every element is a call (arguments json.dumps'd), content is
//     null and everything outside the list is dropped.
//
// The verdict on the list needs every element, so the calls go out when the
// closing "]" arrives (re-serialised on the fly until then); text is held
// until the verdict and streams as content only once it is "no calls".

func init() {
	registerTool("phi4_mini_json", ToolInfo{New: newPhi4MiniJSON, SupportsRequiredAndNamed: true})
}

const phi4Open = "functools["

var phi4Markers = []string{phi4Open}

// phi4Phase is where a Phi-4-mini machine is.
type phi4Phase uint8

const (
	phi4Text     phi4Phase = iota // before "functools["
	phi4Body                      // inside the list, before the first "]"
	phi4Called                    // calls (or a JSON error) decided: the rest is dropped
	phi4Fallback                  // no calls: everything is content
)

// Phi4MiniJSON is the phi4_mini_json tool machine.
type Phi4MiniJSON struct {
	Phase phi4Phase
	Scan  markerScan
	// Raw is the text so far while no verdict is reached.
	Raw  []byte
	List jsonList
	// Calls is true once the verdict is tools_called.
	Calls bool
}

func newPhi4MiniJSON(Vocab, *Request) (ToolMachine, error) { return &Phi4MiniJSON{}, nil }

// Push implements ToolMachine.
func (p *Phi4MiniJSON) Push(text string) (string, []ToolCallDelta) {
	switch p.Phase {
	case phi4Fallback:
		return text, nil
	case phi4Called:
		return "", nil
	case phi4Text:
		before, marker, rest := p.Scan.next(text, phi4Markers)
		p.Raw = append(p.Raw, before...)
		if marker == "" {
			return "", nil
		}
		p.Raw = append(p.Raw, marker...)
		p.Phase = phi4Body
		p.List.open()
		text = rest
	}
	body, closed, rest := cutByte(text, ']')
	p.Raw = append(p.Raw, body...)
	p.List.feed(body)
	if !closed {
		return "", nil
	}
	p.Raw = append(p.Raw, ']')
	p.List.feed("]")
	return p.verdict(rest)
}

// Finish implements ToolMachine.
func (p *Phi4MiniJSON) Finish() (string, []ToolCallDelta) {
	switch p.Phase {
	case phi4Text, phi4Body:
		// No "]" closed a list: the regex finds no match.
		p.Phase = phi4Fallback
		out := string(p.Raw) + p.Scan.flush()
		p.Raw = nil
		return out, nil
	}
	return "", nil
}

// Called implements ToolMachine.
func (p *Phi4MiniJSON) Called() bool { return p.Calls }

// verdict settles the list once its "]" arrived; rest follows the "]".
func (p *Phi4MiniJSON) verdict(rest string) (string, []ToolCallDelta) {
	l := &p.List
	if !l.done() {
		p.Phase, p.Calls, p.Raw = phi4Called, true, nil
		return "", nil
	}
	calls, ok := l.calls("parameters")
	if !ok {
		p.Phase = phi4Fallback
		out := string(p.Raw) + rest
		p.Raw = nil
		return out, nil
	}
	p.Phase, p.Calls, p.Raw = phi4Called, true, nil
	return "", calls
}

// cutByte splits s at the first c: before it, whether it was found, after it.
func cutByte(s string, c byte) (before string, found bool, after string) {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return s[:i], true, s[i+1:]
		}
	}
	return s, false, ""
}

// jsonList reads a JSON list incrementally, re-serialising each object
// element's "name", "arguments" and fallback-arguments fields as Python's
// json module would (a repeated key keeps its last value).
type jsonList struct {
	State listState
	// Obj reads an object element; Val any other element.
	Obj   pyjson.Object
	Val   pyjson.Value
	IsObj bool
	Cur   listElem
	Elems []listElem
	Err   bool
}

// listElem is what an element told about itself.
type listElem struct {
	Object bool
	// Fields holds the canonical values of the fields calls read; a
	// repeated key starts over, as Python keeps the last value.
	Fields map[string][]byte
}

// listState is where a jsonList is.
type listState uint8

const (
	lsOpen  listState = iota // before '['
	lsFirst                  // after '[': a value or ']'
	lsElem                   // inside an element
	lsAfter                  // after an element: ',' or ']'
	lsNext                   // after ',': a value
	lsDone                   // after ']'
)

// open consumes the '[' the caller has already matched.
func (l *jsonList) open() { l.State = lsFirst }

func (l *jsonList) done() bool { return !l.Err && l.State == lsDone }

// feed consumes list text; trailing bytes after ']' are an error.
func (l *jsonList) feed(s string) {
	for i := 0; i < len(s) && !l.Err; {
		c := s[i]
		switch l.State {
		case lsOpen, lsFirst, lsAfter, lsNext, lsDone:
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			case l.State == lsOpen && c == '[':
				l.State = lsFirst
			case (l.State == lsFirst || l.State == lsAfter) && c == ']':
				l.State = lsDone
			case l.State == lsAfter && c == ',':
				l.State = lsNext
			case l.State == lsFirst || l.State == lsNext:
				l.State, l.IsObj = lsElem, c == '{'
				l.Cur = listElem{Object: l.IsObj}
				l.Obj, l.Val = pyjson.Object{}, pyjson.Value{}
				continue
			default:
				l.Err = true
			}
			i++
		case lsElem:
			var n int
			var err error
			var done bool
			if l.IsObj {
				n, err = l.Obj.Feed(s[i:], &l.Cur)
				done = l.Obj.Done()
			} else {
				_, n, err = l.Val.Feed(nil, s[i:])
				done = l.Val.Done()
			}
			i += n
			if err != nil {
				l.Err = true
				return
			}
			if done {
				l.Elems = append(l.Elems, l.Cur)
				l.Cur = listElem{}
				l.State = lsAfter
			}
		}
	}
}

func (e *listElem) Field(key string) {
	if e.Fields == nil {
		e.Fields = map[string][]byte{}
	}
	e.Fields[key] = e.Fields[key][:0]
}

func (e *listElem) FieldBytes(key string, canon []byte) {
	if key == "name" || key == "arguments" || key == "parameters" {
		e.Fields[key] = append(e.Fields[key], canon...)
	}
}

func (e *listElem) FieldEnd(string) {}

// calls turns the elements into calls: each must be an object with a
// string "name" and "arguments" (else the alt key); ok is false when one
// is not.
func (l *jsonList) calls(alt string) ([]ToolCallDelta, bool) {
	out := make([]ToolCallDelta, 0, len(l.Elems))
	for i, e := range l.Elems {
		if !e.Object {
			return nil, false
		}
		canon, has := e.Fields["name"]
		name, ok := decodeString(canon)
		if !has || !ok {
			return nil, false
		}
		args, has := e.Fields["arguments"]
		if !has {
			if args, has = e.Fields[alt]; !has {
				return nil, false
			}
		}
		out = append(out, ToolCallDelta{Index: i, ID: newToolCallID(), Type: "function", Name: name, Arguments: string(args)})
	}
	return out, true
}
