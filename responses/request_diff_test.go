package responses

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// requestDiff decodes data and holds the members read from the body's trees
// (include, reasoning, text, metadata, tool_choice's echo, the transfer
// params, the chat request of the shared members) to the encoding/json
// readers they replaced.
func requestDiff(t *testing.T, data []byte) {
	r, err := DecodeRequest(data)
	if err != nil || jsonQuirk(data) {
		return
	}
	want := refDecodeConfig(data, r)
	if !slices.Equal(r.Include, want.Include) {
		t.Fatalf("%s: include %q, want %q", data, r.Include, want.Include)
	}
	if (r.Reasoning == nil) != (want.Reasoning == nil) ||
		r.Reasoning != nil && !reflect.DeepEqual(r.Reasoning.Effort, want.Reasoning.Effort) {
		t.Fatalf("%s: reasoning %+v, want %+v", data, r.Reasoning, want.Reasoning)
	}
	textDiff(t, data, r.Text, want)
	for _, m := range []struct {
		name      string
		got, want []byte
	}{
		{"metadata", rawOf(r.Metadata), want.Metadata},
		{"tool_choice", r.ToolChoiceEcho.Raw, want.ToolChoice},
		{"kv_transfer_params", rawOf(r.KVTransferParams), want.KV},
		{"ec_transfer_params", rawOf(r.ECTransferParams), want.EC},
	} {
		if !bytes.Equal(m.got, m.want) || (m.got == nil) != (m.want == nil) {
			t.Fatalf("%s: %s %s, want %s", data, m.name, m.got, m.want)
		}
	}
	echoDiff(t, data, r, want)
	got, errNew := passthroughChat(r)
	old, errOld := refPassthroughChat(r, data)
	if (errNew == nil) != (errOld == nil) || errNew != nil && errNew.Error() != errOld.Error() {
		t.Fatalf("%s: chat of the shared members: error %v, want %v", data, errNew, errOld)
	}
	if errNew == nil && !reflect.DeepEqual(got, old) {
		t.Fatalf("%s: chat of the shared members\n got %+v\nwant %+v", data, got, old)
	}
}

func textDiff(t *testing.T, data []byte, got *Text, want refConfig) {
	if (got == nil) != (want.Text == nil) {
		t.Fatalf("%s: text %+v, want %+v", data, got, want.Text)
	}
	if got == nil {
		return
	}
	f, wf := got.Format, want.Text.Format
	if (f == nil) != (wf == nil) {
		t.Fatalf("%s: text.format %+v, want %+v", data, f, wf)
	}
	if f == nil {
		return
	}
	if f.Type != wf.Type || !reflect.DeepEqual(f.Name, wf.Name) || !reflect.DeepEqual(f.Strict, wf.Strict) ||
		!bytes.Equal(rawOf(f.Schema), wf.Schema) || (f.Schema == nil) != (wf.Schema == nil) {
		t.Fatalf("%s: text.format %+v, want %+v", data, f, wf)
	}
}

// diffBodies are the golden bodies (rendered and validated) and edges.
func diffBodies(t testing.TB) [][]byte {
	var out [][]byte
	for _, c := range loadResponsesGolden(t) {
		out = append(out, c)
	}
	for _, c := range testenv.ReadJSONL[validationCase](t, "testdata/responses_validation_golden.jsonl") {
		out = append(out, []byte(c.Body))
	}
	for _, c := range append(messagesDiffCases, requestDiffCases...) {
		out = append(out, []byte(c))
	}
	return out
}

var requestDiffCases = []string{
	`{"input":"x","include":["message.output_text.logprobs"],"reasoning":{"effort":"low"},"text":{"format":{"type":"json_schema","name":"n","schema":{"type":"object"},"strict":true}},"metadata":{"a":"b"},"kv_transfer_params":{"k":1},"ec_transfer_params":{"e":[]},"temperature":0.5,"top_p":0.9,"seed":3,"stop":["s"],"vllm_xargs":{"x":1},"chat_template_kwargs":{"enable_thinking":false}}`,
	`{"input":"x","include":null,"reasoning":null,"text":null,"metadata":null,"tool_choice":null,"kv_transfer_params":null}`,
	`{"input":"x","reasoning":{},"text":{"format":{"type":"json_schema","name":"n","schema":null}},"tools":[{"type":"function","name":"f"}],"tool_choice":"auto"}`,
	`{"input":"x","text":{"format":{"type":"text"}},"tool_choice":"auto","structured_outputs":{"regex":"a+"}}`,
	`{"input":"x","text":{},"tool_choice":"none","logit_bias":{"1":2},"ignore_eos":true,"repetition_penalty":1.1}`,
	`{"input":[{"type":"message","role":"assistant","status":"in_progress","content":[{"type":"output_text","text":"a"}]}]}`,
	`{"input":[{"type":"reasoning","status":"incomplete","summary":[]}]}`,
	`{"input":[{"role":"user","content":"x","status":"in_progress"}]}`,
	`{"input":[{"role":"assistant","content":null},{"type":"function_call","call_id":"c","name":"f","arguments":"1","status":"in_progress"}]}`,
}

// TestTreeReadersMatchJSON: the members read from the body's trees are the
// ones encoding/json read from their text, on the goldens and edges.
func TestTreeReadersMatchJSON(t *testing.T) {
	for _, c := range diffBodies(t) {
		requestDiff(t, c)
	}
}

func FuzzTreeReadersMatchJSON(f *testing.F) {
	for _, c := range diffBodies(f) {
		f.Add(c)
	}
	f.Fuzz(requestDiff)
}

// echoDiff holds the response object's echo of metadata, tool_choice and
// text.format.schema, written from the trees, to the text read again.
func echoDiff(t *testing.T, data []byte, r *Request, want refConfig) {
	for _, m := range []struct {
		name string
		got  []byte
		raw  []byte
	}{
		{"metadata", pyCompactOrNil(r.Metadata), want.Metadata},
		{"tool_choice", pyCompactOrNil(r.ToolChoiceEcho), want.ToolChoice},
	} {
		w, err := refPyCompactOrNil(m.raw)
		if err != nil || !bytes.Equal(m.got, w) {
			t.Fatalf("%s: %s echo %s, want %s (%v)", data, m.name, m.got, w, err)
		}
	}
	if r.Text == nil || r.Text.Format == nil || r.Text.Format.Type != "json_schema" {
		return
	}
	w, err := refPyCompactOrNil(want.Text.Format.Schema)
	if err != nil || len(w) == 0 {
		w = []byte("null")
	}
	dump := responsesTextDump(r.Text)
	if !bytes.Contains(dump, append(append([]byte(`"schema":`), w...), ',')) {
		t.Fatalf("%s: text echo %s, want the schema %s", data, dump, w)
	}
}

// TestMembersMatchedExactly pins where the tree readers part from the
// encoding/json ones the differential tests skip (jsonQuirk): a member is
// found by its exact name, as in Python's dict, so "TYPE" is not "type".
func TestMembersMatchedExactly(t *testing.T) {
	r, err := DecodeRequest([]byte(`{"input":[{"role":"user","content":"x","TYPE":"function_call"}],"reasoning":{"effort":"low","EFFORT":"high"}}`))
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := responsesMessages(r)
	if err != nil || len(msgs) != 1 || msgs[0].Role != "user" {
		t.Fatalf("messages %+v (%v), want the user message", msgs, err)
	}
	if r.Reasoning == nil || r.Reasoning.Effort == nil || *r.Reasoning.Effort != "low" {
		t.Fatalf("reasoning %+v, want effort low", r.Reasoning)
	}
}
