package parsers

import (
	"math/rand/v2"
	"strings"
	"testing"
)

var seedOnly = Config{ToolParser: "seed_oss", EnableAutoToolChoice: true}

// toSeed respells the qwen3 wrappers as Seed-OSS's.
var toSeed = strings.NewReplacer("<think>", "<seed:think>", "</think>", "</seed:think>",
	"<tool_call>", "<seed:tool_call>", "</tool_call>", "</seed:tool_call>")

// seedCases: vLLM's tests/parser/engine/test_seed_oss.py tool cases (its
// expectations), then cases on what translation must keep apart.
var seedCases = []toolCase{
	{"vllm/single call", qcTools, "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Tokyo</parameter>\n</function>\n</seed:tool_call>",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Tokyo"}`)}, FinishReason: "tool_calls"}},
	{"vllm/malformed function end keeps siblings", qcTools, "<seed:tool_call>\n<function=broken</function>\n</seed:tool_call><seed:tool_call>\n<function=get_weather>\n<parameter=city>Tokyo</parameter>\n</function>\n</seed:tool_call>",
		Result{ToolCalls: []ToolCall{call("broken", `{}`), call("get_weather", `{"city": "Tokyo"}`)}, FinishReason: "tool_calls"}},
	{"vllm/budget reflect tags after reasoning", qcTools, "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Barcelona</parameter>\n</function>\n</seed:tool_call>",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "Barcelona"}`)}, FinishReason: "tool_calls"}},
	{"qwen3 wrappers are plain text", qcTools, "<tool_call>\n<function=get_time>\n</function>\n</tool_call>",
		Result{Content: new("<tool_call>"), ToolCalls: []ToolCall{call("get_time", `{}`)}, FinishReason: "tool_calls"}},
	{"qwen3 wrappers without a call stay", qcTools, "a <tool_call> b </think> c <think>",
		Result{Content: new("a <tool_call> b </think> c <think>"), FinishReason: "stop"}},
	{"seed think end dropped before a call", qcTools, "plan</seed:think> go\n<seed:tool_call><function=get_time></function></seed:tool_call>",
		Result{Content: new("plan go"), ToolCalls: []ToolCall{call("get_time", `{}`)}, FinishReason: "tool_calls"}},
	{"qwen3 wrapper's > still closes a name", qcTools, "<seed:tool_call><function=a<think>b</function>",
		Result{ToolCalls: []ToolCall{call("a<think", `{}`)}, FinishReason: "tool_calls"}},
	{"wrappers inside values come back", qcTools, "<seed:tool_call><function=p><parameter=v></seed:think><tool_call>x</parameter></function>",
		Result{ToolCalls: []ToolCall{call("p", `{"v": "</seed:think><tool_call>x"}`)}, FinishReason: "tool_calls"}},
	{"streamed string value with wrappers", qcTools, "<seed:tool_call><function=get_weather><parameter=city>\n<think></seed:tool_call>" + strings.Repeat("long ", 50) + "\n</parameter></function>",
		Result{ToolCalls: []ToolCall{call("get_weather", `{"city": "<think></seed:tool_call>`+strings.Repeat("long ", 50)+`"}`)}, FinishReason: "tool_calls"}},
	{"raw content keeps seed spellings", qcTools, "x <seed:tool_call> </seed:tool_call> y",
		Result{Content: new("x <seed:tool_call> </seed:tool_call> y"), FinishReason: "stop"}},
}

func TestSeedOSSCases(t *testing.T) { runToolCases(t, seedOnly, 27, seedCases) }

// TestSeedOSSMatchesQwen3Coder runs the qwen3_coder table respelled: the
// grammar is the same, so the answers must be too.
func TestSeedOSSMatchesQwen3Coder(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	for _, tc := range qwen3CoderCases {
		if tc.cfg != qcOnly && tc.cfg != qxOnly || strings.Contains(tc.req, `"required"`) {
			// Reasoning parsers read qwen3's think tags; seed_oss, unlike
			// qwen3_coder, has vLLM's supports_required_and_named.
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want.Content != nil {
				want.Content = new(toSeed.Replace(*want.Content))
			}
			want.ToolCalls = append([]ToolCall(nil), want.ToolCalls...)
			checkToolCase(t, r, seedOnly, mustRequest(t, tc.req), toSeed.Replace(tc.text), want)
		})
	}
}

var seedFuzzPieces = []string{"<seed:tool_call>", "</seed:tool_call>", "<seed:think>", "</seed:think>", "<tool_call>", "</think>",
	"<function=", "get_weather", "</function>", "<parameter=", "city", "</parameter>", ">", "\n", " ", "x", "<seed:", "\U0010FFF2", "東"}

func FuzzSeedOSS(f *testing.F) {
	f.Add([]byte{0, 13, 6, 7, 12, 9, 10, 12, 15, 11, 8, 1}, uint64(1))
	f.Add([]byte{4, 6, 7, 12, 3, 5, 2}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		text, ok := fuzzText(recipe, seedFuzzPieces)
		if !ok {
			return
		}
		batch, acc := streamAgrees(t, seedOnly, mustRequest(t, qcTools), text, fuzzCuts(text, seed))
		if len(batch.ToolCalls) > 0 && strings.Contains(acc.Content(), "<seed:tool_call>") {
			t.Fatalf("%q: marker leaked as content %q", text, acc.Content())
		}
	})
}
