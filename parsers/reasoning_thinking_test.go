package parsers

import "testing"

// Cases of the start/end marker family: deepseek_v3 (tests/reasoning/
// test_deepseekv3_reasoning_parser.py checks only which parser is chosen,
// so the expectations are derived from BaseThinkingReasoningParser and
// IdentityReasoningParser), and step3 (no vLLM test at bf578e1: derived from
// step3_reasoning_parser.py).
var thinkingCases = []reasoningCase{
	{name: "v3 thinking", parser: "deepseek_v3", kwargs: `{"thinking":true}`, text: "<think>abc</think>def",
		wantR: new("abc"), wantC: new("def"), src: "derived"},
	{name: "v3 enable_thinking", parser: "deepseek_v3", kwargs: `{"enable_thinking":true}`, text: "abc</think>",
		wantR: new("abc"), src: "derived"},
	{name: "v3 truncated", parser: "deepseek_v3", kwargs: `{"thinking":true}`, text: "abc",
		wantR: new("abc"), src: "derived"},
	{name: "v3 empty think", parser: "deepseek_v3", kwargs: `{"thinking":true}`, text: "</think>x</think>y",
		wantR: new(""), wantC: new("x</think>y"), src: "derived"},
	{name: "v3 identity", parser: "deepseek_v3", text: "<think>abc</think>def",
		wantC: new("<think>abc</think>def"), src: "test_identity_reasoning_parser_basic (identity keeps all)"},
	{name: "v3 identity thinking false", parser: "deepseek_v3", kwargs: `{"thinking":false}`, text: "This is some output",
		wantC: new("This is some output"), src: "test_identity_reasoning_parser_basic"},
	{name: "v3 identity empty", parser: "deepseek_v3", text: "", wantC: new(""), src: "derived"},

	{name: "simple", parser: "step3", text: "abc</think>xyz", wantR: new("abc"), wantC: new("xyz"), src: "derived (docstring)"},
	{name: "no end", parser: "step3", text: "abc", wantR: new("abc"), src: "derived"},
	{name: "start tag is text", parser: "step3", text: "<think>abc</think>", wantR: new("<think>abc"), src: "derived"},
	{name: "second end kept", parser: "step3", text: "a</think>b</think>c", wantR: new("a"), wantC: new("b</think>c"), src: "derived"},
	{name: "empty", parser: "step3", text: "", wantR: new(""), src: "derived"},
}

func TestThinkingReasoning(t *testing.T) { runReasoningCases(t, thinkingCases) }

func TestThinkingNeedsMarkers(t *testing.T) {
	for _, name := range []string{"step3", "ernie45", "deepseek_r1"} {
		if _, err := New(Config{ReasoningParser: name}, fakeVocab{}, &Request{}, nil); err == nil {
			t.Errorf("%s: want an error for a vocabulary without think tokens", name)
		}
	}
	if _, err := New(Config{ReasoningParser: "deepseek_v3"}, fakeVocab{}, &Request{}, nil); err != nil {
		t.Errorf("deepseek_v3 without thinking needs no think tokens: %v", err)
	}
}
