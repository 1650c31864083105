package anthropic

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
	"github.com/vrender/vrender/render/rendertest"
)

type anthropicGolden struct {
	Name      string          `json:"name"`
	Source    string          `json:"source"`
	Anthropic json.RawMessage `json:"anthropic"`
	Chat      json.RawMessage `json:"chat"`
}

func loadAnthropicGolden(t testing.TB) []anthropicGolden {
	t.Helper()
	f, err := os.Open("../server/testdata/anthropic_render_golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []anthropicGolden
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var c anthropicGolden
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// canonical is raw with members in document order and one spelling of
// every string, so that two encodings of the same Python dict compare equal.
func canonical(t testing.TB, raw json.RawMessage) string {
	t.Helper()
	out, err := render.PyJSONCompact(raw)
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return string(out)
}

// asRead is a messages list as render reads it (protocol.Message's
// members in its order): the order of a message's members never reaches
// the template, which gets the dict vLLM's _parse_chat_message_content
// builds.
func asRead(t testing.TB, raw json.RawMessage) json.RawMessage {
	t.Helper()
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		t.Fatal(err)
	}
	msgs, err := protocol.ParseMessages(items)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAnthropicToChatGolden checks the conversion against the chat request
// vLLM builds for each case (messages, tools and tool_choice in order, as
// its tests assert them).
func TestAnthropicToChatGolden(t *testing.T) {
	cases := loadAnthropicGolden(t)
	if len(cases) < 20 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			a, err := DecodeMessagesRequest(c.Anthropic)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ToChat(a)
			if err != nil {
				t.Fatal(err)
			}
			var want map[string]json.RawMessage
			if err := json.Unmarshal(c.Chat, &want); err != nil {
				t.Fatal(err)
			}
			gotMsgs, _ := json.Marshal(got.Messages)
			if g, w := canonical(t, gotMsgs), canonical(t, asRead(t, want["messages"])); g != w {
				t.Errorf("messages\n got: %s\nwant: %s", g, w)
			}
			if w, ok := want["tools"]; ok {
				gotTools, _ := json.Marshal(got.Tools)
				if g, w := canonical(t, gotTools), canonical(t, w); g != w {
					t.Errorf("tools\n got: %s\nwant: %s", g, w)
				}
			}
			if w, ok := want["tool_choice"]; ok {
				if g, w := canonical(t, got.ToolChoice.AppendJSON(nil)), canonical(t, w); g != w {
					t.Errorf("tool_choice = %s, want %s", g, w)
				}
			}
			if w, ok := want["response_format"]; ok {
				if g, w := canonical(t, wire.AppendNode(nil, got.ResponseFormat)), canonical(t, w); g != w {
					t.Errorf("response_format = %s, want %s", g, w)
				}
			}
		})
	}
}

func TestAnthropicToChatEdges(t *testing.T) {
	for _, tc := range []struct{ name, body, messages string }{
		{"assistant tool_result is text with the Python str of its content",
			`{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"it's"}]}]}]}`,
			`[{"role":"assistant","content":"Tool result: [{'type': 'text', 'text': \"it's\"}]"}]`},
		{"tool_use without id or input",
			`{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"x","name":"f"}]}]}`,
			`[{"role":"assistant","tool_calls":[{"id":"x","type":"function","function":{"name":"f","arguments":"{}"}}]}]`},
		{"tool_use input in Python json.dumps spelling",
			`{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"x","name":"f","input":{"q":"é","n":[1,2.50]}}]}]}`,
			`[{"role":"assistant","tool_calls":[{"id":"x","type":"function","function":{"name":"f","arguments":"{\"q\": \"\\u00e9\", \"n\": [1, 2.5]}"}}]}]`},
		{"empty assistant kept, empty user dropped",
			`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":""}]},{"role":"assistant","content":[{"type":"redacted_thinking","data":"x"}]}]}`,
			`[{"role":"assistant"}]`},
		{"url image source and tool references",
			`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://x/y.png"}},{"type":"tool_result","tool_use_id":"t","content":[{"type":"tool_reference","tool_name":"g"}]}]}]}`,
			`[{"role":"tool","tool_call_id":"t","content":""},{"role":"tool","tool_call_id":"t","content":[{"type":"tool_reference","name":"g"}]},{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := DecodeMessagesRequest([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ToChat(a)
			if err != nil {
				t.Fatal(err)
			}
			gotMsgs, _ := json.Marshal(got.Messages)
			if g, w := canonical(t, gotMsgs), canonical(t, asRead(t, json.RawMessage(tc.messages))); g != w {
				t.Errorf("messages\n got: %s\nwant: %s", g, w)
			}
		})
	}
}

// FuzzAnthropicToChat feeds arbitrary Messages bodies through validation,
// the conversion and a render: a body is refused with a validation or bad
// request error or converts to a chat request whose messages and tools are
// valid JSON, and nothing panics.
func FuzzAnthropicToChat(f *testing.F) {
	for _, c := range loadAnthropicGolden(f) {
		f.Add([]byte(c.Anthropic))
	}
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_result","content":[{"a":[1,2.5,true,null,{"b":"'\""}]}]}]}]}`))
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image","source":{"type":7,"media_type":[1],"data":{}}}]}]}`))
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[],"tools":[{"name":"f","input_schema":{"type":null}}],"tool_choice":{"type":"tool","name":"f"}}`))
	gen := rendertest.Hermes(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := DecodeMessagesRequest(data)
		if err != nil {
			var verr *pylax.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("error is %T, want *pylax.ValidationError: %v", err, err)
			}
			return
		}
		req, err := ToChat(a)
		if err != nil {
			return // a chat validation error, or an unencodable tool input
		}
		msgs, err := json.Marshal(req.Messages)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range []json.RawMessage{msgs} {
			if !json.Valid(raw) {
				t.Fatalf("invalid JSON %q from %q", raw, data)
			}
		}
		for i := range req.Tools {
			if raw := req.Tools[i].AppendJSON(nil); !json.Valid(raw) {
				t.Fatalf("invalid tool JSON %q from %q", raw, data)
			}
		}
		if _, err := gen.RenderChat(context.Background(), req); err != nil {
			var br *render.BadRequestError
			if !errors.As(err, &br) {
				t.Fatalf("render error is %T, want *render.BadRequestError: %v", err, err)
			}
		}
	})
}

// TestAnthropicTransferParams pins vLLM bf578e1's
// AnthropicServingMessages: kv_transfer_params and ec_transfer_params are
// handed to the chat request, hence to extra_args.
func TestAnthropicTransferParams(t *testing.T) {
	a, err := DecodeMessagesRequest([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}],` +
		`"kv_transfer_params":{"a":1},"ec_transfer_params":{"b":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	req, err := ToChat(a)
	if err != nil {
		t.Fatal(err)
	}
	kv, ec := wire.AppendNode(nil, req.KVTransferParams), wire.AppendNode(nil, req.ECTransferParams)
	if string(kv) != `{"a":1}` || string(ec) != `{"b":2}` {
		t.Errorf("kv_transfer_params %s, ec_transfer_params %s", kv, ec)
	}
}
