package parsers

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

func init() {
	registerTool("jamba", ToolInfo{New: newJamba, NeedsSpecialTokens: true, SupportsRequiredAndNamed: true})
}

const (
	jambaOpen  = "<tool_calls>"
	jambaClose = "</tool_calls>"
)

var (
	jambaOpenMarkers  = []string{jambaOpen}
	jambaCloseMarkers = []string{jambaClose}
)

// jambaPhase is where a Jamba machine is.
type jambaPhase uint8

const (
	jambaText   jambaPhase = iota // before "<tool_calls>"
	jambaBody                     // inside the calls
	jambaAfter                    // after "</tool_calls>": the calls stand
	jambaFailed                   // everything is content
)

// Jamba is the jamba tool-call machine.
type Jamba struct {
	Phase jambaPhase
	Scan  markerScan
	// Raw is the text from "<tool_calls>" on.
	Raw  []byte
	List callList
}

func newJamba(Vocab, *Request) (ToolMachine, error) { return &Jamba{}, nil }

// Push implements ToolMachine.
func (j *Jamba) Push(text string) (content string, calls []ToolCallDelta) {
	switch j.Phase {
	case jambaAfter:
		return "", nil
	case jambaFailed:
		return text, nil
	case jambaText:
		before, marker, rest := j.Scan.next(text, jambaOpenMarkers)
		if marker == "" {
			return before, nil
		}
		content = before
		j.Phase = jambaBody
		j.Raw = append(j.Raw, marker...)
		j.List = newCallList(0, []string{"arguments"}, true)
		text = rest
	}
	before, marker, rest := j.Scan.next(text, jambaCloseMarkers)
	j.Raw = append(j.Raw, before...)
	calls = j.feed(before, calls)
	if !j.List.Failed && marker != "" {
		j.List.end()
	}
	if j.List.Failed {
		j.Raw = append(append(append(j.Raw, j.Scan.flush()...), marker...), rest...)
		return content + j.release(), calls
	}
	if marker != "" {
		j.Phase = jambaAfter
		j.Raw = nil
	}
	return content, calls
}

// feed passes body text to the list; only whitespace may follow the JSON.
func (j *Jamba) feed(text string, calls []ToolCallDelta) []ToolCallDelta {
	if j.List.Failed {
		return calls
	}
	n, calls := j.List.feed(text, calls)
	if !j.List.Failed && !isJSONSpace(text[n:]) {
		j.List.Failed = true
	}
	return calls
}

// release switches to passthrough and hands out the held raw text.
func (j *Jamba) release() string {
	j.Phase = jambaFailed
	out := string(j.Raw)
	j.Raw = nil
	return out
}

// Finish implements ToolMachine.
func (j *Jamba) Finish() (string, []ToolCallDelta) {
	switch j.Phase {
	case jambaText:
		return j.Scan.flush(), nil
	case jambaBody:
		j.Raw = append(j.Raw, j.Scan.flush()...)
		return j.release(), nil
	}
	return "", nil
}

// Called implements ToolMachine.
func (j *Jamba) Called() bool { return j.Phase == jambaAfter }
