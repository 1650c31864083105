package benchdata

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

type message struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

func TestConversation(t *testing.T) {
	sizes := append([]Size{{Name: "odd", Messages: 7, Words: 5}, {Name: "two", Messages: 2, Words: 3}}, Sizes...)
	for _, s := range sizes {
		t.Run(s.Name, func(t *testing.T) {
			q := Conversation(s)
			again := Conversation(s)
			a, _ := json.Marshal(q)
			b, _ := json.Marshal(again)
			if !bytes.Equal(a, b) {
				t.Error("two calls built different requests")
			}
			if len(q.Messages) != s.Messages || len(q.Tools) != len(Tools) || !q.AddGenerationPrompt {
				t.Fatalf("%d messages, %d tools, generation prompt %v; want %d, %d, true",
					len(q.Messages), len(q.Tools), q.AddGenerationPrompt, s.Messages, len(Tools))
			}
			msgs := make([]message, len(q.Messages))
			for i, raw := range q.Messages {
				if !utf8.Valid(raw) {
					t.Errorf("message %d is not valid UTF-8", i)
				}
				if err := json.Unmarshal(raw, &msgs[i]); err != nil {
					t.Fatalf("message %d: %v", i, err)
				}
			}
			if msgs[0].Role != "system" || msgs[len(msgs)-1].Role != "user" {
				t.Errorf("first role %q, last %q; want system, user", msgs[0].Role, msgs[len(msgs)-1].Role)
			}
			calls := 0
			for i, m := range msgs {
				if m.Role != "tool" {
					continue
				}
				calls++
				prev := msgs[i-1]
				if prev.Role != "assistant" || len(prev.ToolCalls) != 1 || prev.ToolCalls[0].ID != m.ToolCallID ||
					!json.Valid([]byte(prev.ToolCalls[0].Function.Arguments)) || !json.Valid([]byte(m.Content)) {
					t.Errorf("tool result %d does not answer the call before it: %+v, %+v", i, prev, m)
				}
			}
			if s.Messages >= 20 && calls == 0 {
				t.Error("no tool calls")
			}
		})
	}
}
