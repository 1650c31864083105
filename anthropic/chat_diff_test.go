package anthropic

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"regexp"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
	"github.com/vrender/vrender/render/rendertest"
)

// generatedID is the tool call id the conversion makes up from the clock.
var generatedID = regexp.MustCompile(`call_[0-9]+`)

// onePassDiff decodes one body as a Messages and as a count_tokens request
// in one pass (the members the conversion reads kept as the body's trees)
// and as the decoder before did (their text, decoded again at each
// reader), and holds the first to the second: the same validation errors,
// field for field, the same request, and the same chat request converted
// from it, messages compared as written and, with a generator, as
// rendered.
func onePassDiff(t *testing.T, gen *render.Generator, data []byte) {
	a, err := DecodeMessagesRequest(data)
	ra, refErr := refDecodeMessagesRequest(data)
	sameDecode(t, data, a, ra, err, refErr)
	if err == nil {
		got, err := ToChat(a)
		want, refErr := refToChat(ra, false)
		sameChat(t, gen, data, got, want, err, refErr)
	}
	a, err = DecodeCountTokensRequest(data)
	ra, refErr = refDecodeCountTokensRequest(data)
	sameDecode(t, data, a, ra, err, refErr)
	if err == nil {
		got, err := CountTokensToChat(a)
		want, refErr := refToChat(ra, true)
		sameChat(t, gen, data, got, want, err, refErr)
	}
}

func sameDecode(t *testing.T, data []byte, a *MessagesRequest, ra *refRequest, err, refErr error) {
	t.Helper()
	if (err == nil) != (refErr == nil) {
		t.Fatalf("%s: one pass error %v, reference error %v", data, err, refErr)
	}
	if err != nil {
		var verr, rerr *pylax.ValidationError
		if !errors.As(err, &verr) || !errors.As(refErr, &rerr) {
			t.Fatalf("%s: errors %T and %T, want validation errors", data, err, refErr)
		}
		if !reflect.DeepEqual(verr.Errors, rerr.Errors) || verr.Message() != rerr.Message() {
			t.Fatalf("%s: one pass error\n%s\nreference error\n%s", data, verr.Message(), rerr.Message())
		}
		return
	}
	if got := asRef(a); !reflect.DeepEqual(got, refNormal(ra)) {
		t.Fatalf("%s: one pass request\n%+v\nreference request\n%+v", data, got, ra)
	}
}

func sameChat(t *testing.T, gen *render.Generator, data []byte, got, want *protocol.ChatCompletionRequest, err, refErr error) {
	t.Helper()
	if (err == nil) != (refErr == nil) || err != nil && err.Error() != refErr.Error() {
		t.Fatalf("%s: one pass conversion error %v, reference error %v", data, err, refErr)
	}
	if err != nil {
		return
	}
	norm := func(s string) string { return generatedID.ReplaceAllString(s, "call_N") }
	if gen == nil {
		// An empty list is nil on one side and [] on the other; both
		// render alike.
		gm, err := json.Marshal(append([]protocol.Message{}, got.Messages...))
		if err != nil {
			t.Fatal(err)
		}
		wm, err := json.Marshal(append([]protocol.Message{}, want.Messages...))
		if err != nil {
			t.Fatal(err)
		}
		if norm(string(gm)) != norm(string(wm)) {
			t.Fatalf("%s: one pass messages\n%s\nreference\n%s", data, gm, wm)
		}
	} else if err := rendertest.SameMessages(gen, got.Messages, want.Messages, norm); err != nil {
		t.Fatalf("%s: one pass against reference: %v", data, err)
	}
	g, w := *got, *want
	g.Messages, w.Messages = nil, nil
	// inf and nan have no JSON: the floats a client can set are compared
	// apart.
	for _, p := range [][2]**float64{{&g.Temperature, &w.Temperature}, {&g.TopP, &w.TopP}} {
		if (*p[0] == nil) != (*p[1] == nil) || *p[0] != nil && math.Float64bits(**p[0]) != math.Float64bits(**p[1]) {
			t.Fatalf("%s: one pass %v, reference %v", data, *p[0], *p[1])
		}
		*p[0], *p[1] = nil, nil
	}
	gj, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	wj, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	if string(gj) != string(wj) {
		t.Fatalf("%s: one pass chat request\n%s\nreference\n%s", data, gj, wj)
	}
	for i := range g.Tools {
		if gt, wt := g.Tools[i].AppendJSON(nil), w.Tools[i].AppendJSON(nil); string(gt) != string(wt) {
			t.Fatalf("%s: tools[%d]\n%s\nreference\n%s", data, i, gt, wt)
		}
		if gp, wp := g.Tools[i].Function.Parameters, w.Tools[i].Function.Parameters; !sameTree(gp, wp) {
			t.Fatalf("%s: tools[%d] parameters tree\n%+v\nreference\n%+v", data, i, gp, wp)
		}
	}
}

// sameTree compares two trees member by member, their text and depth too.
func sameTree(a, b *wire.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind || a.B != b.B || a.S != b.S || string(a.Raw) != string(b.Raw) || a.Depth != b.Depth ||
		len(a.Arr) != len(b.Arr) || !reflect.DeepEqual(a.Keys, b.Keys) || len(a.Vals) != len(b.Vals) {
		return false
	}
	for i := range a.Arr {
		if !sameTree(a.Arr[i], b.Arr[i]) {
			return false
		}
	}
	for i := range a.Vals {
		if !sameTree(a.Vals[i], b.Vals[i]) {
			return false
		}
	}
	return true
}

// asRef is the one-pass request in the reference's shape: trees as their
// text, empty lists as nil.
func asRef(a *MessagesRequest) *refRequest {
	r := &refRequest{Model: a.Model, MaxTokens: a.MaxTokens, Metadata: text(a.Metadata),
		StopSequences: a.StopSequences, Stream: a.Stream, SystemText: a.SystemText,
		SystemBlocks: asRefBlocks(a.SystemBlocks), Temperature: text(a.Temperature), ToolChoice: a.ToolChoice,
		HaveTools: a.HaveTools, TopK: text(a.TopK), TopP: text(a.TopP),
		KVTransferParams: text(a.KVTransferParams), ECTransferParams: text(a.ECTransferParams),
		ChatTemplateArgs: text(a.ChatTemplateArgs), VLLMXargs: text(a.VLLMXargs)}
	if oc := a.OutputConfig; oc != nil {
		r.OutputConfig = &refOutputConfig{Effort: oc.Effort, FormatType: oc.FormatType, Schema: text(oc.Schema)}
	}
	for _, m := range a.Messages {
		r.Messages = append(r.Messages, refMessage{Role: m.Role, Text: m.Text, Blocks: asRefBlocks(m.Blocks)})
	}
	for _, tl := range a.Tools {
		r.Tools = append(r.Tools, refTool{Name: tl.Name, Description: tl.Description,
			InputSchema: text(tl.InputSchema), DeferLoading: tl.DeferLoading})
	}
	return r
}

func asRefBlocks(blocks []ContentBlock) []refBlock {
	var out []refBlock
	for _, b := range blocks {
		rb := refBlock{Type: b.Type, Text: b.Text, Source: text(b.Source), ID: b.ID, ToolUseID: b.ToolUseID,
			Name: b.Name, Input: text(b.Input), ContentText: b.ContentText, Thinking: b.Thinking}
		for _, it := range b.ContentList {
			rb.ContentList = append(rb.ContentList, text(it))
		}
		out = append(out, rb)
	}
	return out
}

// refNormal is the reference request with empty lists as nil.
func refNormal(r *refRequest) *refRequest {
	c := *r
	c.SystemBlocks = refNormalBlocks(r.SystemBlocks)
	c.Messages = nil
	for _, m := range r.Messages {
		m.Blocks = refNormalBlocks(m.Blocks)
		c.Messages = append(c.Messages, m)
	}
	if len(r.Tools) == 0 {
		c.Tools = nil
	}
	return &c
}

func refNormalBlocks(blocks []refBlock) []refBlock {
	var out []refBlock
	for _, b := range blocks {
		if len(b.ContentList) == 0 {
			b.ContentList = nil
		}
		out = append(out, b)
	}
	return out
}

var onePassCases = []string{
	`{"model":"m","max_tokens":1,"system":[{"type":"text","text":"s1"},{"type":"text","text":"x-anthropic-billing-header: h"}],"messages":[{"role":"system","content":"in"},{"role":"user","content":"hi \ud800 é"}]}`,
	`{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"a"},{"type":"tool_use","name":"f","input":{"q":[1,2.5]}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":[{"type":"text","text":"r"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}},{"type":"tool_reference","tool_name":"g"}]},{"type":"text","text":"next"}]}]}`,
	`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://x/y.png"}},{"type":"text","text":"what"}]}]}`,
	`{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"a","content":"plain"}]}]}`,
	`{"model":"m","max_tokens":"8","temperature":"0.5","top_p":1,"top_k":"3","metadata":{"user_id":"u"},"stop_sequences":["a"],"stream":"yes",` +
		`"messages":[{"role":"msg","content":[{"type":"tool_result","content":[]},{"type":"image","source":{ }},{"type":"tool_use","input":{ }}]}],` +
		`"tools":[{"name":"f","input_schema":{ "properties" : {"a":{"type":"string"}} }},{"name":"g","input_schema":{ },"defer_loading":true},{"name":"h","input_schema":{"type":null,"x":1,"x":2}}],` +
		`"tool_choice":{"type":"tool","name":"f"},"output_config":{"effort":"low","format":{"type":"json_schema","schema":{"type":"object"}}},` +
		`"kv_transfer_params":{"a":1},"ec_transfer_params":{"b":[2]},"chat_template_kwargs":{"enable_thinking":false},"vllm_xargs":{"k":"v"}}`,
	`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":"s"},{"type":"image"},{"type":"image","source":{"type":"url"}},{"type":"tool_reference","name":"n"},{"type":7,"text":"x"},{"type":"text","text":5},{"type":"text","type":"image","source":{"media_type":["\u00e9"],"data":{"a":null}}}]}]}]}`,
	`{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_result","content":[{"a":[1,2.5e3,true,null,{"b":"'\""}]}]},{"type":"image","source":{"type":"base64","data":1.5,"media_type":null}}]}]}`,
	`{"model":"m","max_tokens":0,"messages":[{"role":null,"content":[{"type":null},{"type":"text","content":[1,{}]},7]},{"content":5},3],"tools":[{"name":"f"},{"name":1,"input_schema":[]},2],"tool_choice":{"type":"tool"},"output_config":{"format":{"type":"x","schema":[]}}}`,
	`{"model":"m<&>\u2028","max_tokens":99999999999999999999,"messages":[],"top_k":-7,"temperature":-1,"top_p":7,"vllm_xargs":{"k":[1],"j":{}},"stop_sequences":["<\u2029>","\ud800"]}`,
	`{"model":"m","max_tokens":3,"messages":[],"top_k":"12","temperature":"inf","top_p":"NaN","kv_transfer_params":{"x":{"y":[{}]}}}`,
	`{"model":"","max_tokens":-1,"messages":{},"system":7,"tools":{},"tool_choice":[],"output_config":{"format":5},"metadata":[],"temperature":"hot","top_k":1.5,"stop_sequences":"x"}`,
}

// TestOnePassMatchesRef: the one-pass decoder and conversion give what
// the decoder reading members from their text gave, on the validation
// and conversion goldens and edges.
func TestOnePassMatchesRef(t *testing.T) {
	gen := rendertest.Hermes(t)
	for _, c := range loadAnthropicGolden(t) {
		onePassDiff(t, gen, c.Anthropic)
	}
	for _, c := range testenv.ReadJSONL[validationCase](t, "testdata/anthropic_validation_golden.jsonl") {
		onePassDiff(t, gen, []byte(c.Body))
	}
	for _, c := range onePassCases {
		onePassDiff(t, gen, []byte(c))
	}
}

// onePassSeeds adds the goldens and edges to a fuzz target's corpus.
func onePassSeeds(f *testing.F) {
	for _, c := range loadAnthropicGolden(f) {
		f.Add([]byte(c.Anthropic))
	}
	for _, c := range testenv.ReadJSONL[validationCase](f, "testdata/anthropic_validation_golden.jsonl") {
		f.Add([]byte(c.Body))
	}
	for _, c := range onePassCases {
		f.Add([]byte(c))
	}
}

// FuzzOnePassDecode is FuzzOnePassMatchesRef without the renders, which
// bound how many bodies a run reaches: messages compared as written.
func FuzzOnePassDecode(f *testing.F) {
	onePassSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) { onePassDiff(t, nil, data) })
}

func FuzzOnePassMatchesRef(f *testing.F) {
	onePassSeeds(f)
	gen := rendertest.Hermes(f)
	f.Fuzz(func(t *testing.T, data []byte) { onePassDiff(t, gen, data) })
}
