package enginesim

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/testmodel"
)

// generateText posts a non-streaming request for the prompt text and
// returns the decoded output (special tokens kept) of each choice.
func generateText(t *testing.T, url, prompt, extra string) []string {
	t.Helper()
	body := `{"token_ids":` + promptJSON(t, prompt) + `,"sampling_params":{"max_tokens":2000` + extra + `}`
	if i := strings.Index(extra, "|"); i >= 0 { // "sampling|request" members
		body = `{"token_ids":` + promptJSON(t, prompt) + `,"sampling_params":{"max_tokens":2000` + extra[:i] + `}` + extra[i+1:]
	}
	status, _, out := post(t, url, body+"}")
	if status != 200 {
		t.Fatalf("status %d: %s", status, out)
	}
	var resp struct {
		Choices []struct {
			TokenIDs []int `json:"token_ids"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range resp.Choices {
		texts = append(texts, testmodel.Load(t, "qwen3").Tokenizer.Decode(c.TokenIDs, false))
	}
	return texts
}

const weatherTool = `{"type": "function", "function": {"name": "get_weather", "description": "Get the weather", ` +
	`"parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["fahrenheit", "celsius"]}, ` +
	`"days": {"type": "integer", "minimum": 3}}, "required": ["city"]}}}`

func toolsPrompt(user string) string {
	return "<|im_start|>system\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
		"You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" + weatherTool +
		"\n{\"type\": \"function\", \"function\": {\"name\": \"other\", \"parameters\": {}}}\n</tools>\n\n" +
		"For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags.<|im_end|>\n" +
		user + "<|im_start|>assistant\n"
}

func TestDefaultAnswers(t *testing.T) {
	_, srv := newServer(t, Config{})
	url := srv.URL + "/inference/v1/generate"
	think := "<think>\n" + thinkText + "</think>\n\n"
	tests := []struct {
		name   string
		prompt string
		extra  string
		want   string // exact decoded output; "" means a prefix check of wantPrefix
		prefix string
	}{
		{name: "reasoning then answer", prompt: "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
			prefix: think},
		{name: "thinking disabled", prompt: "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
			want: answerTexts[0] + "<|im_end|>"},
		{name: "hermes tool call for the first tool", prompt: toolsPrompt("<|im_start|>user\nWeather in Paris?<|im_end|>\n"),
			want: think + "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"fahrenheit\", \"days\": 3}}\n</tool_call><|im_end|>"},
		{name: "answer after the tool result", prompt: toolsPrompt("<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{}\n</tool_call><|im_end|>\n" +
			"<|im_start|>user\n<tool_response>\nsunny\n</tool_response><|im_end|>\n"),
			want: think + afterToolText + "<|im_end|>"},
		{name: "reasoning_ended skips the think block", prompt: "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
			extra: `,"seed":7|,"reasoning_ended":true`, prefix: "This is", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := generateText(t, url, tc.prompt, tc.extra)[0]
			switch {
			case tc.want != "" && got != tc.want && tc.name != "thinking disabled":
				t.Fatalf("output\n got %q\nwant %q", got, tc.want)
			case tc.name == "thinking disabled" && (strings.Contains(got, "<think>") || !strings.HasSuffix(got, "<|im_end|>")):
				t.Fatalf("output %q", got)
			case tc.prefix != "" && tc.name != "reasoning_ended skips the think block" && !strings.HasPrefix(got, tc.prefix):
				t.Fatalf("output %q lacks prefix %q", got, tc.prefix)
			case tc.name == "reasoning_ended skips the think block" && strings.Contains(got, "<think>"):
				t.Fatalf("output %q has a think block", got)
			}
		})
	}
}

func TestSeedDeterminism(t *testing.T) {
	_, srv := newServer(t, Config{})
	url := srv.URL + "/inference/v1/generate"
	prompt := "<|im_start|>user\nTell me something<|im_end|>\n<|im_start|>assistant\n"
	a := generateText(t, url, prompt, `,"n":3,"seed":42`)
	b := generateText(t, url, prompt, `,"n":3,"seed":42`)
	if strings.Join(a, "\x00") != strings.Join(b, "\x00") {
		t.Fatalf("same seed, different outputs:\n%q\n%q", a, b)
	}
	differs := false
	for seed := range 8 {
		c := generateText(t, url, prompt, `,"n":3,"seed":`+string(rune('0'+seed)))
		differs = differs || strings.Join(c, "\x00") != strings.Join(a, "\x00")
	}
	if !differs {
		t.Fatal("eight seeds all gave seed 42's outputs")
	}
}

// TestStructuredOutputsSatisfySchema checks the JSON the sim emits under
// structured_outputs against the schema with Python's jsonschema.
func TestStructuredOutputsSatisfySchema(t *testing.T) {
	py := testenv.Python3(t)
	if err := exec.Command(py, "-c", "import jsonschema").Run(); err != nil {
		if testenv.InCI() {
			t.Fatalf("python jsonschema is required under CI: %v", err)
		}
		t.Skipf("SKIP: python3 module jsonschema is not installed (%v); structured outputs are not checked", err)
	}
	params := `{"type": "object", "properties": {"city": {"type": "string", "minLength": 2}, "unit": {"enum": ["c", "f"]}, ` +
		`"days": {"type": "integer", "minimum": 1, "maximum": 1}, "when": {"type": "string", "format": "date"}}, "required": ["city", "unit"], "additionalProperties": false}`
	schemas := []string{
		// tool_choice "required", as vLLM builds it.
		`{"type": "array", "minItems": 1, "items": {"type": "object", "anyOf": [{"properties": {"name": {"type": "string", "enum": ["get_weather"]}, ` +
			`"parameters": ` + params + `}, "required": ["name", "parameters"]}, {"properties": {"name": {"type": "string", "enum": ["other"]}, ` +
			`"parameters": {"type": "object", "properties": {}}}, "required": ["name", "parameters"]}]}}`,
		// tool_choice named: the parameters object.
		params,
		// response_format json_schema with $defs, arrays and nullable members.
		`{"$defs": {"Step": {"type": "object", "properties": {"n": {"type": "number", "exclusiveMinimum": 2}, "ok": {"type": "boolean"}}, "required": ["n", "ok"]}}, ` +
			`"type": "object", "properties": {"steps": {"type": "array", "items": {"$ref": "#/$defs/Step"}, "minItems": 2, "maxItems": 3}, ` +
			`"note": {"anyOf": [{"type": "null"}, {"type": "string", "maxLength": 3}]}, "tags": {"type": ["array", "null"], "items": {"const": "x"}}}, ` +
			`"required": ["steps", "note", "tags"]}`,
		`{"type": "object", "allOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]}, {"properties": {"b": {"type": "string", "format": "email"}}, "required": ["b"]}]}`,
	}
	_, srv := newServer(t, Config{})
	url := srv.URL + "/inference/v1/generate"
	var pairs []string
	for i, schema := range schemas {
		quoted, _ := json.Marshal(schema) // vLLM sends json as a string or an object: test both
		so := string(quoted)
		if i%2 == 1 {
			so = schema
		}
		out := generateText(t, url, "<|im_start|>user\nJSON please<|im_end|>\n<|im_start|>assistant\n",
			`,"structured_outputs":{"json":`+so+`}|,"reasoning_ended":true`)[0]
		instance, ok := strings.CutSuffix(out, "<|im_end|>")
		if !ok || !json.Valid([]byte(instance)) {
			t.Fatalf("schema %d: output %q is not JSON followed by EOS", i, out)
		}
		pairs = append(pairs, "["+schema+", "+instance+"]")
	}
	script := "import json, sys, jsonschema\nfor i, (s, v) in enumerate(json.load(sys.stdin)):\n" +
		"    jsonschema.validate(v, s, format_checker=jsonschema.FormatChecker())\n    print(i, json.dumps(v))\n"
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = strings.NewReader("[" + strings.Join(pairs, ",") + "]")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("jsonschema rejected an output: %v\n%s", err, out)
	}
	t.Logf("validated:\n%s", out)

	// The reasoning block comes first when reasoning has not ended.
	got := generateText(t, url, "<|im_start|>user\nJSON please<|im_end|>\n<|im_start|>assistant\n", `,"structured_outputs":{"choice":["yes","no"]}`)[0]
	if !strings.HasPrefix(got, "<think>\n") || !(strings.HasSuffix(got, "</think>\n\nyes<|im_end|>") || strings.HasSuffix(got, "</think>\n\nno<|im_end|>")) {
		t.Fatalf("choice output %q", got)
	}
}
