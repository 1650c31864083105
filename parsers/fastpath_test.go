package parsers

import "testing"

// TestFastArgsTakenOnlyWhenSafe checks when the steady-state shortcut
// applies; the golden and split tests check that it answers as the
// general path does.
func TestFastArgsTakenOnlyWhenSafe(t *testing.T) {
	req := mustRequest(t, weatherTools)
	for _, tc := range []struct {
		name, head, push string
		taken            bool
	}{
		{"plain text in the argument", `{"name": "get_weather", "arguments": {"city": "Pa`, "ris a", true},
		{"verbatim escapes", `{"name": "get_weather", "arguments": {"city": "Pa`, `\n\"x\"`, true},
		{"closing quote", `{"name": "get_weather", "arguments": {"city": "Pa`, `ris"`, false},
		{"escape split across pushes", `{"name": "get_weather", "arguments": {"city": "Pa`, `ris\`, false},
		{"escape that changes form", `{"name": "get_weather", "arguments": {"city": "Pa`, `\/`, false},
		{"marker byte", `{"name": "get_weather", "arguments": {"city": "Pa`, "ris <", false},
		{"before the name", `{"arguments": {"city": "Pa`, "ris", false},
		{"inside the name", `{"name": "get_`, "weather", false},
		{"a non-string argument", `{"name": "get_weather", "arguments": {"days": 1`, "2", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, reuse := range []bool{false, true} {
				p, err := New(qwen3Hermes, testVocab, req, nil)
				if err != nil {
					t.Fatal(err)
				}
				p.Push("<think>hm</think><tool_call>"+tc.head, nil)
				d, taken := p.fastArgs(tc.push, reuse)
				if taken != tc.taken {
					t.Fatalf("reuse %v: taken %v, want %v", reuse, taken, tc.taken)
				}
				if taken && (len(d.ToolCalls) != 1 || d.ToolCalls[0].Arguments != tc.push || d.Content != "" || d.Reasoning != "") {
					t.Fatalf("reuse %v: delta %+v", reuse, d)
				}
			}
		})
	}
}
