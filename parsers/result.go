package parsers

import "strings"

// ToolCall is a complete tool call of a non-streaming answer.
type ToolCall struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Result is the non-streaming answer: nil Content or Reasoning is JSON null.
type Result struct {
	Content      *string    `json:"content"`
	Reasoning    *string    `json:"reasoning"`
	ToolCalls    []ToolCall `json:"tool_calls"`
	FinishReason string     `json:"finish_reason"`
}

// Accumulator joins deltas into a Result, as a client concatenating a
// stream does.
type Accumulator struct {
	content, reasoning strings.Builder
	calls              []ToolCall
	args               []*strings.Builder
}

// Add appends one delta.
func (a *Accumulator) Add(d Delta) {
	a.content.WriteString(d.Content)
	a.reasoning.WriteString(d.Reasoning)
	for _, c := range d.ToolCalls {
		for len(a.calls) <= c.Index {
			a.calls = append(a.calls, ToolCall{})
			a.args = append(a.args, new(strings.Builder))
		}
		tc := &a.calls[c.Index]
		if c.ID != "" {
			tc.ID, tc.Type, tc.Name = c.ID, c.Type, c.Name
		}
		a.args[c.Index].WriteString(c.Arguments)
	}
}

// Content is the concatenated content so far.
func (a *Accumulator) Content() string { return a.content.String() }

// Reasoning is the concatenated reasoning so far.
func (a *Accumulator) Reasoning() string { return a.reasoning.String() }

// Calls are the tool calls streamed so far.
func (a *Accumulator) Calls() []ToolCall {
	for i := range a.calls {
		a.calls[i].Arguments = a.args[i].String()
	}
	return a.calls
}

// Result is the answer once p has finished: calls count only if the
// parser's final verdict keeps them, and empty parts are null where vLLM
// returns null.
func (a *Accumulator) Result(p *Parser, engineFinish string) Result {
	r := Result{ToolCalls: []ToolCall{}, FinishReason: p.FinishReason(engineFinish)}
	if p.ToolsCalled() {
		r.ToolCalls = append(r.ToolCalls, a.Calls()...)
	}
	if s := a.content.String(); s != "" || !p.ContentNull() {
		r.Content = &s
	}
	if s := a.reasoning.String(); s != "" || !p.ReasoningNull() {
		r.Reasoning = &s
	}
	return r
}
