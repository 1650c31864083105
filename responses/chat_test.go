package responses

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
	"github.com/vrender/vrender/render/rendertest"
)

func loadResponsesGolden(t testing.TB) []json.RawMessage {
	t.Helper()
	f, err := os.Open("../server/testdata/responses_render_golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []json.RawMessage
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var c struct {
			Responses json.RawMessage `json:"responses"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c.Responses)
	}
	return out
}

// TestResponsesTools checks construct_tool_dicts: each function tool is
// openai's FunctionTool.model_dump() (declared members in declaration
// order, defaults filled) under "function" (test_responses_utils.py
// test_convert_tool_responses_to_completions_format), tool_choice "none"
// or an empty list gives the template None, and built-in tools reach no
// template.
func TestResponsesTools(t *testing.T) {
	const weather = `{"type":"function","name":"get_weather","description":"Get the current weather in a given location","parameters":{"type":"object","properties":{"location":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location","unit"]}}`
	for _, c := range []struct {
		name, body string
		want       []string // nil: tools is None
		wantErr    string
	}{
		{name: "function tool", body: `{"input":"x","tools":[` + weather + `]}`,
			want: []string{`{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"location":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location","unit"]},"strict":null,"type":"function","description":"Get the current weather in a given location"}}`}},
		{name: "defaults filled", body: `{"input":"x","tools":[{"type":"function","name":"f"}]}`,
			want: []string{`{"type":"function","function":{"name":"f","parameters":null,"strict":null,"type":"function","description":null}}`}},
		{name: "tool_choice none", body: `{"input":"x","tools":[` + weather + `],"tool_choice":"none"}`},
		{name: "no tools", body: `{"input":"x","tools":[]}`},
		// Built-in tools reach no template: only function tools are dumped.
		{name: "web search dropped", body: `{"input":"x","tools":[{"type":"web_search"},` + weather + `,{"type":"mcp","server_label":"s"}]}`,
			want: []string{`{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"location":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location","unit"]},"strict":null,"type":"function","description":"Get the current weather in a given location"}}`}},
		{name: "only built-in tools", body: `{"input":"x","tools":[{"type":"file_search","vector_store_ids":["vs"]}]}`, want: []string{}},
		// A tool without type fits no member of openai's Tool union.
		{name: "tool without type", body: `{"input":"x","tools":[{"name":"f"}]}`, wantErr: "24 validation errors:\n  {'type': 'missing', 'loc': 'body.tools.0.FunctionTool.type'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := DecodeRequest([]byte(c.body))
			if c.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q...", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			req, err := ToChat(r)
			if err != nil {
				t.Fatal(err)
			}
			dicts := toolDicts(req.Tools)
			got := make([]string, len(dicts))
			for i, d := range dicts {
				got[i] = string(wire.AppendNode(nil, d))
			}
			if (dicts == nil) != (c.want == nil) || len(got) != len(c.want) {
				t.Fatalf("tools %q, want %q", got, c.want)
			}
			for i := range c.want {
				if got[i] != c.want[i] {
					t.Errorf("tool %d\n got: %s\nwant: %s", i, got[i], c.want[i])
				}
			}
		})
	}
}

// FuzzResponsesToChat feeds arbitrary Responses bodies through decoding,
// the conversion and a render: a body is refused with a typed error or
// converts to a chat request whose messages and tools are valid JSON and
// renders or is refused with a bad request, and nothing panics.
func FuzzResponsesToChat(f *testing.F) {
	for _, c := range loadResponsesGolden(f) {
		f.Add([]byte(c))
	}
	f.Add([]byte(`{"input":[{"type":"function_call","call_id":"a","name":"f","arguments":"{}"},{"role":"assistant","tool_calls":"x","content":[]},{"type":"function_call","call_id":"b","name":"g","arguments":"1"}]}`))
	f.Add([]byte(`{"input":[{"type":"reasoning","summary":[{"text":7}],"content":[1]},{"type":"message","role":"assistant","content":[{"type":"refusal"}]}]}`))
	f.Add([]byte(`{"input":[],"tools":[{"type":"function","name":"f","parameters":[1]}],"tool_choice":{"type":"function","name":"f"}}`))
	gen := rendertest.Hermes(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := DecodeRequest(data)
		if err != nil {
			return // a JSON or validation error
		}
		chat, err := ToChat(req)
		if err != nil {
			return // refused, or the chat validation of the converted request
		}
		msgs, err := json.Marshal(chat.Messages)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range []json.RawMessage{msgs} {
			if !json.Valid(raw) {
				t.Fatalf("invalid JSON %q from %q", raw, data)
			}
		}
		for i := range chat.Tools {
			if raw := chat.Tools[i].AppendJSON(nil); !json.Valid(raw) {
				t.Fatalf("invalid tool JSON %q from %q", raw, data)
			}
		}
		if _, err := Render(context.Background(), gen, req); err != nil {
			var br *render.BadRequestError
			var pe *ParamError
			if !errors.As(err, &br) && !errors.As(err, &pe) {
				t.Fatalf("render error is %T, want a bad request: %v", err, err)
			}
		}
	})
}

// TestResponsesNamespacedFunctionCall pins vLLM bf578e1's
// _construct_message_from_response_item: a function_call item with a
// namespace names its chat tool call "<namespace>__<name>", as the
// namespace's tools are flattened; an empty namespace leaves the name.
func TestResponsesNamespacedFunctionCall(t *testing.T) {
	for _, tt := range []struct{ item, want string }{
		{`{"type":"function_call","call_id":"c1","name":"lookup","namespace":"crm","arguments":"{}"}`,
			`[{"id":"c1","function":{"name":"crm__lookup","arguments":"{}"},"type":"function"}]`},
		{`{"type":"function_call","call_id":"c1","name":"lookup","namespace":"","arguments":"{}"}`,
			`[{"id":"c1","function":{"name":"lookup","arguments":"{}"},"type":"function"}]`},
		{`{"type":"function_call","call_id":"c1","name":"lookup","namespace":null,"arguments":"{}"}`,
			`[{"id":"c1","function":{"name":"lookup","arguments":"{}"},"type":"function"}]`},
	} {
		n, err := wire.Parse([]byte(tt.item))
		if err != nil {
			t.Fatal(err)
		}
		it := inputItemOf(n)
		m, err := responsesItem(&it, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := json.Marshal(m); string(got) != `{"role":"assistant","tool_calls":`+tt.want+`}` {
			t.Errorf("%s: message %s, want tool_calls %s", tt.item, got, tt.want)
		}
	}
}

// TestResponsesTransferParamsInExtraArgs pins vLLM bf578e1's
// ResponsesRequest.to_sampling_params: kv_transfer_params and
// ec_transfer_params join vllm_xargs in extra_args when truthy.
func TestResponsesTransferParamsInExtraArgs(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`"kv_transfer_params":{"a":1},"ec_transfer_params":{"b":2}`, `"extra_args":{"kv_transfer_params":{"a":1},"ec_transfer_params":{"b":2}}`},
		{`"ec_transfer_params":{"b":2},"vllm_xargs":{"x":1}`, `"extra_args":{"x":1,"ec_transfer_params":{"b":2}}`},
		{`"ec_transfer_params":{}`, ""},
	} {
		r, err := DecodeRequest([]byte(`{"input":"hi",` + tt.body + `}`))
		if err != nil {
			t.Fatal(err)
		}
		req, err := ToChat(r)
		if err != nil {
			t.Fatal(err)
		}
		p, err := SamplingParams(r, req, 50, render.SamplingDefaults{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := protocol.MarshalJSON(p)
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(string(got), `"extra_args"`); tt.want == "" && has || tt.want != "" && !strings.Contains(string(got), tt.want) {
			t.Errorf("%s: sampling params %s, want %q", tt.body, got, tt.want)
		}
	}
}

// BenchmarkResponsesToChat is the conversion of 200 decoded input items
// (calls and their outputs, reasoning, assistant text) to a chat request.
func BenchmarkResponsesToChat(b *testing.B) {
	r, err := DecodeRequest(manyItems(`{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"o"},{"type":"reasoning","summary":[{"type":"summary_text","text":"s"}]},{"role":"assistant","content":"t"}`, 50))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := ToChat(r); err != nil {
			b.Fatal(err)
		}
	}
}
