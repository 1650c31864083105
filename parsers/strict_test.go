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

// TestForcedToolChoiceWhitespaceContent pins vLLM bf578e1's
// DelegatingParser._extract_tool_calls: required or named tool_choice
// parsed by a parser without supports_required_and_named (hermes under
// strict tool calling) answers whitespace-only content as "" even when no
// tool was called; auto keeps it. Every split of the text accumulates to
// the same answer.
func TestForcedToolChoiceWhitespaceContent(t *testing.T) {
	const tools = `{"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}],"tool_choice":`
	named := `{"type":"function","function":{"name":"get_weather"}}`
	for _, tt := range []struct {
		name, choice, text, want string
		calls                    int
	}{
		{"required whitespace", `"required"`, " \n\t ", "", 0},
		{"named whitespace", named, "\n\n", "", 0},
		{"required text kept", `"required"`, " \nno call here \n", " \nno call here \n", 0},
		{"named text kept", named, "sorry", "sorry", 0},
		{"required whitespace before a call", `"required"`, " \n<tool_call>{\"name\":\"get_weather\",\"arguments\":{}}</tool_call>", "", 1},
		{"auto whitespace kept", `"auto"`, " \n\t ", " \n\t ", 0},
	} {
		req := mustRequest(t, tools+tt.choice+`}`)
		for cut := 0; cut <= len(tt.text); cut++ {
			var cuts []int
			if cut > 0 && cut < len(tt.text) {
				cuts = []int{cut}
			}
			r, _ := runSplits(t, hermesOnly, req, tt.text, cuts)
			if r.Content == nil || *r.Content != tt.want || len(r.ToolCalls) != tt.calls {
				got := "<nil>"
				if r.Content != nil {
					got = *r.Content
				}
				t.Fatalf("%s, cut %d: content %q with %d calls, want %q with %d", tt.name, cut, got, len(r.ToolCalls), tt.want, tt.calls)
			}
		}
	}
}
