package parsers

import "testing"

const (
	hyThink  = "<think>\n"
	hyAnswer = "\n</think>\n<answer>\n"
	hyEnd    = "\n</answer>"
)

// Cases from tests/reasoning/test_hunyuan_reasoning_parser.py plus derived
// ones for the regex corners (an end tag before the answer, text before
// "<think>", truncation).
var hunyuanCases = []reasoningCase{
	{name: "quick thought", parser: "hunyuan_a13b", text: hyThink + hyAnswer + "This is the rest" + hyEnd,
		wantC: ptr("This is the rest"), src: "NO_REASONING_QUICK_THOUGHT"},
	{name: "simple", parser: "hunyuan_a13b", text: hyThink + "This is a reasoning section" + hyAnswer + "This is the rest" + hyEnd,
		wantR: ptr("This is a reasoning section"), wantC: ptr("This is the rest"), src: "SIMPLE_REASONING"},
	{name: "complete", parser: "hunyuan_a13b", text: hyThink + "This is a reasoning section" + hyAnswer,
		wantR: ptr("This is a reasoning section"), src: "COMPLETE_REASONING"},
	{name: "complete symbol", parser: "hunyuan_a13b", text: hyThink + "This is a reasoning section!" + hyAnswer,
		wantR: ptr("This is a reasoning section!"), src: "COMPLETE_REASONING_WITH_SYMBOL"},
	{name: "no reasoning", parser: "hunyuan_a13b", text: "This is content", wantC: ptr("This is content"), src: "NO_REASONING"},
	{name: "multiple lines", parser: "hunyuan_a13b", text: hyThink + "This\nThat" + hyAnswer + "This is the rest\nThat",
		wantR: ptr("This\nThat"), wantC: ptr("This is the rest\nThat"), src: "MULTIPLE_LINES"},
	{name: "text after end dropped", parser: "hunyuan_a13b", text: hyThink + "r" + hyAnswer + "c" + hyEnd + "tail",
		wantR: ptr("r"), wantC: ptr("c"), src: "derived"},
	{name: "answer only", parser: "hunyuan_a13b", text: "<answer>\nhi" + hyEnd + "x", wantC: ptr("<answer>\nhi"), src: "derived"},
	{name: "truncated reasoning", parser: "hunyuan_a13b", text: hyThink + "still", wantC: ptr(hyThink + "still"), src: "derived"},
	{name: "end before answer", parser: "hunyuan_a13b", text: hyThink + "a" + hyEnd + "b" + hyAnswer + "c",
		wantC: ptr(hyThink + "a"), src: "derived (full regex without the group)"},
	{name: "end before and after answer", parser: "hunyuan_a13b", text: hyThink + "a" + hyEnd + "b" + hyAnswer + "c" + hyEnd,
		wantR: ptr("a" + hyEnd + "b"), wantC: ptr("c"), src: "derived"},
	{name: "end right after answer", parser: "hunyuan_a13b", text: hyThink + "a" + hyAnswer + "</answer>",
		wantC: ptr(hyThink + "a\n</think>\n<answer>"), src: "derived (end overlaps the answer marker)"},
	{name: "end right after answer then body", parser: "hunyuan_a13b", text: hyThink + "a" + hyAnswer + "</answer>x" + hyEnd,
		wantR: ptr("a"), wantC: ptr("</answer>x"), src: "derived"},
	{name: "prefix dropped by half regex", parser: "hunyuan_a13b", text: "pre" + hyThink + "a" + hyAnswer + "b",
		wantR: ptr("a"), wantC: ptr("b"), src: "derived"},
	{name: "prefix with end", parser: "hunyuan_a13b", text: "pre" + hyThink + "a" + hyAnswer + "b" + hyEnd,
		wantC: ptr("pre" + hyThink + "a" + hyAnswer + "b"), src: "derived"},
	{name: "short", parser: "hunyuan_a13b", text: "<thi", wantC: ptr("<thi"), src: "derived"},
	{name: "empty", parser: "hunyuan_a13b", text: "", wantC: ptr(""), src: "derived"},
	{name: "think tag only", parser: "hunyuan_a13b", text: hyThink, wantC: ptr(hyThink), src: "derived"},
}

func TestHunyuanReasoning(t *testing.T) { runReasoningCases(t, hunyuanCases) }
