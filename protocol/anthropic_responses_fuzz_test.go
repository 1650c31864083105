package protocol

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// The Messages, count_tokens and Responses decoders read untrusted bodies:
// they never panic, and a refusal is a validation or parameter error with
// a message.
func FuzzDecodeAnthropicResponses(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"ctx","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"}]}]}],"tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"tool"}}`,
		`{"model":"","messages":[],"system":[{"type":"text","text":"s"}]}`,
		`{"input":"hi","tools":[{"type":"web_search"},{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}}`,
		`{"input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"o"}]}`,
		`{"input":[],"text":{"format":{"type":"json_schema","schema":{}}},"reasoning":{"effort":"low"},"metadata":{"a":"b"}}`,
		`[]`, `null`, `{}`,
	} {
		f.Add([]byte(s))
	}
	check := func(t *testing.T, data []byte, err error) {
		if err == nil {
			return
		}
		var verr *ValidationError
		var perr *ResponsesParamError
		switch {
		case errors.As(err, &verr):
			if len(verr.Errors) == 0 || verr.Message() == "" {
				t.Fatalf("%s: empty validation error", data)
			}
		case errors.As(err, &perr):
			if perr.Message == "" {
				t.Fatalf("%s: empty parameter error", data)
			}
		case err.Error() == "":
			t.Fatalf("%s: empty error", data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		_, err := DecodeAnthropicMessagesRequest(data)
		check(t, data, err)
		_, err = DecodeAnthropicCountTokensRequest(data)
		check(t, data, err)
		_, err = DecodeResponsesRequest(data)
		check(t, data, err)
	})
}

// The answer and event writers write valid JSON for any text a model or a
// client can put in them.
func FuzzAnthropicResponsesWriters(f *testing.F) {
	f.Add("hello", "call_1", `{"a":1}`)
	f.Add("\u2028\"\\\x00\xff", "", "")
	f.Fuzz(func(t *testing.T, text, id, args string) {
		valid := func(what string, b []byte) {
			if !json.Valid(b) {
				t.Fatalf("%s is not JSON: %q", what, b)
			}
		}
		blocks := []AnthropicBlock{{Type: "thinking", Thinking: text, Signature: id}, {Type: "text", Text: text},
			{Type: "tool_use", ID: id, Name: text}}
		stop := "end_turn"
		b, err := AppendAnthropicMessage(nil, id, text, blocks, &stop, 1, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		valid("message", b)
		valid("message_start", AppendAnthropicMessageStart(nil, id, text, 3))
		for _, d := range []string{"text_delta", "thinking_delta", "input_json_delta", "signature_delta"} {
			valid(d, AppendAnthropicDelta(nil, 0, d, text))
		}
		valid("block start", AppendAnthropicBlockStart(nil, 1, &blocks[2]))
		valid("message_delta", AppendAnthropicMessageDelta(nil, nil, 1, 2))
		valid("error", AppendAnthropicError(nil, id, text))
		out := AppendReasoningItem(nil, id, text, ItemFinal)
		out = append(append(out, ','), AppendMessageItem(nil, id, text, []ResponsesLogprob{{Token: text, Logprob: -1}}, ItemFinal)...)
		out = append(append(out, ','), AppendFunctionCallItem(nil, id, id, text, args, ItemDone)...)
		r := ResponsesResponse{ID: id, Model: text, Instructions: &text, User: &id, Output: append(append([]byte{'['}, out...), ']'),
			Status: "completed", Truncation: "disabled", Usage: &ResponsesUsage{Input: 1, Output: 2}}
		valid("response", AppendResponsesResponse(nil, &r))
		var ev ResponsesEvent
		ev.Begin("response.output_text.done")
		ev.String("item_id", id)
		ev.Raw("logprobs", AppendStreamLogprobs(nil, []ResponsesLogprob{{Token: text}}))
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
