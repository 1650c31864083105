package parsers

import "testing"

// Cases from tests/reasoning/test_olmo3_reasoning_parser.py plus derived
// ones (truncation, empty output, a later "<think>").
var olmo3Cases = []reasoningCase{
	{name: "no reasoning", parser: "olmo3", text: "<think></think>No thoughts, head empty!", wantC: new("No thoughts, head empty!"), src: "NO_REASONING"},
	{name: "no reasoning newline", parser: "olmo3", text: "<think>\n</think>\n\nNo thoughts, head empty!",
		wantR: new("\n"), wantC: new("\n\nNo thoughts, head empty!"), src: "NO_REASONING_WITH_NEWLINE"},
	{name: "simple", parser: "olmo3", text: "<think>This is a reasoning section</think>This is the rest",
		wantR: new("This is a reasoning section"), wantC: new("This is the rest"), src: "SIMPLE_REASONING"},
	{name: "newline", parser: "olmo3", text: "<think> Look!\n\nI'm thinking...</think>\nThis is the rest",
		wantR: new(" Look!\n\nI'm thinking..."), wantC: new("\nThis is the rest"), src: "SIMPLE_REASONING_WITH_NEWLINE"},
	{name: "multiple newlines", parser: "olmo3", text: "<think>\nLook!\nI'm thinking...\n\n</think>\n\n\nThis is the rest",
		wantR: new("\nLook!\nI'm thinking...\n\n"), wantC: new("\n\n\nThis is the rest"), src: "SIMPLE_REASONING_WITH_MULTIPLE_NEWLINES"},
	{name: "trailing space", parser: "olmo3", text: "<think>\nLook!\nI'm thinking... </think>\nThis is the rest",
		wantR: new("\nLook!\nI'm thinking... "), wantC: new("\nThis is the rest"), src: "SIMPLE_REASONING_WITH_TRAILING_SPACE"},
	{name: "only end think", parser: "olmo3", text: "</think>\n\nNo thoughts, head empty!", wantC: new("\n\nNo thoughts, head empty!"),
		src: "NO_REASONING_ONLY_END_THINK"},
	{name: "reasoning only end think", parser: "olmo3", text: "The user is asking me not to think.</think>No thoughts!",
		wantR: new("The user is asking me not to think."), wantC: new("No thoughts!"), src: "REASONING_ONLY_END_THINK"},
	{name: "truncated", parser: "olmo3", text: "<think>still", wantC: new("<think>still"), src: "derived"},
	{name: "empty", parser: "olmo3", text: "", wantC: new(""), src: "derived"},
	{name: "inner think kept", parser: "olmo3", text: "a<think>b</think>c</think>", wantR: new("a<think>b"), wantC: new("c</think>"), src: "derived"},
	{name: "complete", parser: "olmo3", text: "<think>x</think>", wantR: new("x"), src: "derived"},
}

func TestOlmo3Reasoning(t *testing.T) { runReasoningCases(t, olmo3Cases) }
