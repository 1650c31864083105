package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/testmodel"
	vparity "github.com/vrender/vrender/parity"
	"github.com/vrender/vrender/parity/standin"
)

// gptossParityCases are gpt-oss cases for the stand-in vLLM, built from
// openai/harmony's data (ec7606d): the prompt ids are what its tests expect
// (the golden text encoded with special tokens allowed, as src/tests.rs
// builds its expectations, with the "Current date" line vLLM adds), the
// output ids tiktoken's o200k_harmony ids of test_streamable_parser and
// test_simple_tool_call, the answers vLLM's HarmonyParser gives for them.
// /tokenize's chat form renders the (absent) chat template in vLLM.
func gptossParityCases(t *testing.T) []standin.Case {
	t.Helper()
	tok := testmodel.Tokenizer(t, "gptoss")
	functions, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "render", "harmony", "testdata", "test_render_functions_with_parameters.txt"))
	if err != nil {
		t.Fatal(err)
	}
	request, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "render", "harmony", "testdata", "vllm_functions_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	simple, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "render", "harmony", "testdata", "test_simple_convo.txt"))
	if err != nil {
		t.Fatal(err)
	}
	simpleVLLM := strings.Replace(string(simple), "Knowledge cutoff: 2024-06\n", "Knowledge cutoff: 2024-06\nCurrent date: 2025-06-28\n", 1)
	const noTemplate = "As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one."
	str := func(s string) *string { return &s }
	idx := func(i int) *int { return &i }
	toolIDs := []int{200005, 35644, 200008, 1844, 31064, 25, 392, 4827, 382, 290, 11122, 306, 40510, 16842,
		1416, 1309, 316, 1199, 37342, 170154, 4584, 13, 200007, 200006, 173781, 200005, 35644, 316,
		28, 29712, 170154, 3490, 200008, 10848, 7693, 1243, 392, 173844, 18583, 200012}
	finalIDs := []int{200005, 35644, 200008, 1844, 31064, 25, 392, 4827, 382, 220, 17, 659, 220, 17, 16842, 12295, 81645, 13,
		51441, 6052, 13, 200007, 200006, 173781, 200005, 17196, 200008, 17, 659, 220, 17, 314, 220, 19, 13, 200002}
	toolReasoning := `User asks: "What is the weather in Tokyo?" We need to use lookup_weather tool.`
	finalReasoning := `User asks: "What is 2 + 2?" Simple arithmetic. Provide answer.`
	delta := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return []standin.Case{
		{ID: "gptoss_functions_tool_call",
			ChatRequest:    json.RawMessage(request),
			PromptTokenIDs: tok.Encode(string(functions), false),
			OutputTokenIDs: toolIDs, FinishReasonEngine: "stop", TokenizeError: noTemplate,
			Expect: standin.Expect{Reasoning: str(toolReasoning), FinishReason: "tool_calls",
				ToolCalls: []standin.ToolCall{{Name: "lookup_weather", Arguments: `{"location": "Tokyo"}`}}},
			VLLMStreamDeltas: []standin.StreamDelta{
				{TokenIndex: idx(3), Delta: delta(map[string]any{"reasoning": toolReasoning})},
				{TokenIndex: idx(len(toolIDs) - 1), Delta: delta(map[string]any{"tool_calls": []any{map[string]any{
					"index": 0, "id": "chatcmpl-tool-standin", "type": "function",
					"function": map[string]any{"name": "lookup_weather", "arguments": `{"location": "Tokyo"}`}}}})},
			}},
		{ID: "gptoss_simple_convo_final",
			ChatRequest:    json.RawMessage(`{"messages":[{"role":"user","content":"What is 2 + 2?"}]}`),
			PromptTokenIDs: tok.Encode(simpleVLLM, false),
			OutputTokenIDs: finalIDs, FinishReasonEngine: "stop", TokenizeError: noTemplate,
			Expect: standin.Expect{Reasoning: str(finalReasoning), Content: str("2 + 2 = 4."), FinishReason: "stop"},
			VLLMStreamDeltas: []standin.StreamDelta{
				{TokenIndex: idx(3), Delta: delta(map[string]any{"reasoning": finalReasoning})},
				{TokenIndex: idx(27), Delta: delta(map[string]any{"content": "2 + 2 = 4."})},
			}},
	}
}

// gptossParity runs `vrender parity` on the gpt-oss model against a
// stand-in serving cases, as vLLM's gpt-oss recipe starts the server.
func gptossParity(t *testing.T, cases []standin.Case) (int, string, *vparity.Report) {
	t.Helper()
	t.Setenv("VLLM_SYSTEM_START_DATE", "2025-06-28")
	srv := httptest.NewServer(standin.New(cases, standin.Options{}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	var lines []string
	for _, c := range cases {
		b, err := json.Marshal(map[string]any{"id": c.ID, "chat_request": c.ChatRequest})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	reqs, report := filepath.Join(dir, "gptoss.jsonl"), filepath.Join(dir, "report.json")
	if err := os.WriteFile(reqs, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "", "parity", "--vllm", srv.URL, "--model", testenv.ModelDir(t, "gptoss"),
		"--requests", reqs, "--report", report, "--tool-call-parser", "openai", "--enable-auto-tool-choice")
	if code != exitOK && code != 1 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	return code, stdout, readParityReport(t, report)
}

// TestParityGptOss: every check passes on gpt-oss (render through Harmony,
// /tokenize refused by both, the Harmony parser on vLLM's output ids
// batch and chunk by chunk), and a wrong prompt id is caught.
func TestParityGptOss(t *testing.T) {
	cases := gptossParityCases(t)
	code, stdout, rep := gptossParity(t, cases)
	if code != exitOK || !strings.Contains(stdout, "PASS: no unexplained difference") {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	for _, s := range rep.Summary {
		t.Logf("%s: %+v", s.Check, s)
		if s.Fail != 0 || s.Skipped != 0 || s.Pass+s.Known != len(cases) {
			t.Errorf("%s: %+v", s.Check, s)
		}
	}
	cases[0].PromptTokenIDs[5]++
	if code, stdout, _ := gptossParity(t, cases); code != 1 || !strings.Contains(stdout, "gptoss_functions_tool_call") {
		t.Errorf("tampered prompt: exit %d\n%s", code, stdout)
	}
}
