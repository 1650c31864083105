package parsers

import (
	"encoding/json"
	"fmt"
	"github.com/vrender/vrender/internal/statecodec"
	"strings"
	"unicode/utf8"

	"github.com/vrender/vrender/parsers/pyjson"
)

// Mistral tool calls, as vLLM's MistralToolParser.extract_tool_calls with
// a tokenizer.json (not mistral_common) tokenizer. The output splits at
// "[TOOL_CALLS]"; the text before the first is the content (null when
// whitespace), and tools count as called as soon as the marker appears.
// The format depends on the vocabulary:
//
//   - with "[ARGS]" (v11+): each part after a marker is NAME{ARGS...}: the
//     name is the text before its first "{" with "[ARGS]" removed, the
//     arguments are the rest of the part, raw and unchecked; a part
//     without "{" is skipped.
//   - without (pre-v11): exactly one marker; the text after it, stripped,
//     must start with JSON (raw_decode: trailing text ignored) that Python
//     iterates as {"name": str, "arguments": any} objects, arguments
//     re-serialised with json.dumps ({} when absent). When that JSON does
//     not parse, the first "[{" to the last "}]" is tried with json.loads.
//     Calls stream when the JSON starts with "[{" (the fallback cannot
//     succeed then); otherwise they go out when the output ends.
//
// vLLM refuses to build the parser for a vocabulary without
// "[TOOL_CALLS]"; so does this one.
//
// Deviation: where vLLM's pre-v11 path raises (a second marker, JSON that
// is not a list of call objects) the server answers with an error; this
// machine returns no calls and the whole output as content.

const (
	mistralBot  = "[TOOL_CALLS]"
	mistralArgs = "[ARGS]"
)

var mistralMarkers = []string{mistralBot}

// mistralToolPhase is where a mistral machine is.
type mistralToolPhase uint8

const (
	mtText   mistralToolPhase = iota // before the first marker
	mtPart                           // v11: in a part after a marker
	mtPre                            // pre-v11: after the marker
	mtFailed                         // pre-v11 failed: everything is content
)

// mistral is the mistral tool machine.
type mistral struct {
	v11   bool
	phase mistralToolPhase
	scan  markerScan
	// v11: Name collects the part's name until its "{"; InArgs is set
	// after it; Count counts calls.
	name   []byte
	inArgs bool
	count  int
	// pre-v11: Raw is the text from the marker on (the content on
	// failure); S the text after it with leading whitespace skipped once
	// Lead is set; Mode is 's' streaming a "[{" list, 'b' buffering a
	// JSON value, 'x' no JSON at the start (regex fallback at the end).
	raw      []byte
	s        []byte
	lead     bool
	mode     byte
	list     callList
	buffered []ToolCallDelta
	success  bool
}

func newMistral(v Vocab, _ *Request) (toolMachine, error) {
	if v == nil {
		return nil, fmt.Errorf("mistral tool parser: no vocabulary")
	}
	if _, ok := v.TokenToID(mistralBot); !ok {
		return nil, fmt.Errorf("mistral tool parser: the tokenizer has no %s token", mistralBot)
	}
	_, v11 := v.TokenToID(mistralArgs)
	return &mistral{v11: v11}, nil
}

// Push implements toolMachine.
func (m *mistral) Push(text string) (content string, calls []ToolCallDelta) {
	for {
		switch m.phase {
		case mtFailed:
			return content + text, calls
		case mtText:
			before, marker, rest := m.scan.next(text, mistralMarkers)
			content += before
			if marker == "" {
				return content, calls
			}
			if m.v11 {
				m.startPart()
			} else {
				m.phase = mtPre
				m.raw = append(m.raw, marker...)
				m.list = newCallList(0, []string{"arguments"}, true)
				m.list.defaultArgs = "{}"
			}
			text = rest
		case mtPart:
			before, marker, rest := m.scan.next(text, mistralMarkers)
			calls = m.part(before, calls)
			if marker == "" {
				return content, calls
			}
			m.startPart()
			text = rest
		case mtPre:
			before, marker, rest := m.scan.next(text, mistralMarkers)
			m.raw = append(m.raw, before...)
			calls = m.pre(before, calls)
			if marker == "" {
				return content, calls
			}
			// A second marker: vLLM raises.
			m.raw = append(m.raw, marker...)
			return content + m.fail() + rest, calls
		}
	}
}

func (m *mistral) startPart() {
	m.phase = mtPart
	m.name = m.name[:0]
	m.inArgs = false
}

// part handles v11 text of a part.
func (m *mistral) part(s string, calls []ToolCallDelta) []ToolCallDelta {
	if s == "" {
		return calls
	}
	if !m.inArgs {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			m.name = append(m.name, s...)
			return calls
		}
		m.name = append(m.name, s[:i]...)
		name := strings.ReplaceAll(string(m.name), mistralArgs, "")
		m.name = m.name[:0]
		m.inArgs = true
		calls = append(calls, ToolCallDelta{Index: m.count, ID: newMistralID(), Type: "function", Name: name})
		m.count++
		s = s[i:]
	}
	return appendArgs(calls, m.count-1, s)
}

// pre handles pre-v11 text after the marker.
func (m *mistral) pre(s string, calls []ToolCallDelta) []ToolCallDelta {
	if m.mode == 0 {
		m.s = append(m.s, s...)
		if !m.lead {
			i := 0
			for i < len(m.s) && utf8.FullRune(m.s[i:]) {
				r, size := utf8.DecodeRune(m.s[i:])
				if !pyIsSpace(r) {
					m.lead = true
					break
				}
				i += size
			}
			m.s = m.s[i:]
			if !m.lead {
				return calls
			}
		}
		switch c := m.s[0]; {
		case c == '[' && len(m.s) == 1:
			return calls
		case c == '[' && m.s[1] == '{':
			m.mode = 's'
		case strings.IndexByte(`[{"-0123456789tfn`, c) >= 0:
			m.mode = 'b'
		default:
			m.mode = 'x'
			return calls
		}
		s = string(m.s)
		if m.mode == 's' {
			m.s = nil
		}
	} else if m.mode != 's' {
		m.s = append(m.s, s...)
	}
	if m.mode == 'x' || m.list.failed || m.list.state == clDone {
		return calls
	}
	_, out := m.list.feed(s, nil)
	for i := range out {
		if out[i].ID != "" {
			out[i].ID = newMistralID()
		}
	}
	if m.mode == 's' {
		return append(calls, out...)
	}
	m.buffered = append(m.buffered, out...)
	return calls
}

// fail switches to passthrough and returns the held text.
func (m *mistral) fail() string {
	m.phase = mtFailed
	out := string(m.raw) + m.scan.flush()
	m.raw, m.s, m.buffered = nil, nil, nil
	return out
}

// Finish implements toolMachine.
func (m *mistral) Finish() (string, []ToolCallDelta) {
	held := m.scan.flush()
	switch m.phase {
	case mtText:
		return held, nil
	case mtPart:
		return "", m.part(held, nil)
	case mtPre:
		m.raw = append(m.raw, held...)
		streamed := m.pre(held, nil)
		if m.mode != 'x' && !m.list.failed {
			m.list.end()
		}
		if m.mode != 'x' && !m.list.failed {
			m.success = true
			calls := append(streamed, m.buffered...)
			m.raw, m.s, m.buffered = nil, nil, nil
			return "", calls
		}
		if m.mode != 's' && !startsWithJSONValue(m.s) {
			if calls, ok := mistralFallback(m.s); ok {
				m.success = true
				m.raw, m.s, m.buffered = nil, nil, nil
				return "", calls
			}
		}
		return m.fail(), nil
	}
	return "", nil
}

// Called implements toolMachine.
func (m *mistral) Called() bool {
	return m.phase == mtPart || m.phase == mtPre && m.success
}

// startsWithJSONValue reports whether Python's raw_decode would read a
// value at the start of s.
func startsWithJSONValue(s []byte) bool {
	var v any
	return json.NewDecoder(strings.NewReader(string(s))).Decode(&v) == nil
}

// mistralFallback is the pre-v11 regex fallback: json.loads of the first
// "[{" to the last "}]", a list of call objects.
func mistralFallback(s []byte) ([]ToolCallDelta, bool) {
	i := strings.Index(string(s), "[{")
	j := strings.LastIndex(string(s), "}]")
	if i < 0 || j < i+2 {
		return nil, false
	}
	var items []map[string]json.RawMessage
	if json.Unmarshal(s[i:j+2], &items) != nil {
		return nil, false
	}
	calls := make([]ToolCallDelta, 0, len(items))
	for k, item := range items {
		var name string
		if item == nil || json.Unmarshal(item["name"], &name) != nil {
			return nil, false
		}
		args := "{}"
		if raw, ok := item["arguments"]; ok {
			c, err := pyjson.Canonical(string(raw))
			if err != nil {
				return nil, false
			}
			args = c
		}
		calls = append(calls, ToolCallDelta{Index: k, ID: newMistralID(), Type: "function", Name: name, Arguments: args})
	}
	return calls, true
}

// newMistralID is MistralToolCall.generate_random_id: nine alphanumerics.
func newMistralID() string {
	id := newToolCallID()
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return 'x'
	}, id[len(id)-9:])
}

// codec saves and restores the state of a mistral.
func (m *mistral) codec(c *statecodec.Codec) {
	c.Bool(&m.v11)
	statecodec.Enum(c, &m.phase, 4)
	m.scan.codec(c)
	c.ByteSlice(&m.name)
	c.Bool(&m.inArgs)
	c.Int(&m.count)
	c.ByteSlice(&m.raw)
	c.ByteSlice(&m.s)
	c.Bool(&m.lead)
	c.Byte(&m.mode)
	m.list.codec(c)
	statecodec.Slice(c, &m.buffered, codecCallDelta)
	c.Bool(&m.success)
}
