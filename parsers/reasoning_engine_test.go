package parsers

import "testing"

// Cases of the ParserEngine families: glm45 (tests/reasoning/
// test_glm4_moe_reasoning_parser.py), kimi_k2 (test_kimi_k2_reasoning_
// parser.py), minimax_m2 (test_minimax_m2_reasoning_parser.py),
// minimax_m2_append_think (test_minimax_m2_append_reasoning_parser.py,
// non-streaming constants), seed_oss (no vLLM test: derived from the
// Qwen3 grammar it inherits) and derived ones for the rules the tests do
// not reach (trailing whitespace, thinking switches, re-entry).
var engineCases = []reasoningCase{
	{name: "with think", parser: "glm45", text: "<think>This is a reasoning section</think>This is the rest",
		wantR: new("This is a reasoning section"), wantC: new("This is the rest"), src: "WITH_THINK"},
	{name: "without think", parser: "glm45", text: "This is the rest", wantR: new("This is the rest"), src: "WITHOUT_THINK"},
	{name: "without open think", parser: "glm45", text: "This is a reasoning section</think>This is the rest",
		wantR: new("This is a reasoning section"), wantC: new("This is the rest"), src: "WITHOUT_OPEN_THINK"},
	{name: "complete", parser: "glm45", text: "<think>This is a reasoning section</think>",
		wantR: new("This is a reasoning section"), src: "COMPLETE_REASONING"},
	{name: "multiline", parser: "glm45", text: "<think>This is a reasoning\nsection</think>This is the rest\nThat",
		wantR: new("This is a reasoning\nsection"), wantC: new("This is the rest\nThat"), src: "MULTILINE_REASONING"},
	{name: "only open tag", parser: "glm45", text: "<think>This is a reasoning section",
		wantR: new("This is a reasoning section"), src: "ONLY_OPEN_TAG"},
	{name: "trailing whitespace", parser: "glm45", text: "<think>plan \n\t</think>\nanswer",
		wantR: new("plan"), wantC: new("\nanswer"), src: "derived (strip_trailing_reasoning_whitespace)"},
	{name: "whitespace only", parser: "glm45", text: "<think>  \n</think>x", wantC: new("x"), src: "derived"},
	{name: "re-enter", parser: "glm45", text: "a </think>b<think>c</think>d",
		wantR: new("a c"), wantC: new("bd"), src: "derived (CONTENT+THINK_START -> REASONING)"},
	{name: "tool call ends reasoning", parser: "glm45", text: "plan<tool_call>f<arg_key>k</arg_key>",
		wantR: new("plan"), wantC: new("<tool_call>f<arg_key>k</arg_key>"), src: "derived"},
	{name: "thinking off", parser: "glm45", kwargs: `{"enable_thinking":false}`, text: "<think>a</think>b",
		wantC: new("<think>a</think>b"), src: "derived"},
	{name: "thinking off empty", parser: "glm45", kwargs: `{"thinking":false}`, text: "", wantC: new(""), src: "derived"},
	{name: "thinking null is default", parser: "glm45", kwargs: `{"thinking":null}`, text: "a</think>b",
		wantR: new("a"), wantC: new("b"), src: "derived"},

	{name: "think tags", parser: "kimi_k2", text: "<think>step by step reasoning</think>final answer",
		wantR: new("step by step reasoning"), wantC: new("final answer"), src: "test_extract_reasoning_with_think_tags"},
	{name: "empty thinking", parser: "kimi_k2", text: "<think></think>final answer", wantC: new("final answer"),
		src: "test_extract_reasoning_empty_thinking"},
	{name: "implicit start", parser: "kimi_k2", text: "implicit reasoning with no tags",
		wantR: new("implicit reasoning with no tags"), src: "test_extract_reasoning_implicit_start"},
	{name: "tool section", parser: "kimi_k2", text: "some reasoning<|tool_calls_section_begin|>tool call data",
		wantR: new("some reasoning"), wantC: new("<|tool_calls_section_begin|>tool call data"),
		src: "test_extract_reasoning_tool_section_ends_reasoning"},
	{name: "include_reasoning false", parser: "kimi_k2", include: new(bool), text: "<think>r </think>c",
		wantC: new("c"), src: "derived (chat server drops reasoning)"},
	{name: "thinking off", parser: "kimi_k2", kwargs: `{"thinking":false}`, text: "a</think>b", wantC: new("a</think>b"), src: "derived"},
	{name: "second end dropped", parser: "kimi_k2", text: "a</think>b</think>c", wantR: new("a"), wantC: new("bc"), src: "derived"},

	{name: "simple", parser: "minimax_m2", text: "This is a reasoning section</think>This is the rest",
		wantR: new("This is a reasoning section"), wantC: new("This is the rest"), src: "SIMPLE_REASONING"},
	{name: "complete", parser: "minimax_m2", text: "This is a reasoning section</think>",
		wantR: new("This is a reasoning section"), src: "COMPLETE_REASONING"},
	{name: "no end", parser: "minimax_m2", text: "This is reasoning in progress", wantR: new("This is reasoning in progress"), src: "NO_END_TOKEN"},
	{name: "multiple lines", parser: "minimax_m2", text: "First line\nSecond line</think>Response first line\nResponse second",
		wantR: new("First line\nSecond line"), wantC: new("Response first line\nResponse second"), src: "MULTIPLE_LINES"},
	{name: "shortest", parser: "minimax_m2", text: "</think>This is the response", wantC: new("This is the response"),
		src: "SHORTEST_REASONING_STREAMING"},
	{name: "empty", parser: "minimax_m2", text: "", src: "EMPTY_STREAMING"},
	{name: "special chars", parser: "minimax_m2", text: "Let me think... 1+1=2, right?</think>Yes, 1+1=2.",
		wantR: new("Let me think... 1+1=2, right?"), wantC: new("Yes, 1+1=2."), src: "SPECIAL_CHARS"},
	{name: "code", parser: "minimax_m2", text: "```python\nprint('hello')\n```</think>Here is the code.",
		wantR: new("```python\nprint('hello')\n```"), wantC: new("Here is the code."), src: "CODE_IN_REASONING"},
	{name: "tool call", parser: "minimax_m2", text: "r\n<minimax:tool_call><invoke name=\"f\">",
		wantR: new("r"), wantC: new("<minimax:tool_call><invoke name=\"f\">"), src: "derived"},

	{name: "simple", parser: "minimax_m2_append_think", text: "This is reasoning</think>This is response",
		wantC: new("<think>This is reasoning</think>This is response"), src: "SIMPLE_OUTPUT"},
	{name: "only end", parser: "minimax_m2_append_think", text: "</think>This is response",
		wantC: new("<think></think>This is response"), src: "ONLY_END_TOKEN"},
	{name: "empty", parser: "minimax_m2_append_think", text: "", wantC: new("<think>"), src: "EMPTY"},

	{name: "seed think", parser: "seed_oss", text: "<seed:think>plan </seed:think>answer",
		wantR: new("plan "), wantC: new("answer"), src: "derived (no trailing strip, as qwen3)"},
	{name: "seed tool call", parser: "seed_oss", text: "plan<seed:tool_call><function=f>",
		wantR: new("plan"), wantC: new("<seed:tool_call><function=f>"), src: "derived"},
	{name: "seed plain think tag is text", parser: "seed_oss", text: "<think>a</think>b",
		wantR: new("<think>a</think>b"), src: "derived"},
	{name: "seed thinking off", parser: "seed_oss", kwargs: `{"enable_thinking":false}`, text: "a</seed:think>b",
		wantC: new("a</seed:think>b"), src: "derived"},
}

func TestEngineReasoning(t *testing.T) { runReasoningCases(t, engineCases) }

func TestPySpaceSuffix(t *testing.T) {
	for s, want := range map[string]int{"": 0, "a": 0, "a \n": 2, " \u00a0\u3000": 3 + 2 + 1, "x\x1c": 1, "x\u200b": 0, "\xff ": 1} {
		if got := pySpaceSuffix(s); got != want {
			t.Errorf("pySpaceSuffix(%q) = %d, want %d", s, got, want)
		}
	}
}
