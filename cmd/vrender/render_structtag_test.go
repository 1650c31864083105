package main

import (
	"encoding/json"
	"testing"

	"github.com/vrender/vrender/internal/structtaggolden"
	"github.com/vrender/vrender/internal/testenv"
)

// TestRenderStructuralTags runs `vrender render` (the /v1/chat/completions/
// render path) for the golden structural-tag cases of every registered
// tool parser: sampling_params.structured_outputs.structural_tag must be
// the exact string vLLM's builders produce, and response_format's
// constraint must be gone.
func TestRenderStructuralTags(t *testing.T) {
	qwen := testenv.ModelDir(t, "qwen3")
	golden, err := structtaggolden.Load()
	if err != nil {
		t.Fatal(err)
	}
	parserFor := map[string]string{"hermes": "hermes", "llama": "llama3_json", "kimi": "kimi_k2",
		"deepseek_r1": "deepseek_v3", "deepseek_v3_1": "deepseek_v31", "glm_4_7": "glm47",
		"qwen_3_coder": "qwen3_coder", "minimax": "minimax_m2"}
	for _, c := range golden.Cases {
		parser, ok := parserFor[c.Model]
		if !ok {
			continue // deepseek_v32 / deepseek_v4: tool parsers vrender does not register
		}
		body, _ := json.Marshal(map[string]any{
			"messages":        []map[string]string{{"role": "user", "content": "hi"}},
			"tools":           golden.Tools[c.Tools],
			"tool_choice":     c.ToolChoice,
			"response_format": map[string]string{"type": "json_object"},
			"max_tokens":      16,
		})
		code, stdout, stderr := runCLI(t, string(body), "render", "--model", qwen,
			"--enable-auto-tool-choice", "--tool-call-parser", parser)
		if code != 0 {
			t.Fatalf("%s %s %s: exit %d: %s", parser, c.Tools, c.ToolChoice, code, stderr)
		}
		var out struct {
			SamplingParams struct {
				StructuredOutputs *struct {
					StructuralTag *string `json:"structural_tag"`
					JSONObject    *bool   `json:"json_object"`
				} `json:"structured_outputs"`
			} `json:"sampling_params"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("%s: %v", stdout, err)
		}
		so := out.SamplingParams.StructuredOutputs
		if c.StructuralTag == nil {
			// auto without a strict tool: response_format stays.
			if so == nil || so.StructuralTag != nil || so.JSONObject == nil {
				t.Errorf("%s %s %s: structured_outputs %+v, want json_object only", parser, c.Tools, c.ToolChoice, so)
			}
			continue
		}
		if so == nil || so.StructuralTag == nil || *so.StructuralTag != *c.StructuralTag || so.JSONObject != nil {
			t.Errorf("%s %s %s: structured_outputs %s", parser, c.Tools, c.ToolChoice, stdout)
		}
	}
}

// TestRenderLegacyToolChoice: VLLM_ENFORCE_STRICT_TOOL_CALLING=0 puts the
// JSON-schema path back for a parser with a structural tag.
func TestRenderLegacyToolChoice(t *testing.T) {
	qwen := testenv.ModelDir(t, "qwen3")
	t.Setenv("VLLM_ENFORCE_STRICT_TOOL_CALLING", "0")
	body := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":16,"tool_choice":"required",` +
		`"tools":[{"type":"function","function":{"name":"a","parameters":{"type":"object","properties":{"x":{"type":"string"}}}}}]}`
	code, stdout, stderr := runCLI(t, body, "render", "--model", qwen, "--enable-auto-tool-choice", "--tool-call-parser", "hermes")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out struct {
		SamplingParams struct {
			StructuredOutputs struct {
				JSON          json.RawMessage `json:"json"`
				StructuralTag *string         `json:"structural_tag"`
			} `json:"structured_outputs"`
		} `json:"sampling_params"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	so := out.SamplingParams.StructuredOutputs
	if so.StructuralTag != nil || len(so.JSON) == 0 || string(so.JSON) == "null" {
		t.Errorf("structured_outputs %s", stdout)
	}
}
