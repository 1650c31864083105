package parsers

import (
	"math/rand/v2"
	"testing"
)

// specialVocab is testVocab with a list of special tokens, as a real
// tokenizer gives the engine tool machines.
type specialVocab struct {
	fakeVocab
	special []string
}

func (v specialVocab) SpecialTokens() []string { return v.special }

// qwen3Specials are Qwen3's special tokens (tokenizer.json "special": true,
// which is also transformers' all_special_tokens for Qwen3), plus Kimi-K2's
// call markers, which are special in Kimi's tokenizer but terminals of its
// grammar and so never dropped.
var qwen3Specials = specialVocab{fakeVocab: testVocab, special: []string{
	"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
	"<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
	"<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>",
	kimiSectionStart, kimiSectionEnd, kimiCallStart, kimiCallEnd, kimiArgStart,
}}

// vLLM's ParserEngine lexes special tokens that are not its grammar's
// terminals as DROP and leaves them out of everything the tool pass
// returns (engine_drop.go); the reasoning pass keeps them.
func TestEngineToolParsersDropSpecialTokens(t *testing.T) {
	none := `{"tool_choice":"none","tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}`
	cases := []struct {
		name string
		cfg  Config
		req  string
		text string
		want Result
	}{
		{"qwen3_coder/none", qcOnly, none, "The <|object_ref_start|>cat<|object_ref_end|> is at <|box_start|>(1,2)<|box_end|>.",
			Result{Content: new("The cat is at (1,2)."), FinishReason: "stop"}},
		{"qwen3_xml/none", qxOnly, none, "a<|im_end|>b<|endoftext|>", Result{Content: new("ab"), FinishReason: "stop"}},
		{"qwen3_coder/none only specials", qcOnly, none, "<|im_end|>", Result{FinishReason: "stop"}},
		{"qwen3_coder/no tools", qcOnly, `{}`, "x<|vision_pad|>y", Result{Content: new("xy"), FinishReason: "stop"}},
		{"qwen3_coder/auto content, name and value", qcOnly, qcTools,
			"Hi<|im_end|> " + qcBuild("get_<|box_end|>weather", "city", "Os<|endoftext|>lo"),
			Result{Content: new("Hi"), ToolCalls: []ToolCall{call("get_weather", `{"city": "Oslo"}`)}, FinishReason: "tool_calls"}},
		{"qwen3_coder/a special token inside a marker breaks it", qcOnly, none, "<tool_<|im_end|>call>x",
			Result{Content: new("<tool_call>x"), FinishReason: "stop"}},
		{"qwen3_coder/text like a special token prefix stays", qcOnly, none, "a <|im b <|",
			Result{Content: new("a <|im b <|"), FinishReason: "stop"}},
		{"qwen3+qwen3_coder/reasoning keeps them", qcQwen3, none, "r<|box_start|>s</think>c<|box_end|>d",
			Result{Reasoning: new("r<|box_start|>s"), Content: new("cd"), FinishReason: "stop"}},
		{"glm47/none", glm47Only, none, "x<|im_end|>y", Result{Content: new("xy"), FinishReason: "stop"}},
		{"minimax_m2/none", mmOnly, none, "x<|im_end|>y", Result{Content: new("xy"), FinishReason: "stop"}},
		{"kimi_k2/none", kimiOnly, none, "x<|im_end|>y", Result{Content: new("xy"), FinishReason: "stop"}},
		{"kimi_k2/terminals that are special tokens still parse", kimiOnly, kimiTypedTools,
			"a<|im_end|>" + kimiWrap(kimiTool("functions.get_weather:0", `{"city": "Oslo"}`)),
			Result{Content: new("a"), ToolCalls: []ToolCall{call("get_weather", `{"city": "Oslo"}`)}, FinishReason: "tool_calls"}},
	}
	r := rand.New(rand.NewPCG(14, 2))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkToolCaseWith(t, r, qwen3Specials, tc.cfg, mustRequest(t, tc.req), tc.text, tc.want)
		})
	}
}

// Without a list of special tokens (or with none to drop) the machines
// keep the text as before.
func TestEngineTerminalsWithoutSpecials(t *testing.T) {
	if got := engineTerminals(testVocab, qcMarkers); len(got) != len(qcMarkers) {
		t.Fatalf("fakeVocab: %d terminals, want %d", len(got), len(qcMarkers))
	}
	v := specialVocab{fakeVocab: testVocab, special: []string{toolCallStart, ""}}
	if got := engineTerminals(v, qcMarkers); len(got) != len(qcMarkers) {
		t.Fatalf("only terminals special: %d terminals, want %d", len(got), len(qcMarkers))
	}
}
