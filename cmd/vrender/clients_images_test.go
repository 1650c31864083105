package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/vrender/vrender/internal/testenv"
)

// TestSDKsSendPicture: the official clients send a picture through one
// `vrender serve --engine sim` over Qwen2.5-VL, created and streamed: openai-go
// and the openai Node SDK to /v1/chat/completions (an image_url part), the
// openai Node SDK to /v1/responses (an input_image part) and the Anthropic
// TypeScript SDK to /v1/messages (a base64 image block). engine-sim answers
// with what its features member carried, so every answer must name the
// picture's size after Qwen's resize and the mm_hash the render route
// computes for the same picture: the image went through each front end
// whole and arrived as render made it.
func TestSDKsSendPicture(t *testing.T) {
	mm := filepath.Join(testenv.SharedDir(t), "multimodal")
	img, err := os.ReadFile(filepath.Join(mm, "images", "png_rgb_56x30.png"))
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(img)
	url := "data:image/png;base64," + b64
	// The reasoning parser keeps engine-sim's <think> block (the stand-in
	// tokenizer is Qwen3's) out of the text the clients compare.
	addr, _, _ := startServe(t, "--engine", "sim", "--host", "127.0.0.1", "--port", "0", "--served-model-name", "qwen-vl",
		"--reasoning-parser", "qwen3", filepath.Join(mm, "models", "qwen2_5_vl"))
	base := "http://" + addr
	const question = "What is in this picture?"

	// 56x30 is scaled up to min_pixels: 84x56, grid 1x4x6 (the image_grid_thw
	// of ../shared/multimodal/golden/render_requests.jsonl for this picture);
	// the qwen3 parser keeps the blank line after </think> in the content.
	hash := renderedImageHash(t, base, question, url)
	want := "\n\nI see 1 image: 84x56 (grid 1x4x6), mm_hash " + hash[:12] + "…. "
	check := func(t *testing.T, answer string) {
		t.Helper()
		if !strings.HasPrefix(answer, want) {
			t.Errorf("answer %q\nwant it to begin with %q", answer, want)
		}
	}

	t.Run("openai-go chat", func(t *testing.T) {
		c := goClient(base + "/v1")
		p := openai.ChatCompletionNewParams{Model: "qwen-vl", Messages: []openai.ChatCompletionMessageParamUnion{
			openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
				openai.TextContentPart(question),
				openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url}),
			})}}
		ctx := context.Background()
		res, err := c.Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		check(t, res.Choices[0].Message.Content)
		s := streamChat(ctx, c, p)
		if s.err != nil {
			t.Fatal(s.err)
		}
		check(t, s.acc.Choices[0].Message.Content)
	})

	t.Run("openai-node chat and responses", func(t *testing.T) {
		chat := map[string]any{"model": "qwen-vl", "messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": question},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": url}},
		}}}}
		resp := map[string]any{"model": "qwen-vl", "input": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "input_text", "text": question},
			map[string]any{"type": "input_image", "image_url": url, "detail": "auto"},
		}}}}
		v1 := base + "/v1"
		res := runNode(t, []nodeCall{{Op: "chat", BaseURL: v1, Params: chat}, {Op: "chat_stream", BaseURL: v1, Params: chat},
			{Op: "responses", BaseURL: v1, Params: resp}, {Op: "responses_stream", BaseURL: v1, Params: resp}})
		for i, r := range res {
			if r.Error != nil {
				t.Fatalf("call %d: %+v", i, *r.Error)
			}
		}
		check(t, chatOf(t, res[0]).Content)
		check(t, chatOf(t, res[1]).Content)
		for _, r := range res[2:] {
			var got respResponse
			if err := json.Unmarshal(r.Result, &got); err != nil {
				t.Fatal(err)
			}
			check(t, got.OutputText)
		}
	})

	t.Run("anthropic messages", func(t *testing.T) {
		params := map[string]any{"model": "qwen-vl", "max_tokens": 300, "messages": []any{map[string]any{"role": "user",
			"content": []any{
				map[string]any{"type": "text", "text": question},
				map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": b64}},
			}}}}
		res := runAnthropic(t, []anthropicCall{{"create", base, params}, {"stream", base, params}})
		for i, r := range res {
			if r.Error != nil || r.Message == nil {
				t.Fatalf("call %d: %+v", i, r.Error)
			}
			text := ""
			for _, b := range r.Message.Content {
				if b.Type == "text" {
					text += b.Text
				}
			}
			check(t, text)
		}
		check(t, res[1].Text)
	})
}

// renderedImageHash is the mm_hash /v1/chat/completions/render gives the
// picture at url asked about with question.
func renderedImageHash(t *testing.T, base, question, url string) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{"model": "qwen-vl", "messages": []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": question},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": url}},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(base+"/v1/chat/completions/render", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Features struct {
			Hashes struct {
				Image []string `json:"image"`
			} `json:"mm_hashes"`
		} `json:"features"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("render: status %d, %v", resp.StatusCode, err)
	}
	if h := out.Features.Hashes.Image; len(h) != 1 || len(h[0]) != 64 {
		t.Fatalf("render's mm_hashes %q, want one 64-digit hash", h)
	}
	return out.Features.Hashes.Image[0]
}
