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

// Rendering from the trees protocol decodes with the body gives the prompt
// parsing Messages gives, and leaves the trees as they were, so a request
// can be rendered again (or concurrently) from them.
func TestMessageTreesMatchMessages(t *testing.T) {
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
	if len(req.MessageTrees) != len(req.Messages) {
		t.Fatalf("%d trees for %d messages", len(req.MessageTrees), len(req.Messages))
	}
	before := fmt.Sprint(treeDump(req.MessageTrees), toolsDump(req.Tools))
	in := ChatInput{Messages: req.Messages, Tools: req.Tools, AddGenerationPrompt: true}
	want, err := r.RenderChat(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	in.MessageTrees = req.MessageTrees
	if len(req.Tools) == 0 {
		t.Fatal("no tools")
	}
	for range 2 {
		got, err := r.RenderChat(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if got.Text != want.Text || !reflect.DeepEqual(got.TokenIDs, want.TokenIDs) {
			t.Fatalf("from trees:\n%s\nfrom Messages:\n%s", got.Text, want.Text)
		}
	}
	if after := fmt.Sprint(treeDump(req.MessageTrees), toolsDump(req.Tools)); after != before {
		t.Fatalf("rendering changed the request's trees:\n%s\nwas\n%s", after, before)
	}
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

// toolsDump is the template's view of the tools, to show rendering left
// the trees they hold alone.
func toolsDump(tools []protocol.Tool) []string {
	out := make([]string, len(tools))
	for i := range tools {
		out[i] = nodeJSON(dumpTool(&tools[i]))
	}
	return out
}

func treeDump(trees []*node) []string {
	out := make([]string, len(trees))
	for i, n := range trees {
		out[i] = nodeJSON(n)
	}
	return out
}

// Continuing a final message rewrites its content: with the content and
// role nodes now shared with the request's trees, that must still leave
// the trees as they were.
func TestMessageTreesUnchangedByContinueFinalMessage(t *testing.T) {
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
		before := fmt.Sprint(treeDump(req.MessageTrees))
		in := ChatInput{Messages: req.Messages, ContinueFinalMessage: true}
		want, err := r.RenderChat(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		in.MessageTrees = req.MessageTrees
		for range 2 {
			got, err := r.RenderChat(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if got.Text != want.Text {
				t.Fatalf("from trees:\n%s\nfrom Messages:\n%s", got.Text, want.Text)
			}
		}
		if after := fmt.Sprint(treeDump(req.MessageTrees)); after != before {
			t.Fatalf("rendering changed the request's trees:\n%s\nwas\n%s", after, before)
		}
	}
}
