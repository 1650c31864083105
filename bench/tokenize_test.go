package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

func TestSummarize(t *testing.T) {
	cases := []struct {
		in          []float64
		min, median float64
	}{
		{[]float64{5}, 5, 5},
		{[]float64{3, 1, 2}, 1, 2},
		{[]float64{4, 1, 3, 2}, 1, 2.5},
		{[]float64{10, 10, 1, 10, 10}, 1, 10},
	}
	for _, tc := range cases {
		got := summarize(tc.in)
		if got.MinNs != tc.min || got.MedianNs != tc.median || got.Iterations != len(tc.in) {
			t.Errorf("summarize(%v) = %+v, want min %v median %v", tc.in, got, tc.min, tc.median)
		}
	}
}

func TestMBPerSecond(t *testing.T) {
	cases := []struct {
		bytes int
		ns    float64
		want  float64
	}{
		{1_000_000, 1e9, 1},
		{1_000_000, 1e6, 1000},
		{500, 0, 0},
	}
	for _, tc := range cases {
		if got := mbPerSecond(tc.bytes, tc.ns); got != tc.want {
			t.Errorf("mbPerSecond(%d, %v) = %v, want %v", tc.bytes, tc.ns, got, tc.want)
		}
	}
}

func TestWriteTable(t *testing.T) {
	r := &TokenizeReport{
		Model: "m", ReferencePin: "taskset -c 0, RAYON_NUM_THREADS=1", LoadNs: 5e8, RefLoadNs: 9e8,
		HeapBytes: 80 << 20, HeapAfterBytes: 90 << 20,
		Inputs: []InputResult{
			{Name: "chat", Bytes: 1000, DecodedBytes: 1000, Tokens: 250, RefTokens: 250, IDsEqual: true, DecodedEqual: true,
				Encode: Timing{Iterations: 3}, EncodeMBps: 40, RefEncodeMBps: 2, EncodeRatio: 20, EncodeRatioMin: 22,
				DecodeMBps: 100, RefDecodeMBps: 25, DecodeRatio: 4, DecodeRatioMin: 5.5},
			{Name: "mixed", Bytes: 10, Tokens: 3, RefTokens: 4, FirstDiff: 2},
		},
	}
	var out bytes.Buffer
	if err := r.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"median of 3 runs", "heap after load 80.0 MiB (target ≤ 64.0 MiB: MISSED)",
		"chat         encode        1000      250         40.00            2.00    20.0x      22.0x ≥15x met",
		"chat         decode        1000      250        100.00           25.00     4.0x       5.5x ≥5x MISSED",
		"chat: ids and decoded text identical", "mixed: IDS DIFFER from the reference at token 2 (vrender 3 tokens, reference 4)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

// TestFindScripts: each reference script is found from a folder below
// the one holding tools/, and not in a tree without it, where the error
// names the flag to pass.
func TestFindScripts(t *testing.T) {
	for _, tc := range []struct {
		name string
		find func(string) (string, error)
		rel  string
		flag string
	}{
		{"FindScript", FindScript, "tools/reftok/bench.js", "--ref-script"},
		{"FindRenderScript", FindRenderScript, "tools/refrender/bench.py", "--render-script"},
		{"FindImageScript", FindImageScript, "tools/refimage/bench.py", "--ref-script"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			script := filepath.Join(root, filepath.FromSlash(tc.rel))
			deep := filepath.Join(root, "a", "b")
			for _, d := range []string{filepath.Dir(script), deep} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(script, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if got, err := tc.find(deep); err != nil || got != script {
				t.Errorf("%s = %q, %v; want %q", tc.name, got, err, script)
			}
			_, err := tc.find(t.TempDir())
			if err == nil || !strings.Contains(err.Error(), tc.rel+" not found") || !strings.Contains(err.Error(), tc.flag) {
				t.Errorf("%s in an empty tree: err = %v", tc.name, err)
			}
		})
	}
}

// TestTokenizeAgainstReference runs the whole comparison once on a small
// input: both sides must agree and every figure must be filled in.
func TestTokenizeAgainstReference(t *testing.T) {
	root := testenv.RepoRoot(t)
	model := testenv.ModelDir(t, "qwen3")
	nodeModules := testenv.RefNodeModules(t)
	node := testenv.Node(t)
	input := filepath.Join(t.TempDir(), "chat.txt")
	if err := os.WriteFile(input, []byte(prefixRunes(ChatPrompt(), 4000)), 0o644); err != nil {
		t.Fatal(err)
	}
	report, err := Tokenize(context.Background(), TokenizeOptions{
		ModelDir:   model,
		Files:      []Input{{Name: "chat", Path: input}},
		Iterations: 2,
		Warmup:     1,
		Reference:  Reference{Node: node, NodeModules: nodeModules, Script: filepath.Join(root, "tools", "reftok", "bench.js")},
	})
	if err != nil {
		t.Fatal(err)
	}
	in := report.Inputs[0]
	if !in.IDsEqual || !in.DecodedEqual || in.Tokens == 0 || in.Tokens != in.RefTokens {
		t.Errorf("sides disagree: %+v", in)
	}
	if report.LoadNs <= 0 || report.RefLoadNs <= 0 || report.HeapBytes <= 0 || in.EncodeRatio <= 0 || in.DecodeRatio <= 0 {
		t.Errorf("missing figures: %+v", report)
	}
	var out bytes.Buffer
	if err := report.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
}
