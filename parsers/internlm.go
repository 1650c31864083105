package parsers

import "strings"

// InternLM2 tool calls, as vLLM's Internlm2ToolParser.extract_tool_calls:
// the output splits at "<|action_start|><|plugin|>" into content (null
// when empty) and an action; the action up to the first "<|action_end|>",
// from its first "{", must be one JSON object with a string "name"; its
// arguments are "parameters", else "arguments", else {}, re-serialised
// with json.dumps. Only one call is possible.
//
// Deviation: where vLLM's parser raises (a second start marker, an action
// without a valid object, a missing or non-string name) the server
// answers with an error; this machine returns no calls and the whole
// output as content instead, as the other families do.

func init() {
	registerTool("internlm", ToolInfo{New: newInternLM, NeedsSpecialTokens: true, SupportsRequiredAndNamed: true})
}

const (
	internlmStart = "<|action_start|><|plugin|>"
	internlmEnd   = "<|action_end|>"
)

var (
	internlmStartMarkers = []string{internlmStart}
	internlmBodyMarkers  = []string{internlmStart, internlmEnd}
)

// internlmPhase is where an InternLM machine is.
type internlmPhase uint8

const (
	internlmText   internlmPhase = iota // before the start marker
	internlmSeek                        // in the action, before its "{"
	internlmObj                         // in the action's object
	internlmAfter                       // after the action: only no second start
	internlmFailed                      // everything is content
)

// InternLM is the internlm tool-call machine.
type InternLM struct {
	Phase internlmPhase
	Scan  markerScan
	// Raw is the text from the start marker on: the content on failure.
	Raw  []byte
	Call callObject
}

func newInternLM(Vocab, *Request) (ToolMachine, error) { return &InternLM{}, nil }

// Push implements ToolMachine.
func (m *InternLM) Push(text string) (content string, calls []ToolCallDelta) {
	switch m.Phase {
	case internlmFailed:
		return text, nil
	case internlmText:
		before, marker, rest := m.Scan.next(text, internlmStartMarkers)
		if marker == "" {
			return before, nil
		}
		content = before
		m.Raw = append(m.Raw, marker...)
		m.Phase = internlmSeek
		m.Call = newCallObject(0, []string{"parameters", "arguments"}, "{}", false)
		text = rest
	}
	markers := internlmBodyMarkers
	if m.Phase == internlmAfter {
		markers = internlmStartMarkers
	}
	before, marker, rest := m.Scan.next(text, markers)
	m.Raw = append(m.Raw, before...)
	calls = m.action(before, calls)
	switch {
	case m.Phase == internlmFailed:
		return content + m.fail(marker+rest), calls
	case marker == internlmStart:
		m.Raw = append(m.Raw, marker...)
		return content + m.fail(rest), calls
	case marker == internlmEnd:
		if m.Phase == internlmSeek {
			m.Raw = append(m.Raw, marker...)
			return content + m.fail(rest), calls
		}
		if calls = m.Call.end(calls); m.Call.Failed {
			m.Raw = append(m.Raw, marker...)
			return content + m.fail(rest), calls
		}
		m.Raw = append(m.Raw, marker...)
		m.Phase = internlmAfter
		more, moreCalls := m.Push(rest)
		return content + more, append(calls, moreCalls...)
	}
	return content, calls
}

// action reads action text: skips to the first "{", then feeds the object;
// only whitespace may follow it.
func (m *InternLM) action(text string, calls []ToolCallDelta) []ToolCallDelta {
	if m.Phase == internlmSeek {
		i := strings.IndexByte(text, '{')
		if i < 0 {
			return calls
		}
		text = text[i:]
		m.Phase = internlmObj
	}
	if m.Phase != internlmObj || text == "" {
		return calls
	}
	n, calls := m.Call.feed(text, calls)
	if m.Call.Failed || !isJSONSpace(text[n:]) {
		m.Phase = internlmFailed
	}
	return calls
}

// fail switches to passthrough and returns the held raw text and rest.
func (m *InternLM) fail(rest string) string {
	m.Phase = internlmFailed
	out := string(m.Raw) + m.Scan.flush() + rest
	m.Raw = nil
	return out
}

// Finish implements ToolMachine.
func (m *InternLM) Finish() (string, []ToolCallDelta) {
	held := m.Scan.flush()
	switch m.Phase {
	case internlmText:
		return held, nil
	case internlmSeek:
		m.Raw = append(m.Raw, held...)
		return m.fail(""), nil
	case internlmObj:
		m.Raw = append(m.Raw, held...)
		calls := m.action(held, nil)
		if m.Phase == internlmObj {
			if calls = m.Call.end(calls); !m.Call.Failed {
				m.Phase = internlmAfter
				m.Raw = nil
				return "", calls
			}
		}
		return m.fail(""), calls
	case internlmAfter:
		m.Raw = nil
	}
	return "", nil
}

// Called implements ToolMachine.
func (m *InternLM) Called() bool { return m.Phase == internlmAfter }
