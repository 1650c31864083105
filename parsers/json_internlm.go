package parsers

import (
	"strings"

	"github.com/vrender/vrender/internal/statecodec"
)

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

const (
	internlmStart = "<|action_start|><|plugin|>"
	internlmEnd   = "<|action_end|>"
)

var (
	internlmStartMarkers = []string{internlmStart}
	internlmBodyMarkers  = []string{internlmStart, internlmEnd}
)

// internlmPhase is where an internLM machine is.
type internlmPhase uint8

const (
	internlmText   internlmPhase = iota // before the start marker
	internlmSeek                        // in the action, before its "{"
	internlmObj                         // in the action's object
	internlmAfter                       // after the action: only no second start
	internlmFailed                      // everything is content
)

// internLM is the internlm tool-call machine.
type internLM struct {
	phase internlmPhase
	scan  markerScan
	// raw is the text from the start marker on: the content on failure.
	raw  []byte
	call callObject
}

func newInternLM(Vocab, *Request) (toolMachine, error) { return &internLM{}, nil }

// Push implements toolMachine.
func (m *internLM) Push(text string) (content string, calls []ToolCallDelta) {
	switch m.phase {
	case internlmFailed:
		return text, nil
	case internlmText:
		before, marker, rest := m.scan.next(text, internlmStartMarkers)
		if marker == "" {
			return before, nil
		}
		content = before
		m.raw = append(m.raw, marker...)
		m.phase = internlmSeek
		m.call = newCallObject(0, []string{"parameters", "arguments"}, "{}", false)
		text = rest
	}
	markers := internlmBodyMarkers
	if m.phase == internlmAfter {
		markers = internlmStartMarkers
	}
	before, marker, rest := m.scan.next(text, markers)
	m.raw = append(m.raw, before...)
	calls = m.action(before, calls)
	switch {
	case m.phase == internlmFailed:
		return content + m.fail(marker+rest), calls
	case marker == internlmStart:
		m.raw = append(m.raw, marker...)
		return content + m.fail(rest), calls
	case marker == internlmEnd:
		if m.phase == internlmSeek {
			m.raw = append(m.raw, marker...)
			return content + m.fail(rest), calls
		}
		if calls = m.call.end(calls); m.call.failed {
			m.raw = append(m.raw, marker...)
			return content + m.fail(rest), calls
		}
		m.raw = append(m.raw, marker...)
		m.phase = internlmAfter
		more, moreCalls := m.Push(rest)
		return content + more, append(calls, moreCalls...)
	}
	return content, calls
}

// action reads action text: skips to the first "{", then feeds the object;
// only whitespace may follow it.
func (m *internLM) action(text string, calls []ToolCallDelta) []ToolCallDelta {
	if m.phase == internlmSeek {
		i := strings.IndexByte(text, '{')
		if i < 0 {
			return calls
		}
		text = text[i:]
		m.phase = internlmObj
	}
	if m.phase != internlmObj || text == "" {
		return calls
	}
	n, calls := m.call.feed(text, calls)
	if m.call.failed || !isJSONSpace(text[n:]) {
		m.phase = internlmFailed
	}
	return calls
}

// fail switches to passthrough and returns the held raw text and rest.
func (m *internLM) fail(rest string) string {
	m.phase = internlmFailed
	out := string(m.raw) + m.scan.flush() + rest
	m.raw = nil
	return out
}

// Finish implements toolMachine.
func (m *internLM) Finish() (string, []ToolCallDelta) {
	held := m.scan.flush()
	switch m.phase {
	case internlmText:
		return held, nil
	case internlmSeek:
		m.raw = append(m.raw, held...)
		return m.fail(""), nil
	case internlmObj:
		m.raw = append(m.raw, held...)
		calls := m.action(held, nil)
		if m.phase == internlmObj {
			if calls = m.call.end(calls); !m.call.failed {
				m.phase = internlmAfter
				m.raw = nil
				return "", calls
			}
		}
		return m.fail(""), calls
	case internlmAfter:
		m.raw = nil
	}
	return "", nil
}

// Called implements toolMachine.
func (m *internLM) Called() bool { return m.phase == internlmAfter }

// codec saves and restores the state of an internLM.
func (m *internLM) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &m.phase, 5)
	m.scan.codec(c)
	c.ByteSlice(&m.raw)
	m.call.codec(c)
}
