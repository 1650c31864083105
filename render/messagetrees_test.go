package render

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/vrender/vrender/internal/benchdata"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/protocol"
)

// Rendering the messages protocol decodes with the body leaves them (and
// the JSON they hold) as they were, so a request can be rendered again (or
// concurrently) from them, with the same prompt.
func TestRenderLeavesMessagesUnchanged(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	r, err := New(m, Config{})
	if err != nil {
		t.Fatal(err)
	}
	q := benchdata.Conversation(benchdata.Sizes[0])
	extra := []string{
		`{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\": [1, 2.5, \"\\u00e9\"]}"}},{"id":"b","type":"function","function":{"name":"g","arguments":""}}]}`,
		`{"role":"assistant","content":"","tool_calls":[]}`,
		`{"role":"tool","tool_call_id":"a","content":[{"type":"text","text":"r1"},{"type":"text","text":"r2"}]}`,
		`{"role":"developer","content":"dev","tools":[{"a":1}]}`,
		`{"role":"user","content":[{"type":"text","text":"last"}],"name":"n","a":1,"a":2}`,
	}
	msgs := append([]json.RawMessage{}, q.Messages...)
	for _, e := range extra {
		msgs = append(msgs, json.RawMessage(e))
	}
	body, err := json.Marshal(map[string]any{"model": "m", "messages": msgs, "tools": q.Tools})
	if err != nil {
		t.Fatal(err)
	}
	req := decodeWithTrees(t, body)
	if len(req.Messages) != len(msgs) {
		t.Fatalf("%d messages decoded from %d", len(req.Messages), len(msgs))
	}
	before := fmt.Sprint(messagesDump(t, req.Messages), treeDump(req.ToolTrees))
	in := ChatInput{Messages: req.Messages, Tools: req.Tools, AddGenerationPrompt: true}
	want, err := r.RenderChat(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	in.ToolTrees = req.ToolTrees
	if len(req.ToolTrees) != len(req.Tools) || len(req.Tools) == 0 {
		t.Fatalf("%d tool trees for %d tools", len(req.ToolTrees), len(req.Tools))
	}
	for range 2 {
		got, err := r.RenderChat(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if got.Text != want.Text || !reflect.DeepEqual(got.TokenIDs, want.TokenIDs) {
			t.Fatalf("again:\n%s\nfirst:\n%s", got.Text, want.Text)
		}
	}
	if after := fmt.Sprint(messagesDump(t, req.Messages), treeDump(req.ToolTrees)); after != before {
		t.Fatalf("rendering changed the request's messages:\n%s\nwas\n%s", after, before)
	}
}

// messagesDump writes the messages with the JSON they hold rewritten from
// the trees (not their text as sent), so a change to a tree shows.
func messagesDump(t *testing.T, msgs []protocol.Message) string {
	t.Helper()
	var out []string
	for _, m := range msgs {
		for _, n := range []*node{m.ToolCalls, m.Reasoning, m.ReasoningContent, m.ToolCallID, m.Tools} {
			if n != nil {
				out = append(out, nodeJSON(n))
			}
		}
		for _, p := range m.Content.Parts {
			if p.Extra != nil {
				out = append(out, nodeJSON(p.Extra))
			}
		}
		b, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return fmt.Sprint(out)
}

// decodeWithTrees decodes a chat request body as the server does, with
// its message and tool trees.
func decodeWithTrees(t *testing.T, body []byte) *protocol.ChatCompletionRequest {
	t.Helper()
	body, tree, err := protocol.ParseJSONTree(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := protocol.DecodeChatCompletionTree(body, tree)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func treeDump(trees []*node) []string {
	out := make([]string, len(trees))
	for i, n := range trees {
		out[i] = nodeJSON(n)
	}
	return out
}

// Continuing a final message rewrites its content: that must leave the
// request's messages as they were.
func TestMessagesUnchangedByContinueFinalMessage(t *testing.T) {
	r, err := New(testmodel.Load(t, "qwen3"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, final := range []string{
		`{"role":"assistant","content":"The answer is"}`,
		`{"role":"assistant","content":[{"type":"text","text":"Part one"},{"type":"text","text":"part two"}]}`,
	} {
		body := []byte(`{"model":"m","messages":[{"role":"user","content":"Hi"},` + final + `]}`)
		req := decodeWithTrees(t, body)
		before := messagesDump(t, req.Messages)
		in := ChatInput{Messages: req.Messages, ContinueFinalMessage: true}
		want, err := r.RenderChat(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			got, err := r.RenderChat(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if got.Text != want.Text {
				t.Fatalf("again:\n%s\nfirst:\n%s", got.Text, want.Text)
			}
		}
		if after := messagesDump(t, req.Messages); after != before {
			t.Fatalf("rendering changed the request's messages:\n%s\nwas\n%s", after, before)
		}
	}
}
