package parsers

import "testing"

// TestStrictToolCallingSupport mirrors ToolParser.__init_subclass__: with
// strict tool calling (vLLM's default) parsers with a structural tag parse
// required/named like auto; with it off they take the JSON path again,
// except glm47, whose class clears supports_required_and_named itself.
func TestStrictToolCallingSupport(t *testing.T) {
	for _, tt := range []struct {
		name           string
		strict, legacy bool
	}{
		{"hermes", false, true}, {"llama3_json", false, true}, {"kimi_k2", false, true},
		{"deepseek_v3", false, true}, {"deepseek_v31", false, true}, {"minimax_m2", false, true},
		{"qwen3_coder", false, true}, {"qwen3_xml", false, true}, {"glm47", false, false},
		{"mistral", true, true}, {"pythonic", true, true},
	} {
		info := toolParsers[tt.name]
		if got := info.supportsRequiredAndNamed(false); got != tt.strict {
			t.Errorf("%s strict: %v, want %v", tt.name, got, tt.strict)
		}
		if got := info.supportsRequiredAndNamed(true); got != tt.legacy {
			t.Errorf("%s legacy: %v, want %v", tt.name, got, tt.legacy)
		}
	}
}
