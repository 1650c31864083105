package anthropic

import (
	"encoding/json"
	"testing"
)

// The answer and event writers write valid JSON for any text a model or a
// client can put in them.
func FuzzWriters(f *testing.F) {
	f.Add("hello", "call_1", `{"a":1}`)
	f.Add("\u2028\"\\\x00\xff", "", "")
	f.Fuzz(func(t *testing.T, text, id, args string) {
		valid := func(what string, b []byte) {
			if !json.Valid(b) {
				t.Fatalf("%s is not JSON: %q", what, b)
			}
		}
		blocks := []Block{{Type: "thinking", Thinking: text, Signature: id}, {Type: "text", Text: text},
			{Type: "tool_use", ID: id, Name: text}}
		stop := "end_turn"
		b, err := AppendMessage(nil, id, text, blocks, &stop, 1, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		valid("message", b)
		valid("message_start", AppendMessageStart(nil, id, text, 3))
		for _, d := range []string{"text_delta", "thinking_delta", "input_json_delta", "signature_delta"} {
			valid(d, AppendDelta(nil, 0, d, text))
		}
		valid("block start", AppendBlockStart(nil, 1, &blocks[2]))
		valid("message_delta", AppendMessageDelta(nil, nil, 1, 2))
		valid("error", AppendError(nil, id, text))
	})
}
