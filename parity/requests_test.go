package parity

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestReadRequests(t *testing.T) {
	in := `{"messages":[{"role":"user","content":"a"}],"model":"m"}

{"id":"case1","chat_request":{"messages":[{"content":"b","role":"user"}]},"output_token_ids":[1]}
`
	reqs, err := ReadRequests(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 2 || reqs[0].Name != "line 1" || reqs[1].Name != "case1" || reqs[1].Line != 3 {
		t.Fatalf("requests %+v", reqs)
	}
	if got := string(reqs[1].Body); got != `{"messages":[{"content":"b","role":"user"}]}` {
		t.Errorf("golden body %s", got)
	}
	for _, bad := range []string{"[1]\n", "{\"chat_request\": 3}\n", "{\n"} {
		if _, err := ReadRequests(strings.NewReader(bad)); err == nil || !strings.HasPrefix(err.Error(), "line 1: ") {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}

func TestBodies(t *testing.T) {
	req := Request{Name: "my case", Line: 4, Body: json.RawMessage(`{"messages":[{"role":"user","content":"<b>"}],` +
		`"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"auto","n":3,"logprobs":true,` +
		`"top_logprobs":2,"stream_options":{"include_usage":true},"temperature":0.7,"max_tokens":10,"chat_template_kwargs":{"x":1}}`)}
	tests := []struct {
		name string
		got  func() ([]byte, error)
		want map[string]string // key -> JSON, "" = absent
	}{
		{name: "tokenize", got: func() ([]byte, error) { return tokenizeBody(req.Body, "served") },
			want: map[string]string{"model": `"served"`, "messages": `[{"role":"user","content":"<b>"}]`, "chat_template_kwargs": `{"x":1}`,
				"tools": `[{"type":"function","function":{"name":"f"}}]`, "tool_choice": "", "max_tokens": "", "n": ""}},
		{name: "render", got: func() ([]byte, error) { return renderBody(req.Body, "served") },
			want: map[string]string{"model": `"served"`, "tool_choice": `"auto"`, "n": "3", "temperature": "0.7"}},
		{name: "chat", got: func() ([]byte, error) { return chatBody(req, "served", 7, false) },
			want: map[string]string{"model": `"served"`, "stream": "false", "return_token_ids": "true", "temperature": "0", "seed": "7",
				"n": "", "logprobs": "", "top_logprobs": "", "stream_options": "", "max_tokens": "10", "tool_choice": `"auto"`,
				"request_id": `"vrender-parity-batch-4-my_case"`}},
		{name: "chat stream", got: func() ([]byte, error) { return chatBody(req, "served", 7, true) },
			want: map[string]string{"stream": "true", "request_id": `"vrender-parity-stream-4-my_case"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.got()
			if err != nil {
				t.Fatal(err)
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(b, &obj); err != nil {
				t.Fatal(err)
			}
			for k, want := range tt.want {
				got, ok := obj[k]
				switch {
				case want == "" && ok:
					t.Errorf("%s present: %s", k, got)
				case want != "" && string(got) != want:
					t.Errorf("%s = %s, want %s", k, got, want)
				}
			}
		})
	}
}
