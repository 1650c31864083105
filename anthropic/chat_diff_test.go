package anthropic

import (
	"regexp"
	"testing"

	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
	"github.com/vrender/vrender/render/rendertest"
)

// generatedID is the tool call id the conversion makes up from the clock.
var generatedID = regexp.MustCompile(`call_[0-9]+`)

// messagesDiff converts one Messages request's messages typed and through
// the JSON the conversion wrote before, read back by the chat decoder,
// and compares the two as written and as rendered.
func messagesDiff(t *testing.T, gen *render.Generator, data []byte) {
	a, err := DecodeMessagesRequest(data)
	if err != nil {
		return
	}
	got, errNew := anthropicMessages(a)
	raw, errOld := refAnthropicMessages(a)
	if (errNew == nil) != (errOld == nil) {
		t.Fatalf("%s: typed error %v, JSON error %v", data, errNew, errOld)
	}
	if errNew != nil {
		if errNew.Error() != errOld.Error() {
			t.Fatalf("%s: typed error %v, JSON error %v", data, errNew, errOld)
		}
		return
	}
	old, err := protocol.DecodeChatCompletionRequest(append(append([]byte(`{"messages":`), raw...), '}'))
	if err != nil {
		t.Fatalf("%s: the JSON conversion %s does not decode: %v", data, raw, err)
	}
	if err := rendertest.SameMessages(gen, got, old.Messages, func(s string) string { return generatedID.ReplaceAllString(s, "call_N") }); err != nil {
		t.Fatalf("%s: typed against JSON: %v", data, err)
	}
}

var messagesDiffCases = []string{
	`{"model":"m","max_tokens":1,"system":[{"type":"text","text":"s1"},{"type":"text","text":"x-anthropic-billing-header: h"}],"messages":[{"role":"system","content":"in"},{"role":"user","content":"hi \ud800 é"}]}`,
	`{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"a"},{"type":"tool_use","name":"f","input":{"q":[1,2.5]}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":[{"type":"text","text":"r"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}},{"type":"tool_reference","tool_name":"g"}]},{"type":"text","text":"next"}]}]}`,
	`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://x/y.png"}},{"type":"text","text":"what"}]}]}`,
	`{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"a","content":"plain"}]}]}`,
}

// TestTypedMessagesMatchJSON: the typed conversion gives the messages, and
// the prompt, the JSON conversion gave, on the golden requests and edges.
func TestTypedMessagesMatchJSON(t *testing.T) {
	gen := rendertest.Hermes(t)
	for _, c := range loadAnthropicGolden(t) {
		messagesDiff(t, gen, c.Anthropic)
	}
	for _, c := range messagesDiffCases {
		messagesDiff(t, gen, []byte(c))
	}
}

func FuzzTypedMessagesMatchJSON(f *testing.F) {
	for _, c := range loadAnthropicGolden(f) {
		f.Add([]byte(c.Anthropic))
	}
	for _, c := range messagesDiffCases {
		f.Add([]byte(c))
	}
	gen := rendertest.Hermes(f)
	f.Fuzz(func(t *testing.T, data []byte) { messagesDiff(t, gen, data) })
}
