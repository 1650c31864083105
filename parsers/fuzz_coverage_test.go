package parsers

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// FuzzGLM45 runs the glm45 tool parser (glm47's machine under vLLM's
// other name) by its own name.
func FuzzGLM45(f *testing.F) {
	f.Add([]byte{13, 0, 8, 2, 10, 3, 4, 13, 5, 1, 13}, uint64(1))
	f.Add([]byte{6, 13, 7, 0, 9, 1}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		fuzzToolParser(t, glm45Only, glmFuzzPieces, []string{"<tool_call>"}, recipe, seed)
	})
}

// FuzzQwen3XML runs the qwen3_xml tool parser (qwen3_coder's machine
// under vLLM's other name) by its own name.
func FuzzQwen3XML(f *testing.F) {
	f.Add([]byte{0, 2, 10, 3, 11, 6, 12, 13, 5, 3, 1}, uint64(1))
	f.Add([]byte{25, 8, 0, 2, 9, 4, 21, 6, 15, 5}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		fuzzToolParser(t, qxOnly, qcFuzzPieces, []string{"<tool_call>", "<function="}, recipe, seed)
	})
}

// fuzzTargets names, for every registered parser, the fuzz target that
// runs it and checks no panic, stream = batch and no marker as content.
var fuzzTargets = map[string]string{
	"tool:hermes": "FuzzParsers", "tool:qwen3_coder": "FuzzQwen3Coder", "tool:qwen3_xml": "FuzzQwen3XML",
	"tool:llama3_json": "FuzzLlama3JSON", "tool:llama4_pythonic": "FuzzPythonic", "tool:pythonic": "FuzzPythonic",
	"tool:mistral": "FuzzMistral", "tool:deepseek_v3": "FuzzDeepSeek", "tool:deepseek_v31": "FuzzDeepSeek",
	"tool:kimi_k2": "FuzzKimiK2", "tool:glm45": "FuzzGLM45", "tool:glm47": "FuzzGLM47", "tool:granite": "FuzzGraniteTool",
	"tool:granite4": "FuzzGranite4", "tool:internlm": "FuzzInternLM", "tool:jamba": "FuzzJamba",
	"tool:phi4_mini_json": "FuzzPhi4MiniJSON", "tool:minimax_m2": "FuzzMinimaxM2", "tool:xlam": "FuzzXLAM",
	"tool:hunyuan_a13b": "FuzzHunyuanA13B", "tool:seed_oss": "FuzzSeedOSS", "tool:step3": "FuzzStep3",
	"tool:openai": "FuzzHarmony",

	"reasoning:qwen3": "FuzzReasoningParsers", "reasoning:deepseek_r1": "FuzzReasoningParsers",
	"reasoning:deepseek_v3": "FuzzReasoningParsers", "reasoning:glm45": "FuzzReasoningParsers",
	"reasoning:kimi_k2": "FuzzReasoningParsers", "reasoning:granite": "FuzzReasoningParsers",
	"reasoning:mistral": "FuzzReasoningParsers", "reasoning:minimax_m2": "FuzzReasoningParsers",
	"reasoning:minimax_m2_append_think": "FuzzReasoningParsers", "reasoning:seed_oss": "FuzzReasoningParsers",
	"reasoning:step3": "FuzzReasoningParsers", "reasoning:hunyuan_a13b": "FuzzReasoningParsers",
	"reasoning:ernie45": "FuzzReasoningParsers", "reasoning:olmo3": "FuzzReasoningParsers",
	"reasoning:openai_gptoss": "FuzzReasoningParsers",
}

// TestEveryParserHasFuzzTarget fails when a parser is registered without
// a fuzz target, or a listed target does not exist.
func TestEveryParserHasFuzzTarget(t *testing.T) {
	var names []string
	for _, n := range ToolParsers() {
		names = append(names, "tool:"+n)
	}
	for _, n := range ReasoningParsers() {
		names = append(names, "reasoning:"+n)
	}
	defined := fuzzTargetsDefined(t)
	for _, n := range names {
		target, ok := fuzzTargets[n]
		if !ok {
			t.Errorf("%s has no fuzz target: add one and list it in fuzzTargets", n)
			continue
		}
		if !defined[target] {
			t.Errorf("%s: fuzz target %s is not defined in this package", n, target)
		}
	}
	// The reasoning target must actually run each reasoning parser.
	for _, n := range ReasoningParsers() {
		found := false
		for _, fc := range fuzzReasoningConfigs {
			found = found || fc.parser == n
		}
		if !found {
			t.Errorf("reasoning parser %s is not in fuzzReasoningConfigs", n)
		}
	}
}

// fuzzTargetsDefined lists the Fuzz functions of the package's test files.
func fuzzTargetsDefined(t *testing.T) map[string]bool {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(f \*testing\.F\)`)
	out := map[string]bool{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		b, err := os.ReadFile(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			out[string(m[1])] = true
		}
	}
	return out
}
