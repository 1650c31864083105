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
		wantC: new("This is the rest"), src: "NO_REASONING_QUICK_THOUGHT"},
	{name: "simple", parser: "hunyuan_a13b", text: hyThink + "This is a reasoning section" + hyAnswer + "This is the rest" + hyEnd,
		wantR: new("This is a reasoning section"), wantC: new("This is the rest"), src: "SIMPLE_REASONING"},
	{name: "complete", parser: "hunyuan_a13b", text: hyThink + "This is a reasoning section" + hyAnswer,
		wantR: new("This is a reasoning section"), src: "COMPLETE_REASONING"},
	{name: "complete symbol", parser: "hunyuan_a13b", text: hyThink + "This is a reasoning section!" + hyAnswer,
		wantR: new("This is a reasoning section!"), src: "COMPLETE_REASONING_WITH_SYMBOL"},
	{name: "no reasoning", parser: "hunyuan_a13b", text: "This is content", wantC: new("This is content"), src: "NO_REASONING"},
	{name: "multiple lines", parser: "hunyuan_a13b", text: hyThink + "This\nThat" + hyAnswer + "This is the rest\nThat",
		wantR: new("This\nThat"), wantC: new("This is the rest\nThat"), src: "MULTIPLE_LINES"},
	{name: "text after end dropped", parser: "hunyuan_a13b", text: hyThink + "r" + hyAnswer + "c" + hyEnd + "tail",
		wantR: new("r"), wantC: new("c"), src: "derived"},
	{name: "answer only", parser: "hunyuan_a13b", text: "<answer>\nhi" + hyEnd + "x", wantC: new("<answer>\nhi"), src: "derived"},
	{name: "truncated reasoning", parser: "hunyuan_a13b", text: hyThink + "still", wantC: new(hyThink + "still"), src: "derived"},
	{name: "end before answer", parser: "hunyuan_a13b", text: hyThink + "a" + hyEnd + "b" + hyAnswer + "c",
		wantC: new(hyThink + "a"), src: "derived (full regex without the group)"},
	{name: "end before and after answer", parser: "hunyuan_a13b", text: hyThink + "a" + hyEnd + "b" + hyAnswer + "c" + hyEnd,
		wantR: new("a" + hyEnd + "b"), wantC: new("c"), src: "derived"},
	{name: "end right after answer", parser: "hunyuan_a13b", text: hyThink + "a" + hyAnswer + "</answer>",
		wantC: new(hyThink + "a\n</think>\n<answer>"), src: "derived (end overlaps the answer marker)"},
	{name: "end right after answer then body", parser: "hunyuan_a13b", text: hyThink + "a" + hyAnswer + "</answer>x" + hyEnd,
		wantR: new("a"), wantC: new("</answer>x"), src: "derived"},
	{name: "prefix dropped by half regex", parser: "hunyuan_a13b", text: "pre" + hyThink + "a" + hyAnswer + "b",
		wantR: new("a"), wantC: new("b"), src: "derived"},
	{name: "prefix with end", parser: "hunyuan_a13b", text: "pre" + hyThink + "a" + hyAnswer + "b" + hyEnd,
		wantC: new("pre" + hyThink + "a" + hyAnswer + "b"), src: "derived"},
	{name: "short", parser: "hunyuan_a13b", text: "<thi", wantC: new("<thi"), src: "derived"},
	{name: "empty", parser: "hunyuan_a13b", text: "", wantC: new(""), src: "derived"},
	{name: "think tag only", parser: "hunyuan_a13b", text: hyThink, wantC: new(hyThink), src: "derived"},
}

func TestHunyuanReasoning(t *testing.T) { runReasoningCases(t, hunyuanCases) }
