package standin

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCaseNameOf(t *testing.T) {
	for id, want := range map[string]string{
		"vrender-parity-batch-3-tool-call_x": "tool-call_x",
		"vrender-parity-stream-12-a":         "a",
		"vrender-parity-batch":               "",
		"chatcmpl-123":                       "",
	} {
		if got := caseNameOf(id); got != want {
			t.Errorf("caseNameOf(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestFindCase(t *testing.T) {
	cases := []Case{
		{ID: "one", ChatRequest: json.RawMessage(`{"messages":[{"role":"user","content":"a"}],"tools":null}`)},
		{ID: "two", ChatRequest: json.RawMessage(`{"messages":[{"role":"user","content":"b"}]}`)},
		{ID: "three", ChatRequest: json.RawMessage(`{"messages":[{"role":"user","content":"b"}]}`)},
	}
	s := New(cases, Options{})
	tests := []struct {
		body, want, err string
	}{
		// Key order, spacing, null fields and the fields parity adds do not matter.
		{body: `{"messages":[{"content":"a", "role":"user"}],"model":"m","seed":0,"stream":true}`, want: "one"},
		{body: `{"messages":[{"role":"user","content":"b"}],"request_id":"vrender-parity-batch-9-three"}`, want: "three"},
		{body: `{"messages":[{"role":"user","content":"b"}]}`, err: "2 golden cases share this chat request"},
		{body: `{"messages":[{"role":"user","content":"a"}],"max_tokens":5}`, err: "no golden case matches"},
	}
	for _, tt := range tests {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(tt.body), &obj); err != nil {
			t.Fatal(err)
		}
		c, err := s.findCase(obj)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: err %v, want %q", tt.body, err, tt.err)
		case tt.err == "" && (err != nil || c.ID != tt.want):
			t.Errorf("%s: case %v err %v, want %s", tt.body, c, err, tt.want)
		}
	}
}
