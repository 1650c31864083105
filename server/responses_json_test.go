package server

import (
	"strings"
	"testing"
)

// TestResponsesStringsAsPython: the strings vrender writes itself into a
// response object (here the tools echoed back) are escaped as pydantic
// and json.dumps write them, so "<", ">", "&" and U+2028 stay raw rather
// than becoming encoding/json's \u003c etc.
func TestResponsesStringsAsPython(t *testing.T) {
	env := newOpenAIEnv(t, "")
	body := `{"model":"qwen","input":"What is 2+2?","tools":[{"type":"function","name":"w<e>&a\u2028","description":"d","parameters":{"type":"object","properties":{"c<":{"type":"string"}}}}]}`
	status, b := env.post(t, "/v1/responses", body)
	if status != 200 {
		t.Fatalf("status %d: %s", status, b)
	}
	if !strings.Contains(string(b), "\"name\":\"w<e>&a\u2028\"") {
		t.Errorf("tool name not written as json.dumps writes it: %s", b)
	}
}
