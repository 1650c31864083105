package parsers

import "github.com/vrender/vrender/internal/statecodec"

// Jamba tool calls, as vLLM's JambaToolParser.extract_tool_calls: without
// "<tool_calls>" the output is content; otherwise the text between the
// first "<tool_calls>" and the first "</tool_calls>" after it must be JSON
// that Python iterates as call objects with "name" and "arguments" (a list
// of them; an empty object or string iterates zero times), arguments
// re-serialised with json.dumps. Content is the text before "<tool_calls>"
// (null when empty or whitespace); text after "</tool_calls>" is dropped.
// Any failure gives no calls and the whole output as content, so the raw
// text from "<tool_calls>" on is held until the closing marker.
//
// vLLM refuses to build this parser for a tokenizer without the two
// markers in its vocabulary; this machine finds them in text and does not.

const (
	jambaOpen  = "<tool_calls>"
	jambaClose = "</tool_calls>"
)

var (
	jambaOpenMarkers  = []string{jambaOpen}
	jambaCloseMarkers = []string{jambaClose}
)

// jambaPhase is where a jamba machine is.
type jambaPhase uint8

const (
	jambaText   jambaPhase = iota // before "<tool_calls>"
	jambaBody                     // inside the calls
	jambaAfter                    // after "</tool_calls>": the calls stand
	jambaFailed                   // everything is content
)

// jamba is the jamba tool-call machine.
type jamba struct {
	phase jambaPhase
	scan  markerScan
	// raw is the text from "<tool_calls>" on.
	raw  []byte
	list callList
}

func newJamba(Vocab, *Request) (toolMachine, error) { return &jamba{}, nil }

// Push implements toolMachine.
func (j *jamba) Push(text string) (content string, calls []ToolCallDelta) {
	switch j.phase {
	case jambaAfter:
		return "", nil
	case jambaFailed:
		return text, nil
	case jambaText:
		before, marker, rest := j.scan.next(text, jambaOpenMarkers)
		if marker == "" {
			return before, nil
		}
		content = before
		j.phase = jambaBody
		j.raw = append(j.raw, marker...)
		j.list = newCallList(0, []string{"arguments"}, true)
		text = rest
	}
	before, marker, rest := j.scan.next(text, jambaCloseMarkers)
	j.raw = append(j.raw, before...)
	calls = j.feed(before, calls)
	if !j.list.failed && marker != "" {
		j.list.end()
	}
	if j.list.failed {
		j.raw = append(append(append(j.raw, j.scan.flush()...), marker...), rest...)
		return content + j.release(), calls
	}
	if marker != "" {
		j.phase = jambaAfter
		j.raw = nil
	}
	return content, calls
}

// feed passes body text to the list; only whitespace may follow the JSON.
func (j *jamba) feed(text string, calls []ToolCallDelta) []ToolCallDelta {
	if j.list.failed {
		return calls
	}
	n, calls := j.list.feed(text, calls)
	if !j.list.failed && !isJSONSpace(text[n:]) {
		j.list.failed = true
	}
	return calls
}

// release switches to passthrough and hands out the held raw text.
func (j *jamba) release() string {
	j.phase = jambaFailed
	out := string(j.raw)
	j.raw = nil
	return out
}

// Finish implements toolMachine.
func (j *jamba) Finish() (string, []ToolCallDelta) {
	switch j.phase {
	case jambaText:
		return j.scan.flush(), nil
	case jambaBody:
		j.raw = append(j.raw, j.scan.flush()...)
		return j.release(), nil
	}
	return "", nil
}

// Called implements toolMachine.
func (j *jamba) Called() bool { return j.phase == jambaAfter }

// codec saves and restores the state of a jamba.
func (j *jamba) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &j.phase, 4)
	j.scan.codec(c)
	c.ByteSlice(&j.raw)
	j.list.codec(c)
}
