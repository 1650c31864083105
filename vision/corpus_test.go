package vision

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/internal/testenv"
)

// The corpus tests decode the shared images with imaging.Load, vLLM's loader as Pillow 9.4 runs it (held
// to Pillow by package imaging's own tests), so the processors are checked on every corpus image.

// multimodalDir is the shared fixtures folder.
func multimodalDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(testenv.SharedDir(t), "multimodal")
}

// decodeCorpus loads a corpus file as vLLM's media loader does.
func decodeCorpus(path string) (imaging.RGB, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return imaging.RGB{}, err
	}
	img, err := imaging.Load(data, imaging.DefaultOptions())
	if err != nil {
		return imaging.RGB{}, err
	}
	return *img, nil
}

// readJSONL decodes every line of a golden file into T.
func readJSONL[T any](t testing.TB, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		testenv.Missing(t, path, "the multimodal goldens live in ../shared/multimodal/golden")
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// modelProcessor builds the processor of a shared test model (qwen2_5_vl, qwen3_vl).
func modelProcessor(t testing.TB, model string, d DType) Processor {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(multimodalDir(t), "models", model, "preprocessor_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(raw, d)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
