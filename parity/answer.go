package parity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/vrender/vrender/protocol"
)

// ToolCall is a tool call as compared: tool-call ids are random on both
// sides and never compared.
type ToolCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Answer is the comparable part of one chat choice. A nil Content or
// Reasoning is JSON null, which differs from "" in a non-streaming answer.
type Answer struct {
	Content      *string    `json:"content"`
	Reasoning    *string    `json:"reasoning"`
	ToolCalls    []ToolCall `json:"tool_calls"`
	FinishReason string     `json:"finish_reason"`
}

// wireMessage is an assistant message as vLLM sends it. Older vLLM names
// the reasoning reasoning_content; newer sends reasoning (and, with a
// compatibility flag, both).
type wireMessage struct {
	Content          *string `json:"content"`
	Reasoning        *string `json:"reasoning"`
	ReasoningContent *string `json:"reasoning_content"`
	ToolCalls        []struct {
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// answerFromWire reads vLLM's non-streaming message.
func answerFromWire(msg json.RawMessage, finish *string) (Answer, error) {
	var m wireMessage
	if err := json.Unmarshal(msg, &m); err != nil {
		return Answer{}, fmt.Errorf("decode message: %w", err)
	}
	a := Answer{Content: m.Content, Reasoning: m.Reasoning, ToolCalls: []ToolCall{}}
	if a.Reasoning == nil {
		a.Reasoning = m.ReasoningContent
	}
	for _, tc := range m.ToolCalls {
		a.ToolCalls = append(a.ToolCalls, ToolCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if finish != nil {
		a.FinishReason = *finish
	}
	return a, nil
}

// answerFromChoice reads vrender's non-streaming choice.
func answerFromChoice(c protocol.ChatCompletionChoice) Answer {
	a := Answer{Content: c.Message.Content, Reasoning: c.Message.Reasoning, ToolCalls: []ToolCall{}}
	for _, tc := range c.Message.ToolCalls {
		a.ToolCalls = append(a.ToolCalls, ToolCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if c.FinishReason != nil {
		a.FinishReason = *c.FinishReason
	}
	return a
}

// accumulator builds the answer a client assembles from stream deltas:
// text concatenated, tool calls by index (name once, argument fragments
// concatenated), the last finish_reason.
type accumulator struct {
	content, reasoning strings.Builder
	calls              []ToolCall
	finish             string
}

func (s *accumulator) add(d *protocol.DeltaMessage, finish *string) {
	if d.Content != nil {
		s.content.WriteString(*d.Content)
	}
	switch {
	case d.Reasoning != nil:
		s.reasoning.WriteString(*d.Reasoning)
	case d.ReasoningContent != nil:
		s.reasoning.WriteString(*d.ReasoningContent)
	}
	for _, tc := range d.ToolCalls {
		for len(s.calls) <= tc.Index {
			s.calls = append(s.calls, ToolCall{})
		}
		c := &s.calls[tc.Index]
		if tc.Function.Name != nil && c.Name == "" {
			c.Name = *tc.Function.Name
		}
		if tc.Function.Arguments != nil {
			c.Arguments += *tc.Function.Arguments
		}
	}
	if finish != nil {
		s.finish = *finish
	}
}

// answer is the accumulated stream; a stream never says null, so both
// texts are strings.
func (s *accumulator) answer() Answer {
	content, reasoning := s.content.String(), s.reasoning.String()
	calls := s.calls
	if calls == nil {
		calls = []ToolCall{}
	}
	return Answer{Content: &content, Reasoning: &reasoning, ToolCalls: calls, FinishReason: s.finish}
}

// Difference is one field on which two answers (or two token lists)
// disagree.
type Difference struct {
	// Field is content, reasoning, tool_calls, tool_calls[i].name,
	// tool_calls[i].arguments, finish_reason or token_ids.
	Field string `json:"field"`
	// Detail says where and how, with both sides quoted.
	Detail string `json:"detail"`
	// JSONEqual is set on an arguments difference whose two strings are
	// the same JSON value: a serialisation difference only.
	JSONEqual bool `json:"json_equal,omitempty"`
}

func (d Difference) String() string { return d.Field + ": " + d.Detail }

// sides names the two answers in a difference's detail.
type sides struct{ want, got string }

var (
	vllmVsVRender = sides{"vLLM", "vrender"}
	vllmVsStream  = sides{"vLLM non-stream", "vLLM stream"}
)

// compareAnswers lists the fields on which got (vrender's) differs from
// want (vLLM's). With stream set, null and "" are the same text: a stream
// cannot tell them apart.
func compareAnswers(want, got Answer, stream bool) []Difference {
	return compareAnswersAs(want, got, stream, vllmVsVRender)
}

func compareAnswersAs(want, got Answer, stream bool, n sides) []Difference {
	var diffs []Difference
	text := func(field string, w, g *string) {
		if stream {
			w, g = orEmpty(w), orEmpty(g)
		}
		switch {
		case w == nil && g == nil:
		case w == nil || g == nil:
			diffs = append(diffs, Difference{Field: field, Detail: fmt.Sprintf("%s %s, %s %s", n.want, showNullable(w), n.got, showNullable(g))})
		case *w != *g:
			diffs = append(diffs, Difference{Field: field, Detail: textDiff(*w, *g, n)})
		}
	}
	text("content", want.Content, got.Content)
	text("reasoning", want.Reasoning, got.Reasoning)
	diffs = append(diffs, compareCalls(want.ToolCalls, got.ToolCalls, n)...)
	if want.FinishReason != got.FinishReason {
		diffs = append(diffs, Difference{Field: "finish_reason",
			Detail: fmt.Sprintf("%s %q, %s %q", n.want, want.FinishReason, n.got, got.FinishReason)})
	}
	return diffs
}

func compareCalls(want, got []ToolCall, n sides) []Difference {
	if len(want) != len(got) {
		return []Difference{{Field: "tool_calls", Detail: fmt.Sprintf("%s %d call(s) %s, %s %d call(s) %s",
			n.want, len(want), callNames(want), n.got, len(got), callNames(got))}}
	}
	var diffs []Difference
	for i := range want {
		w, g := want[i], got[i]
		if w.Name != g.Name {
			diffs = append(diffs, Difference{Field: fmt.Sprintf("tool_calls[%d].name", i),
				Detail: fmt.Sprintf("%s %q, %s %q", n.want, w.Name, n.got, g.Name)})
		}
		if w.Arguments == g.Arguments {
			continue
		}
		d := Difference{Field: fmt.Sprintf("tool_calls[%d].arguments", i)}
		switch wv, werr := decodeJSON(w.Arguments); {
		case werr != nil:
			d.Detail = n.want + "'s are not JSON; as strings: " + textDiff(w.Arguments, g.Arguments, n)
		default:
			gv, gerr := decodeJSON(g.Arguments)
			switch {
			case gerr != nil:
				d.Detail = n.got + "'s are not JSON; as strings: " + textDiff(w.Arguments, g.Arguments, n)
			case reflect.DeepEqual(wv, gv):
				d.JSONEqual = true
				d.Detail = "equal as JSON, differ as strings: " + textDiff(w.Arguments, g.Arguments, n)
			default:
				d.Detail = "differ as JSON: " + textDiff(w.Arguments, g.Arguments, n)
			}
		}
		diffs = append(diffs, d)
	}
	return diffs
}

// decodeJSON reads one JSON value keeping numbers as written, so 1 and
// 1.0 differ as they do on the wire.
func decodeJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

func callNames(calls []ToolCall) string {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	b, _ := json.Marshal(names)
	return string(b)
}

func orEmpty(s *string) *string {
	if s == nil {
		e := ""
		return &e
	}
	return s
}

func showNullable(s *string) string {
	if s == nil {
		return "null"
	}
	return quoteWindow(*s, 0, 60)
}

// diffWindow is how many characters of context a text difference shows on
// each side of the first differing character.
const diffWindow = 24

// textDiff locates the first differing character of two texts and shows a
// window around it on both sides.
func textDiff(want, got string, n sides) string {
	w, g := []rune(want), []rune(got)
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	return fmt.Sprintf("first difference at character %d (lengths %d and %d): %s %s, %s %s",
		i, len(w), len(g), n.want, quoteWindow(want, i, diffWindow), n.got, quoteWindow(got, i, diffWindow))
}

// quoteWindow quotes the characters of s around rune position at, with
// ellipses where it was cut.
func quoteWindow(s string, at, width int) string {
	r := []rune(s)
	lo, hi := max(0, at-width), min(len(r), at+width)
	var b bytes.Buffer
	if lo > 0 {
		b.WriteString("…")
	}
	b.WriteString(fmt.Sprintf("%q", string(r[lo:hi])))
	if hi < len(r) {
		b.WriteString("…")
	}
	return b.String()
}
