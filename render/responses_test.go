package render_test

import (
	"context"
	"strings"
	"testing"

	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
	"github.com/vrender/vrender/render/rendertest"
	"github.com/vrender/vrender/responses"
)

// TestRenderResponsesToolsReachTemplate renders a request with a function
// tool and checks the template printed the FunctionTool dump (Qwen3's
// template writes each tool with tojson), which the chat route cannot
// produce since it dumps ChatCompletionToolsParam.
func TestRenderResponsesToolsReachTemplate(t *testing.T) {
	gen := rendertest.Hermes(t)
	req, err := protocol.DecodeResponsesRequest([]byte(`{"input":"x","tools":[{"type":"function","name":"f","parameters":{"type":"object"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	chat, err := responses.ToChat(req)
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := render.ChatPromptText(context.Background(), gen, chat)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}, "strict": null, "type": "function", "description": null}}`
	if !strings.Contains(prompt, want) {
		t.Errorf("prompt lacks %s:\n%s", want, prompt)
	}
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
			r, err := protocol.DecodeResponsesRequest([]byte(c.body))
			if c.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q...", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			req, err := responses.ToChat(r)
			if err != nil {
				t.Fatal(err)
			}
			if (req.Tools == nil) != (c.want == nil) || len(req.Tools) != len(c.want) {
				t.Fatalf("tools %q, want %q", render.ResponsesToolDicts(req), c.want)
			}
			got := render.ResponsesToolDicts(req)
			for i := range c.want {
				if got[i] != c.want[i] {
					t.Errorf("tool %d\n got: %s\nwant: %s", i, got[i], c.want[i])
				}
			}
		})
	}
}
