package responses

import (
	"encoding/json"
	"strings"
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
		var b []byte
		out := AppendReasoningItem(nil, id, text, ItemFinal)
		out = append(append(out, ','), AppendMessageItem(nil, id, text, []Logprob{{Token: text, Logprob: -1}}, ItemFinal)...)
		out = append(append(out, ','), AppendFunctionCallItem(nil, id, id, text, args, ItemDone)...)
		r := Response{ID: id, Model: text, Instructions: &text, User: &id, Output: append(append([]byte{'['}, out...), ']'),
			Status: "completed", Truncation: "disabled", Usage: &Usage{Input: 1, Output: 2}}
		valid("response", AppendResponse(nil, &r))
		var ev Event
		ev.Begin("response.output_text.done")
		ev.String("item_id", id)
		ev.Raw("logprobs", AppendStreamLogprobs(nil, []Logprob{{Token: text}}))
		b = ev.EndText(3, text, "response.output_text.done")
		data, ok := cutEventData(b)
		if !ok {
			t.Fatalf("event frame %q", b)
		}
		valid("event", data)
	})
}

// cutEventData is the data line of one "event: …\ndata: …\n\n" frame.
func cutEventData(frame []byte) ([]byte, bool) {
	_, data, ok := strings.Cut(string(frame), "\ndata: ")
	data, ok2 := strings.CutSuffix(data, "\n\n")
	return []byte(data), ok && ok2
}
