package enginesim

import (
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/structtaggolden"
)

// TestStructuralTagText: for every forced (named) and required golden tag
// the simulator answers one call of an allowed tool in the tag's format.
func TestStructuralTagText(t *testing.T) {
	golden, err := structtaggolden.Load()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"hermes/one/named":              "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": ",
		"qwen_3_coder/several/required": "<tool_call>\n<function=get_weather>\n<parameter=city>\n",
		"llama/mixed/named":             `{"name": "empty", "parameters": {}}`,
		"kimi/one/required":             "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{",
		"minimax/one/named":             "\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">",
	}
	for _, c := range golden.Cases {
		choice := c.Choice()
		if c.StructuralTag == nil {
			continue
		}
		got, ok := structuralTagText(*c.StructuralTag)
		key := c.Model + "/" + c.Tools + "/" + choice
		if choice == "auto" {
			if ok {
				t.Errorf("%s: auto tag answered %q", key, got)
			}
			continue
		}
		if !ok || got == "" {
			t.Errorf("%s: no call", key)
			continue
		}
		if w, has := want[key]; has && !strings.HasPrefix(got, w) {
			t.Errorf("%s: got %q, want prefix %q", key, got, w)
		}
	}
}
