package parsers

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// With enable_thinking false the Qwen3 template ends the prompt with
// "<think>\n\n</think>\n\n". The golden set (r1_thinking_disabled*) answers
// content, as vLLM's stream and newer vLLM's non-streaming parse do (they
// see the prompt ids); vLLM at bf578e1 parses non-streaming output without
// the prompt and answers all reasoning (docs/compatibility.md). vrender
// follows the golden set, and its stream adds up to its batch answer.
func TestDeepSeekR1ThinkingDisabledIsContent(t *testing.T) {
	closed := []int{151644, 872, 198, 80, 151645, 198, 151644, 77091, 198, 151667, 271, 151668, 271}
	open := []int{151644, 872, 198, 80, 151645, 198, 151644, 77091, 198, 151667, 198}
	const call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>"
	cases := []struct {
		name   string
		req    string
		prompt []int
		text   string
		want   Result
	}{
		{"content", `{"chat_template_kwargs":{"enable_thinking":false}}`, closed, "Direct answer.",
			Result{Content: new("Direct answer."), FinishReason: "stop"}},
		{"tool call", weatherTools, closed, call,
			Result{Content: new(""), ToolCalls: []ToolCall{{Name: "get_weather", Arguments: `{"city": "Oslo"}`}}, FinishReason: "tool_calls"}},
		{"a late end tag is content too", `{}`, closed, "a</think>b",
			Result{Content: new("a</think>b"), FinishReason: "stop"}},
		// Contrast: without the prompt (bf578e1's non-streaming call) or
		// with reasoning left open by it, everything is reasoning.
		{"no prompt ids", `{}`, nil, "Direct answer.", Result{Reasoning: new("Direct answer."), FinishReason: "stop"}},
		{"prompt leaves reasoning open", `{}`, open, "Direct answer.",
			Result{Reasoning: new("Direct answer."), FinishReason: "stop"}},
	}
	r := rand.New(rand.NewPCG(4, 3))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := mustRequest(t, tc.req)
			run := func(cuts []int) Result {
				p, err := New(r1Hermes, testVocab, req, tc.prompt)
				if err != nil {
					t.Fatal(err)
				}
				var acc Accumulator
				var scratch Delta
				prev := 0
				for i, c := range append(cuts, len(tc.text)) {
					acc.Add(pushAlternating(p, i, tc.text[prev:c], &scratch))
					prev = c
				}
				acc.Add(finishDelta(p))
				return normalise(acc.Result(p, "stop"))
			}
			batch := run(nil)
			if want := normalise(tc.want); !reflect.DeepEqual(batch, want) {
				t.Fatalf("batch:\n got %s\nwant %s", dump(batch), dump(want))
			}
			for k := range 21 {
				var cuts []int
				if k == 0 {
					for i := 1; i < len(tc.text); i++ {
						cuts = append(cuts, i)
					}
				} else {
					cuts = randomCuts(len(tc.text), r)
				}
				if got := run(cuts); !reflect.DeepEqual(got, batch) {
					t.Fatalf("cuts %v:\n got %s\nwant %s", cuts, dump(got), dump(batch))
				}
			}
		})
	}
}
