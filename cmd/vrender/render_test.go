package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

func TestRenderCommand(t *testing.T) {
	qwen := testenv.ModelDir(t, "qwen3")
	tmpl := filepath.Join(t.TempDir(), "t.jinja")
	if err := os.WriteFile(tmpl, []byte("{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}"), 0o644); err != nil {
		t.Fatal(err)
	}
	const chat = `{"messages":[{"role":"user","content":"What is 2+2?"}],"max_tokens":64}`
	vl := filepath.Join(testenv.SharedDir(t), "multimodal", "models", "qwen2_5_vl")
	// An 8x8 PNG: scaled up to min_pixels, 56x56, four image tokens on Qwen2.5-VL.
	pixel, err := os.ReadFile(filepath.Join(testenv.SharedDir(t), "multimodal", "images", "png_rgb_8x8.png"))
	if err != nil {
		t.Fatal(err)
	}
	imageChat := `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":"data:image/png;base64,` +
		base64.StdEncoding.EncodeToString(pixel) + `"}]}],"return_mm_kwargs":false}`
	// image_embeds of 6 rows with the grid [1, 4, 6] (tensorfile's goldens).
	tensorB64 := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "tensorfile", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	embedsChat := `{"messages":[{"role":"user","content":[{"type":"image_embeds","image_embeds":{"image_embeds":"` +
		tensorB64("embeds_6x8.npy") + `","image_grid_thw":"` + tensorB64("i64_grid.npy") + `"}}]}],"return_mm_kwargs":false}`
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string // exact unless re
		re     bool
		stderr string // substring
	}{
		{name: "generate request", stdin: chat, args: []string{"render", "--model", qwen}, re: true,
			stdout: `^\{"request_id":"chatcmpl-[0-9a-f]{32}","token_ids":\[151644,872,198,3838,374,220,17,10,17,30,151645,198,151644,77091,198\],` +
				`"token_offsets":null,"features":null,"content_parts":null,"sampling_params":\{"stop":\[\],"stop_token_ids":\[\],"max_tokens":64,` +
				`"output_kind":2,"skip_clone":true,"bad_words":\[\],"skip_reading_prefix_cache":false\},"model":null,.*"ec_transfer_params":null\}\n$`},
		{name: "text", stdin: chat, args: []string{"render", "--model", qwen, "--text"},
			stdout: "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n"},
		{name: "chat template file", stdin: chat, args: []string{"render", "--model", qwen, "--chat-template", tmpl, "--text"},
			stdout: "[user] What is 2+2?\n"},
		{name: "generation config override", stdin: chat, args: []string{"render", "--model", qwen, "--override-generation-config", `{"temperature":0.6,"top_k":20}`}, re: true,
			stdout: `"sampling_params":\{"temperature":0\.6,"top_k":20,"stop"`},
		{name: "completion", stdin: `{"prompt":["hello",[1,2]]}`, args: []string{"render", "--model", qwen, "--completion"}, code: 1,
			stderr: "stdin: 5 validation errors"},
		{name: "completions", stdin: `{"prompt":[[5],[1,2]],"max_tokens":4}`, args: []string{"render", "--model", qwen, "--completion"}, re: true,
			stdout: `^\[\{"request_id":"cmpl-[0-9a-f]{32}","token_ids":\[5\],.*\},\{"request_id":"cmpl-[0-9a-f]{32}","token_ids":\[1,2\],.*\}\]\n$`},
		{name: "refused request", stdin: `{"messages":[{"role":"user","content":"x"}],"use_beam_search":true}`, args: []string{"render", "--model", qwen}, code: 1,
			stderr: "vrender render: 400 BadRequestError: Beam search is not supported by the render endpoint"},
		{name: "invalid request fails before loading", stdin: `{}`, args: []string{"render", "--model", "/nonexistent"}, code: 1,
			stderr: "stdin: 1 validation error:"},
		{name: "text with completion", args: []string{"render", "--model", qwen, "--text", "--completion"}, code: 2,
			stderr: "--text renders chat requests"},
		{name: "auto tool choice needs a parser", args: []string{"render", "--model", qwen, "--enable-auto-tool-choice"}, code: 2,
			stderr: "Error: --enable-auto-tool-choice requires --tool-call-parser"},
		{name: "unknown tool parser", args: []string{"render", "--model", qwen, "--enable-auto-tool-choice", "--tool-call-parser", "nope"}, code: 2,
			stderr: "invalid tool call parser: nope (chose from { deepseek_v3,"},
		{name: "unknown tool parser without auto tool choice", args: []string{"render", "--model", qwen, "--tool-call-parser", "nope"}, code: 2,
			stderr: "invalid tool call parser: nope (chose from { deepseek_v3,"},
		{name: "unknown reasoning parser", args: []string{"render", "--model", qwen, "--reasoning-parser", "nope"}, code: 2,
			stderr: "invalid reasoning parser: nope (chose from {"},
		{name: "bad kwargs", args: []string{"render", "--model", qwen, "--default-chat-template-kwargs", "[1]"}, code: 2,
			stderr: `--default-chat-template-kwargs must be a JSON object, got "[1]"`},
		{name: "bad content format", args: []string{"render", "--model", qwen, "--chat-template-content-format", "xml"}, code: 2,
			stderr: "--chat-template-content-format must be auto, string or openai"},
		{name: "help", args: []string{"help", "render"}, stdout: "Usage: vrender render --model MODEL", re: true},
		{name: "image limit", stdin: imageChat, args: []string{"render", "--model", vl, "--limit-mm-per-prompt", "image=0"}, code: 1,
			stderr: "vrender render: 400 BadRequestError: At most 0 image(s) may be provided in one prompt."},
		{name: "image limit JSON", stdin: imageChat, args: []string{"render", "--model", vl, "--limit-mm-per-prompt", `{"image":1}`}, re: true,
			stdout: `"token_ids":\[151644,8948,198,2610,525,264,10950,17847,13,151645,198,151644,872,198,151652,151655,151655,151655,151655,151653,151645,198,151644,77091,198\],` +
				`"token_offsets":null,"features":\{"mm_hashes":\{"image":\["[0-9a-f]{64}"\]\},"mm_placeholders":\{"image":\[\{"offset":15,"length":4\}\]\},"kwargs_data":null`},
		{name: "image_embeds without --enable-mm-embeds", stdin: embedsChat, args: []string{"render", "--model", vl}, code: 1,
			stderr: "vrender render: 400 BadRequestError: You must set `--enable-mm-embeds` to input `image_embeds`"},
		{name: "image_embeds", stdin: embedsChat, args: []string{"render", "--model", vl, "--enable-mm-embeds"}, re: true,
			stdout: `"features":\{"mm_hashes":\{"image":\["[0-9a-f]{64}"\]\},"mm_placeholders":\{"image":\[\{"offset":15,"length":6\}\]\},"kwargs_data":null`},
		{name: "image fetch refused", stdin: `{"messages":[{"role":"user","content":[{"image_url":"http://127.0.0.1:9/a.png"}]}]}`,
			args: []string{"render", "--model", vl}, code: 1,
			stderr: "vrender render: 400 BadRequestError: The URL must not lead to a loopback"},
		{name: "image domains", stdin: `{"messages":[{"role":"user","content":[{"image_url":"http://example.com/a.png"}]}]}`,
			args: []string{"render", "--model", vl, "--allowed-media-domains", "a.test, b.test"}, code: 1,
			stderr: "The URL must be from one of the allowed domains"},
		{name: "bad mm processor kwargs", stdin: chat, args: []string{"render", "--model", vl, "--mm-processor-kwargs", `{"max_pixels":"x"}`}, code: 2,
			stderr: "--mm-processor-kwargs:"},
		{name: "media io kwargs not JSON", stdin: chat, args: []string{"render", "--model", vl, "--media-io-kwargs", `{image`}, code: 2,
			stderr: `--media-io-kwargs must be a JSON object, got "{image"`},
		{name: "media io kwargs background", stdin: chat, args: []string{"render", "--model", vl, "--media-io-kwargs", `{"image":{"rgba_background_color":[0,0]}}`}, code: 2,
			stderr: "--media-io-kwargs: rgba_background_color must be a list or tuple of 3 integers in the range [0, 255]."},
		{name: "media io kwargs background on an image", stdin: imageChat, args: []string{"render", "--model", vl, "--media-io-kwargs", `{"image":{"rgba_background_color":[0,0,0]},"video":{}}`}, re: true,
			stdout: `"mm_placeholders":\{"image":\[\{"offset":15,"length":4\}\]\}`},
		{name: "serve validates render flags", args: []string{"serve", qwen, "--reasoning-parser", "nope"}, code: 2,
			stderr: "invalid reasoning parser: nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.stdin, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.code, stderr)
			}
			if tt.re {
				if !regexp.MustCompile(tt.stdout).MatchString(stdout) {
					t.Errorf("stdout %q does not match %q", stdout, tt.stdout)
				}
			} else if stdout != tt.stdout {
				t.Errorf("stdout %q, want %q", stdout, tt.stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q, want it to contain %q", stderr, tt.stderr)
			}
		})
	}
}

// The default (no --generation-config) reads the model's
// generation_config.json, and --generation-config vllm ignores it.
func TestRenderCommandGenerationConfig(t *testing.T) {
	src := testenv.ModelDir(t, "qwen3")
	dir := t.TempDir()
	for _, f := range []string{"tokenizer.json", "tokenizer_config.json", "config.json"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "generation_config.json"), []byte(`{"temperature":0.7,"top_p":0.8,"eos_token_id":[151645,151643]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	const chat = `{"messages":[{"role":"user","content":"hi"}],"max_tokens":8}`
	for _, tt := range []struct {
		flags []string
		want  string
	}{
		{nil, `{"temperature":0.7,"top_p":0.8,"stop":[],"stop_token_ids":[],"max_tokens":8,"output_kind":2,"skip_clone":true,"bad_words":[],"skip_reading_prefix_cache":false}`},
		{[]string{"--generation-config", "vllm"}, `{"stop":[],"stop_token_ids":[],"max_tokens":8,"output_kind":2,"skip_clone":true,"bad_words":[],"skip_reading_prefix_cache":false}`},
	} {
		code, stdout, stderr := runCLI(t, chat, append([]string{"render", "--model", dir}, tt.flags...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.flags, code, stderr)
		}
		var out struct {
			SamplingParams json.RawMessage `json:"sampling_params"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		if string(out.SamplingParams) != tt.want {
			t.Errorf("%v: sampling_params %s\nwant %s", tt.flags, out.SamplingParams, tt.want)
		}
	}
}
