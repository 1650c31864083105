package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// TestImageReferenceMatchesGoldens runs tools/refimage/bench.py on corpus
// images and holds its grid and bf16 pixel_values to the PIL goldens: the
// reference the image bench times does the whole processor's work.
func TestImageReferenceMatchesGoldens(t *testing.T) {
	python := testenv.PillowPython(t)
	shared := testenv.SharedDir(t)
	script := filepath.Join(testenv.RepoRoot(t), "tools", "refimage", "bench.py")
	mm := filepath.Join(shared, "multimodal")
	golden := map[string]struct {
		Grid   [3]int `json:"grid_thw"`
		Pixels struct {
			BF16 string `json:"sha256_bf16le"`
		} `json:"pixel_values"`
	}{}
	f, err := os.Open(filepath.Join(mm, "golden", "images.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			File, Model string
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		if line.Model != "qwen2_5_vl" {
			continue
		}
		g := golden[line.File]
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		golden[line.File] = g
	}
	names := []string{"jpeg_baseline_420_640x480.jpg", "png_rgb_640x480.png", "png_rgba_320x240.png", "jpeg_exif_orient6_320x240.jpg"}
	files := make([]string, len(names))
	for i, n := range names {
		files[i] = filepath.Join(mm, "images", n)
	}
	ref := ImageReference{Python: python, Script: script}
	run, _, err := ref.run(context.Background(), filepath.Join(mm, "models", "qwen2_5_vl", "preprocessor_config.json"), files, 1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		want, ok := golden[n]
		if !ok || want.Pixels.BF16 == "" {
			t.Fatalf("no golden for %s", n)
		}
		got := run.Images[i]
		if got.GridTHW != want.Grid || got.BF16SHA256 != want.Pixels.BF16 {
			t.Errorf("%s: reference grid %v bf16 %s, golden grid %v bf16 %s", n, got.GridTHW, got.BF16SHA256, want.Grid, want.Pixels.BF16)
		}
	}
}
