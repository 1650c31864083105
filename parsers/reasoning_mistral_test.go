package parsers

import "testing"

// Cases from tests/reasoning/test_mistral_reasoning_parser.py (its
// non-streaming expectations) plus derived ones.
var mistralCases = []reasoningCase{
	{name: "invalid simple", parser: "mistral", text: "This is a reasoning section[/THINK]This is the rest",
		wantC: new("This is a reasoning sectionThis is the rest"), src: "INVALID_SIMPLE_REASONING"},
	{name: "invalid complete", parser: "mistral", text: "This is a reasoning section[/THINK]",
		wantC: new("This is a reasoning section"), src: "INVALID_COMPLETE_REASONING"},
	{name: "no content", parser: "mistral", text: "[THINK]This is reasoning", wantR: new("This is reasoning"), src: "NO_CONTENT"},
	{name: "no reasoning", parser: "mistral", text: "This is content", wantC: new("This is content"), src: "NO_REASONING"},
	{name: "invalid multiple lines", parser: "mistral", text: "This\nThat[/THINK]This is the rest\nThat",
		wantC: new("This\nThatThis is the rest\nThat"), src: "INVALID_MULTIPLE_LINES"},
	{name: "invalid shortest", parser: "mistral", text: "[/THINK]This is the rest", wantC: new("This is the rest"),
		src: "INVALID_SHORTEST_REASONING_NO_STREAMING"},
	{name: "with think", parser: "mistral", text: "[THINK]This is a reasoning section[/THINK]This is the rest",
		wantR: new("This is a reasoning section"), wantC: new("This is the rest"), src: "REASONING_WITH_THINK"},
	{name: "complete with think", parser: "mistral", text: "[THINK]This is a reasoning section[/THINK]",
		wantR: new("This is a reasoning section"), src: "COMPLETE_REASONING_WITH_THINK"},
	{name: "multiple lines with think", parser: "mistral", text: "[THINK]This\nThat[/THINK]This is the rest\nThat",
		wantR: new("This\nThat"), wantC: new("This is the rest\nThat"), src: "MULTIPLE_LINES_WITH_THINK"},
	{name: "think no end", parser: "mistral", text: "[THINK]This is a reasoning section",
		wantR: new("This is a reasoning section"), src: "THINK_NO_END"},
	{name: "empty", parser: "mistral", text: "", wantC: new(""), src: "EMPTY"},
	{name: "new line", parser: "mistral", text: "Before\n[THINK]This is a reasoning section[/THINK]\nThis is the rest",
		wantR: new("This is a reasoning section"), wantC: new("Before\n\nThis is the rest"), src: "NEW_LINE"},
	{name: "end before start kept", parser: "mistral", text: "a[/THINK]b[THINK]c[/THINK]d",
		wantR: new("c"), wantC: new("a[/THINK]bd"), src: "derived"},
	{name: "only first stray end dropped", parser: "mistral", text: "a[/THINK]b[/THINK]c",
		wantC: new("ab[/THINK]c"), src: "derived"},
	{name: "empty think", parser: "mistral", text: "[THINK][/THINK]", wantR: new(""), src: "derived"},
	{name: "second think is reasoning text", parser: "mistral", text: "[THINK]a[THINK]b[/THINK]c[/THINK]",
		wantR: new("a[THINK]b"), wantC: new("c[/THINK]"), src: "derived"},
}

func TestMistralReasoning(t *testing.T) { runReasoningCases(t, mistralCases) }
