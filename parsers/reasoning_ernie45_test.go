package parsers

import "testing"

// Cases from tests/reasoning/test_ernie45_reasoning_parser.py plus derived
// response-tag cases.
var ernieCases = []reasoningCase{
	{name: "with think", parser: "ernie45", text: "abc</think>def", wantR: ptr("abc"), wantC: ptr("def"), src: "WITH_THINK"},
	{name: "without think", parser: "ernie45", text: "abc", wantR: ptr("abc"), src: "WITHOUT_THINK"},
	{name: "complete", parser: "ernie45", text: "abc</think>", wantR: ptr("abc"), src: "COMPLETE_REASONING"},
	{name: "multiline", parser: "ernie45", text: "abc\nABC</think>def\nDEF", wantR: ptr("abc\nABC"), wantC: ptr("def\nDEF"), src: "MULTILINE_REASONING"},
	{name: "response tags", parser: "ernie45", text: "abc\n</think>\n\n<response>\ndef\n</response>\n",
		wantR: ptr("abc\n"), wantC: ptr("\ndef\n"), src: "derived (docstring format)"},
	{name: "response unclosed", parser: "ernie45", text: "abc</think>\n<response>\ndef",
		wantR: ptr("abc"), wantC: ptr("\n<response>\ndef"), src: "derived"},
	{name: "response last close", parser: "ernie45", text: "a</think>x<response>b</response>c</response>d",
		wantR: ptr("a"), wantC: ptr("b</response>c"), src: "derived (rfind)"},
	{name: "close before open", parser: "ernie45", text: "a</think>x</response>y<response>z",
		wantR: ptr("a"), wantC: ptr("x</response>y<response>z"), src: "derived"},
	{name: "empty response", parser: "ernie45", text: "a</think><response></response>", wantR: ptr("a"), src: "derived"},
	{name: "think start dropped", parser: "ernie45", text: "<think>a</think>b", wantR: ptr("a"), wantC: ptr("b"), src: "derived"},
}

func TestErnie45Reasoning(t *testing.T) { runReasoningCases(t, ernieCases) }
