package bench

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/benchdata"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

func TestFirstDiff(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "abc", 3},
		{"abc", "abd", 2},
		{"ab", "abc", 2},
		{"xbc", "abc", 0},
	}
	for _, tc := range cases {
		if got := firstDiff([]byte(tc.a), []byte(tc.b)); got != tc.want {
			t.Errorf("firstDiff(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestCompareRender(t *testing.T) {
	timing := func(min, median float64) Timing { return Timing{Iterations: 3, MinNs: min, MedianNs: median} }
	cases := []struct {
		name                  string
		text, refText         string
		ids, refIDs           []int
		promptEqual, idsEqual bool
		firstDiffByte         int
		firstDiff             int
	}{
		{"identical", "<|im_start|>user\nhi", "<|im_start|>user\nhi", []int{1, 2, 3}, []int{1, 2, 3}, true, true, 0, 0},
		{"prompt differs", "<|im_start|>user\nhi", "<|im_start|>user\nho", []int{1, 2, 3}, []int{1, 2, 4}, false, false, 18, 2},
		{"ids differ", "same", "same", []int{1, 2}, []int{1, 2, 3}, true, false, 0, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := RenderResult{Render: timing(100_000, 200_000)}
			p := &render.ChatPrompt{Text: tc.text, TokenIDs: tc.ids}
			py := renderedByPython{Prompt: tc.refText, Render: timing(1e6, 2e6)}
			tok := referenceFile{IDs: tc.refIDs, Encode: timing(2e6, 3e6)}
			compareRender(&res, p, py, tok)
			if res.PromptEqual != tc.promptEqual || res.IDsEqual != tc.idsEqual ||
				res.FirstDiffByte != tc.firstDiffByte || res.FirstDiff != tc.firstDiff || res.RefTokens != len(tc.refIDs) {
				t.Errorf("got %+v", res)
			}
			// Reference: 2 ms + 3 ms median, 1 ms + 2 ms fastest; vrender 0.2 ms and 0.1 ms.
			if res.Ratio != 25 || res.RatioMin != 30 || res.ReqPerSec != 5000 || res.RefReqPerSec != 200 {
				t.Errorf("ratio %v, best/best %v, req/s %v, reference req/s %v; want 25, 30, 5000, 200",
					res.Ratio, res.RatioMin, res.ReqPerSec, res.RefReqPerSec)
			}
		})
	}
}

func TestRenderWriteTable(t *testing.T) {
	r := &RenderReport{
		Model: "m", ReferencePin: "taskset -c 0, RAYON_NUM_THREADS=1", Python: "3.11.7", Jinja2: "3.1.6", ContentFormat: "string",
		Requests: []RenderResult{
			{Name: "1k", Messages: 10, PromptBytes: 4574, Tokens: 1056, RefTokens: 1056, PromptEqual: true, IDsEqual: true,
				Render: Timing{Iterations: 2000, MedianNs: 212_766}, Tokenize: Timing{MedianNs: 106_383}, RefTemplate: Timing{Iterations: 20, MedianNs: 600_000}, RefTokenize: Timing{Iterations: 20, MedianNs: 3_500_000},
				ReqPerSec: 4700, RefReqPerSec: 243.9, Ratio: 19.3, RatioMin: 22.3, AllocsPerRender: 736, BytesPerRender: 62_000},
			{Name: "9k", Messages: 80, Tokens: 8868, RefTokens: 8869, PromptEqual: true, FirstDiff: 8868, Ratio: 25},
			{Name: "bad", FirstDiffByte: 17},
		},
	}
	var out bytes.Buffer
	if err := r.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"runs: vrender/template/tokenize", "Python 3.11.7, Jinja2 3.1.6", "content format string",
		"1k         10     4574    1056        2000/20/20         4700.0        0.600        3.500          243.9    19.3x      22.3x           736      60.5 KiB ≥20x MISSED",
		"25.0x", "≥20x met",
		"1k: prompt text and token ids identical",
		"1k: vrender 0.213 ms per render, of which tokenizing 0.106 ms (50%)",
		"9k: prompt identical, IDS DIFFER from the reference at token 8868 (vrender 8868 tokens, reference 8869)",
		"bad: PROMPT DIFFERS from the reference at byte 17",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

// TestRenderSizes checks the standard conversations have the sizes the
// issue asks for with the Qwen3 template and tokenizer.
func TestRenderSizes(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	r, err := render.New(m, render.Config{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ messages, minTokens, maxTokens int }{
		"1k": {10, 900, 1200},
		"9k": {80, 8500, 9500},
	}
	for _, s := range benchdata.Sizes {
		q := benchdata.Conversation(s)
		msgs, err := protocol.ParseMessages(q.Messages)
		if err != nil {
			t.Fatal(err)
		}
		tools, err := decodeTools(q.Tools)
		if err != nil {
			t.Fatal(err)
		}
		p, err := r.RenderChat(context.Background(), render.ChatInput{Messages: msgs, Tools: tools, AddGenerationPrompt: true})
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		w := want[s.Name]
		if len(q.Messages) != w.messages || len(p.TokenIDs) < w.minTokens || len(p.TokenIDs) > w.maxTokens {
			t.Errorf("%s: %d messages, %d tokens; want %d messages, %d..%d tokens",
				s.Name, len(q.Messages), len(p.TokenIDs), w.messages, w.minTokens, w.maxTokens)
		}
		for _, part := range []string{"<tools>", "<tool_call>", "<tool_response>", "天气", "<|im_start|>assistant\n"} {
			if s.Name == "9k" && !strings.Contains(p.Text, part) {
				t.Errorf("%s: prompt lacks %q", s.Name, part)
			}
		}
	}
}

// TestRenderAgainstReference runs the whole comparison once on a small
// conversation: both sides must agree, every figure must be filled in, and
// MinTime must add runs to all three timings.
func TestRenderAgainstReference(t *testing.T) {
	root := testenv.RepoRoot(t)
	report, err := Render(context.Background(), RenderOptions{
		ModelDir:   testenv.ModelDir(t, "qwen3"),
		Sizes:      []benchdata.Size{{Name: "small", Messages: 9, Words: 12}},
		Iterations: 2,
		MinTime:    100 * time.Millisecond,
		Renderer:   RenderReference{Python: testenv.Python3(t), Script: filepath.Join(root, "tools", "refrender", "bench.py")},
		Tokenizer: Reference{Node: testenv.Node(t), NodeModules: testenv.RefNodeModules(t),
			Script: filepath.Join(root, "tools", "reftok", "bench.js")},
	})
	if err != nil {
		t.Fatal(err)
	}
	q := report.Requests[0]
	if !q.PromptEqual || !q.IDsEqual || q.Tokens == 0 || q.Tokens != q.RefTokens || q.Messages != 9 {
		t.Errorf("sides disagree: %+v", q)
	}
	// A render of this request takes a few milliseconds at most, so 100 ms
	// are more than the two runs asked for on each side.
	if q.Render.Iterations <= 2 || q.RefTemplate.Iterations <= 2 || q.RefTokenize.Iterations <= 2 {
		t.Errorf("runs: vrender %d, reference %d + %d; want more than 2 each", q.Render.Iterations, q.RefTemplate.Iterations, q.RefTokenize.Iterations)
	}
	if q.Ratio <= 0 || q.RatioMin <= 0 || q.ReqPerSec <= 0 || q.RefReqPerSec <= 0 || q.AllocsPerRender <= 0 || q.BytesPerRender <= 0 ||
		q.Tokenize.MedianNs <= 0 ||
		report.RefFirstNs <= 0 || report.Jinja2 == "" || report.ContentFormat == "" {
		t.Errorf("missing figures: %+v", report)
	}
	var out bytes.Buffer
	if err := report.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
}
