package enginesim

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// The tools of openai/harmony's test_render_functions_with_parameters
// golden, read back from the rendered namespace.
func TestHarmonyToolsFromGolden(t *testing.T) {
	prompt, err := os.ReadFile("../render/harmony/testdata/test_render_functions_with_parameters.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := harmonyTools(string(prompt))
	want := []harmonyTool{
		{"get_location", "{}"},
		{"get_current_weather", `{"location": "sim"}`},
		{"get_multiple_weathers", `{"locations": []}`},
		{"kitchensink", "{}"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for _, tl := range got {
		if !json.Valid([]byte(tl.arguments)) {
			t.Errorf("%s: arguments %s not JSON", tl.name, tl.arguments)
		}
	}
	nested := "namespace functions {\n\ntype f = (_: {\nmode: \"fast\" | \"slow\",\nn?: number,\ninner: {\n  x: string,\n},\nok: boolean,\n}) => any;\n\n} // namespace functions"
	if got := harmonyTools(nested); len(got) != 1 || got[0].arguments != `{"mode": "fast", "inner": {}, "ok": true}` {
		t.Errorf("nested: %+v", got)
	}
	if harmonyToolResultPending(string(prompt)) {
		t.Error("no tool result in the golden")
	}
	if !harmonyToolResultPending("<|start|>user<|message|>q<|end|><|start|>assistant to=functions.f<|channel|>commentary json<|message|>{}<|call|><|start|>functions.f to=assistant<|channel|>commentary<|message|>1<|end|><|start|>assistant") {
		t.Error("tool result not seen")
	}
}
