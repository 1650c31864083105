package parsers

// Granite 4 tool calls, as vLLM's Granite4ToolParser.extract_tool_calls:
// "<tool_call>" and "</tool_call>" must alternate, starting with an
// opening one and ending closed; each body must be one JSON object with a
// string "name" and an "arguments" value, which is passed through when a
// string and re-serialised with json.dumps otherwise (null fails). The
// content is all text outside calls joined (null when empty). Any failure
// gives no calls and the whole output as content. Text before the first
// marker streams at once; later text is held until the output ends, since
// a later failure turns the raw output into the content.

func init() {
	registerTool("granite4", ToolInfo{New: newGranite4, NeedsSpecialTokens: true, SupportsRequiredAndNamed: true})
}

var granite4Markers = []string{toolCallOn, toolCallOff}

// granite4Phase is where a Granite4 machine is.
type granite4Phase uint8

const (
	granite4Text    granite4Phase = iota // before the first marker
	granite4Body                         // inside a call
	granite4Between                      // after a call
	granite4Failed                       // everything is content
)

// Granite4 is the granite4 tool-call machine.
type Granite4 struct {
	Phase granite4Phase
	Scan  markerScan
	// Raw is the text from the first "<tool_call>" on, Segs the text
	// outside calls after it: the content on failure and on success.
	Raw  []byte
	Segs []byte
	// Body is set once the current call has text.
	Body  bool
	Calls int
	Call  callObject
}

func newGranite4(Vocab, *Request) (ToolMachine, error) { return &Granite4{}, nil }

// Push implements ToolMachine.
func (g *Granite4) Push(text string) (content string, calls []ToolCallDelta) {
	for {
		if g.Phase == granite4Failed {
			return content + text, calls
		}
		before, marker, rest := g.Scan.next(text, granite4Markers)
		switch g.Phase {
		case granite4Text:
			content += before
		case granite4Between:
			g.Raw = append(g.Raw, before...)
			g.Segs = append(g.Segs, before...)
		case granite4Body:
			g.Raw = append(g.Raw, before...)
			calls = g.feed(before, calls)
		}
		if marker == "" {
			if g.Phase == granite4Body && g.Call.Failed {
				content += g.fail()
			}
			return content, calls
		}
		g.Raw = append(g.Raw, marker...)
		text = rest
		switch {
		case marker == toolCallOn && g.Phase != granite4Body:
			g.Phase = granite4Body
			g.Body = false
			g.Call = newCallObject(g.Calls, []string{"arguments"}, "", true)
			g.Calls++
		case marker == toolCallOff && g.Phase == granite4Body:
			if calls = g.Call.end(calls); g.Call.Failed || !g.Body {
				content += g.fail()
				continue
			}
			g.Phase = granite4Between
		default:
			content += g.fail()
		}
	}
}

// feed passes body text to the call; only whitespace may follow it.
func (g *Granite4) feed(text string, calls []ToolCallDelta) []ToolCallDelta {
	if text == "" || g.Call.Failed {
		return calls
	}
	g.Body = true
	n, calls := g.Call.feed(text, calls)
	if !g.Call.Failed && !isJSONSpace(text[n:]) {
		g.Call.Failed = true
	}
	return calls
}

// fail switches to passthrough and returns the held raw text.
func (g *Granite4) fail() string {
	g.Phase = granite4Failed
	out := string(g.Raw) + g.Scan.flush()
	g.Raw, g.Segs = nil, nil
	return out
}

// Finish implements ToolMachine.
func (g *Granite4) Finish() (string, []ToolCallDelta) {
	switch g.Phase {
	case granite4Text:
		return g.Scan.flush(), nil
	case granite4Body:
		g.Raw = append(g.Raw, g.Scan.flush()...)
		return g.fail(), nil
	case granite4Between:
		out := string(g.Segs) + g.Scan.flush()
		g.Raw, g.Segs = nil, nil
		return out, nil
	}
	return "", nil
}

// Called implements ToolMachine.
func (g *Granite4) Called() bool { return g.Phase == granite4Between }
