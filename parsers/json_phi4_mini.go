package parsers

import (
	"github.com/vrender/vrender/parsers/pyjson"

	"github.com/vrender/vrender/internal/statecodec"
)

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

// phi4MiniJSON is the phi4_mini_json tool machine.
type phi4MiniJSON struct {
	phase phi4Phase
	scan  markerScan
	// raw is the text so far while no verdict is reached.
	raw  []byte
	list jsonList
	// calls is true once the verdict is tools_called.
	calls bool
}

func newPhi4MiniJSON(Vocab, *Request) (toolMachine, error) { return &phi4MiniJSON{}, nil }

// Push implements toolMachine.
func (p *phi4MiniJSON) Push(text string) (string, []ToolCallDelta) {
	switch p.phase {
	case phi4Fallback:
		return text, nil
	case phi4Called:
		return "", nil
	case phi4Text:
		before, marker, rest := p.scan.next(text, phi4Markers)
		p.raw = append(p.raw, before...)
		if marker == "" {
			return "", nil
		}
		p.raw = append(p.raw, marker...)
		p.phase = phi4Body
		p.list.open()
		text = rest
	}
	body, closed, rest := cutByte(text, ']')
	p.raw = append(p.raw, body...)
	p.list.feed(body)
	if !closed {
		return "", nil
	}
	p.raw = append(p.raw, ']')
	p.list.feed("]")
	return p.verdict(rest)
}

// Finish implements toolMachine.
func (p *phi4MiniJSON) Finish() (string, []ToolCallDelta) {
	switch p.phase {
	case phi4Text, phi4Body:
		// No "]" closed a list: the regex finds no match.
		p.phase = phi4Fallback
		out := string(p.raw) + p.scan.flush()
		p.raw = nil
		return out, nil
	}
	return "", nil
}

// Called implements toolMachine.
func (p *phi4MiniJSON) Called() bool { return p.calls }

// verdict settles the list once its "]" arrived; rest follows the "]".
func (p *phi4MiniJSON) verdict(rest string) (string, []ToolCallDelta) {
	l := &p.list
	if !l.done() {
		p.phase, p.calls, p.raw = phi4Called, true, nil
		return "", nil
	}
	calls, ok := l.calls("parameters")
	if !ok {
		p.phase = phi4Fallback
		out := string(p.raw) + rest
		p.raw = nil
		return out, nil
	}
	p.phase, p.calls, p.raw = phi4Called, true, nil
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
	state listState
	// obj reads an object element; Val any other element.
	obj   pyjson.Object
	val   pyjson.Value
	isObj bool
	cur   listElem
	elems []listElem
	err   bool
}

// listElem is what an element told about itself.
type listElem struct {
	object bool
	// fields holds the canonical values of the fields calls read; a
	// repeated key starts over, as Python keeps the last value.
	fields map[string][]byte
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
func (l *jsonList) open() { l.state = lsFirst }

func (l *jsonList) done() bool { return !l.err && l.state == lsDone }

// feed consumes list text; trailing bytes after ']' are an error.
func (l *jsonList) feed(s string) {
	for i := 0; i < len(s) && !l.err; {
		c := s[i]
		switch l.state {
		case lsOpen, lsFirst, lsAfter, lsNext, lsDone:
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			case l.state == lsOpen && c == '[':
				l.state = lsFirst
			case (l.state == lsFirst || l.state == lsAfter) && c == ']':
				l.state = lsDone
			case l.state == lsAfter && c == ',':
				l.state = lsNext
			case l.state == lsFirst || l.state == lsNext:
				l.state, l.isObj = lsElem, c == '{'
				l.cur = listElem{object: l.isObj}
				l.obj, l.val = pyjson.Object{}, pyjson.Value{}
				continue
			default:
				l.err = true
			}
			i++
		case lsElem:
			var n int
			var err error
			var done bool
			if l.isObj {
				n, err = l.obj.Feed(s[i:], &l.cur)
				done = l.obj.Done()
			} else {
				_, n, err = l.val.Feed(nil, s[i:])
				done = l.val.Done()
			}
			i += n
			if err != nil {
				l.err = true
				return
			}
			if done {
				l.elems = append(l.elems, l.cur)
				l.cur = listElem{}
				l.state = lsAfter
			}
		}
	}
}

func (e *listElem) Field(key string) {
	if e.fields == nil {
		e.fields = map[string][]byte{}
	}
	e.fields[key] = e.fields[key][:0]
}

func (e *listElem) FieldBytes(key string, canon []byte) {
	if key == "name" || key == "arguments" || key == "parameters" {
		e.fields[key] = append(e.fields[key], canon...)
	}
}

func (e *listElem) FieldEnd(string) {}

// calls turns the elements into calls: each must be an object with a
// string "name" and "arguments" (else the alt key); ok is false when one
// is not.
func (l *jsonList) calls(alt string) ([]ToolCallDelta, bool) {
	out := make([]ToolCallDelta, 0, len(l.elems))
	for i, e := range l.elems {
		if !e.object {
			return nil, false
		}
		canon, has := e.fields["name"]
		name, ok := decodeString(canon)
		if !has || !ok {
			return nil, false
		}
		args, has := e.fields["arguments"]
		if !has {
			if args, has = e.fields[alt]; !has {
				return nil, false
			}
		}
		out = append(out, ToolCallDelta{Index: i, ID: newToolCallID(), Type: "function", Name: name, Arguments: string(args)})
	}
	return out, true
}

// namedCalls is the reading of hunyuan_a13b and xlam: objects with both
// "name" and "arguments" make calls and other elements are skipped; a
// name that is not a string, or arguments neither an object nor a string
// (which is decoded), void them all (ok false).
func (l *jsonList) namedCalls() (calls []ToolCallDelta, ok bool) {
	for _, e := range l.elems {
		nameCanon, hasName := e.fields["name"]
		args, hasArgs := e.fields["arguments"]
		if !e.object || !hasName || !hasArgs {
			continue
		}
		name, ok := decodeString(nameCanon)
		if !ok {
			return nil, false
		}
		var a string
		switch {
		case len(args) > 0 && args[0] == '{':
			a = string(args)
		case len(args) > 0 && args[0] == '"':
			a, _ = decodeString(args)
		default:
			return nil, false
		}
		calls = append(calls, ToolCallDelta{Index: len(calls), ID: newToolCallID(), Type: "function", Name: name, Arguments: a})
	}
	return calls, true
}

// codec saves and restores the state of a phi4MiniJSON.
func (p *phi4MiniJSON) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &p.phase, 4)
	p.scan.codec(c)
	c.ByteSlice(&p.raw)
	p.list.codec(c)
	c.Bool(&p.calls)
}

// codec saves and restores the state of a jsonList.
func (l *jsonList) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &l.state, 6)
	l.obj.Codec(c)
	l.val.Codec(c)
	c.Bool(&l.isObj)
	l.cur.codec(c)
	statecodec.Slice(c, &l.elems, func(c *statecodec.Codec, v *listElem) { v.codec(c) })
	c.Bool(&l.err)
}

// codec saves and restores the state of a listElem.
func (e *listElem) codec(c *statecodec.Codec) {
	c.Bool(&e.object)
	statecodec.Map(c, &e.fields, (*statecodec.Codec).String, (*statecodec.Codec).ByteSlice)
}
