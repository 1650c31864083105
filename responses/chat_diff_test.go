package responses

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
	"github.com/vrender/vrender/render/rendertest"
)

// messagesDiff converts one Responses request's input typed and through
// the JSON the conversion wrote before, read back by the chat decoder,
// and compares the two as written and as rendered.
func messagesDiff(t *testing.T, gen *render.Generator, data []byte) {
	r, err := DecodeRequest(data)
	if err != nil || escapedRole(data) || jsonQuirk(data) {
		return
	}
	raws := make([]json.RawMessage, len(r.InputItems))
	for i := range r.InputItems {
		raws[i] = r.InputItems[i].Message.Raw
	}
	if got, want := shouldContinueFinalMessage(r.InputItems), refShouldContinueFinalMessage(raws); got != want {
		t.Fatalf("%s: continues the final message %v, want %v", data, got, want)
	}
	got, errNew := responsesMessages(r)
	raw, errOld := refResponsesMessages(r)
	if (errNew == nil) != (errOld == nil) || errNew != nil && errNew.Error() != errOld.Error() {
		t.Fatalf("%s: typed error %v, JSON error %v", data, errNew, errOld)
	}
	if errNew != nil {
		return
	}
	old, err := protocol.DecodeChatCompletionRequest(append(append([]byte(`{"messages":`), raw...), '}'))
	if err != nil {
		t.Fatalf("%s: the JSON conversion %s does not decode: %v", data, raw, err)
	}
	if err := rendertest.SameMessages(gen, got, old.Messages, nil); err != nil {
		t.Fatalf("%s: typed against JSON: %v", data, err)
	}
}

// escapedRole reports an input item whose role is spelled with an escape:
// the JSON conversion compared the role's text as sent with "assistant",
// where vLLM (and the typed conversion) compare the string.
func escapedRole(data []byte) bool {
	root, err := wire.Parse(data)
	if err != nil {
		return false
	}
	input, _ := root.Get("input")
	if input == nil {
		return false
	}
	for _, it := range input.Arr {
		if role, ok := it.Get("role"); ok && bytes.IndexByte(role.Raw, '\\') >= 0 {
			return true
		}
	}
	return false
}

// TestEscapedAssistantRoleMerges: a function_call item after an assistant
// message whose role is spelled with an escape joins that message, as in
// vLLM, which compares the decoded role.
func TestEscapedAssistantRoleMerges(t *testing.T) {
	r, err := DecodeRequest([]byte(`{"input":[{"role":"\u0061ssistant","content":[]},{"type":"function_call","call_id":"b","name":"g","arguments":"1"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := responsesMessages(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].ToolCalls == nil {
		got, _ := json.Marshal(msgs)
		t.Fatalf("messages %s, want the call merged into the assistant message", got)
	}
}

var messagesDiffCases = []string{
	`{"instructions":"be brief","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},{"type":"reasoning","summary":[{"type":"summary_text","text":"s"}]},{"type":"function_call","call_id":"a","name":"f","arguments":"{}"},{"type":"function_call","call_id":"b","name":"g","arguments":"1"},{"type":"function_call_output","call_id":"a","output":"r"},{"type":"function_call_output","output":[{"type":"input_text","text":"x"}]},{"role":"assistant","content":"done"}]}`,
	`{"input":[{"role":"assistant","tool_calls":"x","content":[]},{"type":"function_call","call_id":"b","name":"g","arguments":"1"},{"role":"assistant","content":null,"tool_calls":[{"id":"q","type":"function","function":{"name":"h","arguments":"{}"}}],"reasoning":"r"},{"type":"function_call","call_id":"c","name":"k","arguments":"2"},{"type":"reasoning","summary":[],"content":[{"text":"c"}]},{"role":"assistant","content":[{"type":"output_text","text":"t"}]}]}`,
	`{"input":[{"type":"function_call_output","call_id":"a"},{"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,AA=="}],"extra":1}]}`,
	`{"input":"plain"}`,
}

// TestTypedMessagesMatchJSON: the typed conversion gives the messages, and
// the prompt, the JSON conversion gave, on the golden requests and edges.
func TestTypedMessagesMatchJSON(t *testing.T) {
	gen := rendertest.Hermes(t)
	for _, c := range loadResponsesGolden(t) {
		messagesDiff(t, gen, c)
	}
	for _, c := range messagesDiffCases {
		messagesDiff(t, gen, []byte(c))
	}
}

func FuzzTypedMessagesMatchJSON(f *testing.F) {
	for _, c := range loadResponsesGolden(f) {
		f.Add([]byte(c))
	}
	for _, c := range messagesDiffCases {
		f.Add([]byte(c))
	}
	gen := rendertest.Hermes(f)
	f.Fuzz(func(t *testing.T, data []byte) { messagesDiff(t, gen, data) })
}
