package parsers

import "github.com/vrender/vrender/internal/statecodec"

// Granite 4 tool calls, as vLLM's Granite4ToolParser.extract_tool_calls:
// "<tool_call>" and "</tool_call>" must alternate, starting with an
// opening one and ending closed; each body must be one JSON object with a
// string "name" and an "arguments" value, which is passed through when a
// string and re-serialised with json.dumps otherwise (null fails). The
// content is all text outside calls joined (null when empty). Any failure
// gives no calls and the whole output as content. Text before the first
// marker streams at once; later text is held until the output ends, since
// a later failure turns the raw output into the content.

var granite4Markers = []string{toolCallStart, toolCallEnd}

// granite4Phase is where a granite4 machine is.
type granite4Phase uint8

const (
	granite4Text    granite4Phase = iota // before the first marker
	granite4Body                         // inside a call
	granite4Between                      // after a call
	granite4Failed                       // everything is content
)

// granite4 is the granite4 tool-call machine.
type granite4 struct {
	phase granite4Phase
	scan  markerScan
	// raw is the text from the first "<tool_call>" on, Segs the text
	// outside calls after it: the content on failure and on success.
	raw  []byte
	segs []byte
	// body is set once the current call has text.
	body  bool
	calls int
	call  callObject
}

func newGranite4(Vocab, *Request) (toolMachine, error) { return &granite4{}, nil }

// Push implements toolMachine.
func (g *granite4) Push(text string) (content string, calls []ToolCallDelta) {
	for {
		if g.phase == granite4Failed {
			return content + text, calls
		}
		before, marker, rest := g.scan.next(text, granite4Markers)
		switch g.phase {
		case granite4Text:
			content += before
		case granite4Between:
			g.raw = append(g.raw, before...)
			g.segs = append(g.segs, before...)
		case granite4Body:
			g.raw = append(g.raw, before...)
			calls = g.feed(before, calls)
		}
		if marker == "" {
			if g.phase == granite4Body && g.call.failed {
				content += g.fail()
			}
			return content, calls
		}
		g.raw = append(g.raw, marker...)
		text = rest
		switch {
		case marker == toolCallStart && g.phase != granite4Body:
			g.phase = granite4Body
			g.body = false
			g.call = newCallObject(g.calls, []string{"arguments"}, "", true)
			g.calls++
		case marker == toolCallEnd && g.phase == granite4Body:
			if calls = g.call.end(calls); g.call.failed || !g.body {
				content += g.fail()
				continue
			}
			g.phase = granite4Between
		default:
			content += g.fail()
		}
	}
}

// feed passes body text to the call; only whitespace may follow it.
func (g *granite4) feed(text string, calls []ToolCallDelta) []ToolCallDelta {
	if text == "" || g.call.failed {
		return calls
	}
	g.body = true
	n, calls := g.call.feed(text, calls)
	if !g.call.failed && !isJSONSpace(text[n:]) {
		g.call.failed = true
	}
	return calls
}

// fail switches to passthrough and returns the held raw text.
func (g *granite4) fail() string {
	g.phase = granite4Failed
	out := string(g.raw) + g.scan.flush()
	g.raw, g.segs = nil, nil
	return out
}

// Finish implements toolMachine.
func (g *granite4) Finish() (string, []ToolCallDelta) {
	switch g.phase {
	case granite4Text:
		return g.scan.flush(), nil
	case granite4Body:
		g.raw = append(g.raw, g.scan.flush()...)
		return g.fail(), nil
	case granite4Between:
		out := string(g.segs) + g.scan.flush()
		g.raw, g.segs = nil, nil
		return out, nil
	}
	return "", nil
}

// Called implements toolMachine.
func (g *granite4) Called() bool { return g.phase == granite4Between }

// codec saves and restores the state of a granite4.
func (g *granite4) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &g.phase, 4)
	g.scan.codec(c)
	c.ByteSlice(&g.raw)
	c.ByteSlice(&g.segs)
	c.Bool(&g.body)
	c.Int(&g.calls)
	g.call.codec(c)
}
