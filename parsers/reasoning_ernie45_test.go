package parsers

import "testing"

// Cases from tests/reasoning/test_ernie45_reasoning_parser.py plus derived
// response-tag cases.
var ernieCases = []reasoningCase{
	{name: "with think", parser: "ernie45", text: "abc</think>def", wantR: new("abc"), wantC: new("def"), src: "WITH_THINK"},
	{name: "without think", parser: "ernie45", text: "abc", wantR: new("abc"), src: "WITHOUT_THINK"},
	{name: "complete", parser: "ernie45", text: "abc</think>", wantR: new("abc"), src: "COMPLETE_REASONING"},
	{name: "multiline", parser: "ernie45", text: "abc\nABC</think>def\nDEF", wantR: new("abc\nABC"), wantC: new("def\nDEF"), src: "MULTILINE_REASONING"},
	{name: "response tags", parser: "ernie45", text: "abc\n</think>\n\n<response>\ndef\n</response>\n",
		wantR: new("abc\n"), wantC: new("\ndef\n"), src: "derived (docstring format)"},
	{name: "response unclosed", parser: "ernie45", text: "abc</think>\n<response>\ndef",
		wantR: new("abc"), wantC: new("\n<response>\ndef"), src: "derived"},
	{name: "response last close", parser: "ernie45", text: "a</think>x<response>b</response>c</response>d",
		wantR: new("a"), wantC: new("b</response>c"), src: "derived (rfind)"},
	{name: "close before open", parser: "ernie45", text: "a</think>x</response>y<response>z",
		wantR: new("a"), wantC: new("x</response>y<response>z"), src: "derived"},
	{name: "empty response", parser: "ernie45", text: "a</think><response></response>", wantR: new("a"), src: "derived"},
	{name: "think start dropped", parser: "ernie45", text: "<think>a</think>b", wantR: new("a"), wantC: new("b"), src: "derived"},
}

func TestErnie45Reasoning(t *testing.T) { runReasoningCases(t, ernieCases) }
