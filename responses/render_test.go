package responses

import (
	"context"
	"strings"
	"testing"

	"github.com/vrender/vrender/render"
	"github.com/vrender/vrender/render/rendertest"
)

// TestRenderResponsesToolsReachTemplate renders a request with a function
// tool and checks the template printed the FunctionTool dump (Qwen3's
// template writes each tool with tojson), which the chat route cannot
// produce since it dumps ChatCompletionToolsParam.
func TestRenderResponsesToolsReachTemplate(t *testing.T) {
	gen := rendertest.Hermes(t)
	req, err := DecodeRequest([]byte(`{"input":"x","tools":[{"type":"function","name":"f","parameters":{"type":"object"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	chat, err := ToChat(req)
	if err != nil {
		t.Fatal(err)
	}
	prompt, _, err := gen.RenderConverted(context.Background(), chat, toolDicts(chat.Tools), render.PromptLimits{})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}, "strict": null, "type": "function", "description": null}}`
	if !strings.Contains(prompt.Text, want) {
		t.Errorf("prompt lacks %s:\n%s", want, prompt.Text)
	}
}
