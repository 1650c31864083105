package imaging

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// checkProbeAgreesWithLoad is Probe's differential test against the full Load on one input: the same
// size when Load succeeds, the same error when Probe fails, and a Probe success with a Load failure
// only for failures inside the compressed data (which no header can show).
func checkProbeAgreesWithLoad(t *testing.T, name string, data []byte, opt Options) {
	t.Helper()
	info, perr := Probe(data, opt)
	img, lerr := Load(data, opt)
	switch {
	case perr != nil && lerr == nil:
		t.Errorf("%s: Probe failed (%v) but Load succeeded", name, perr)
	case perr != nil && perr.Error() != lerr.Error():
		t.Errorf("%s: Probe error %q, Load error %q", name, perr, lerr)
	case perr == nil && lerr != nil:
		if msg := lerr.Error(); !strings.HasPrefix(msg, "image file is truncated") && msg != "broken data stream when reading image file" {
			t.Errorf("%s: Load failed from its header (%v) but Probe succeeded", name, lerr)
		}
	case perr == nil && (info.Width != img.Width || info.Height != img.Height):
		t.Errorf("%s: Probe %dx%d, Load %dx%d", name, info.Width, info.Height, img.Width, img.Height)
	}
}

func TestProbeAgreesWithLoadOnCorpus(t *testing.T) {
	limits := []Options{DefaultOptions(), {MaxPixels: 1_000_000}, {MaxPixels: 0}}
	for _, f := range corpus(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, opt := range limits {
			checkProbeAgreesWithLoad(t, filepath.Base(f), data, opt)
		}
	}
}

func TestProbeAgreesWithLoadOnVariants(t *testing.T) {
	for _, f := range variants(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		checkProbeAgreesWithLoad(t, name, data, DefaultOptions())
		checkProbeAgreesWithLoad(t, name, data, Options{MaxPixels: 500})
		// Prefixes: the header errors Probe reports must be Load's.
		for _, n := range []int{0, 1, 2, 3, 7, 8, 12, 20, 30, 60, 100, len(data) / 2, len(data) - 1} {
			if n >= 0 && n <= len(data) {
				checkProbeAgreesWithLoad(t, name+"[:n]", data[:n], DefaultOptions())
			}
		}
	}
}

// TestGoldenImages checks Probe and Load against ../shared/multimodal/golden/images.jsonl (made with
// Pillow 9.4): the mode the file opens as, the size after EXIF orientation, and decode errors.
func TestGoldenImages(t *testing.T) {
	shared := filepath.Join(testenv.SharedDir(t), "multimodal")
	f, err := os.Open(filepath.Join(shared, "golden", "images.jsonl"))
	if err != nil {
		testenv.Missing(t, "golden/images.jsonl", "../shared/multimodal")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var g struct {
			File         string `json:"file"`
			OriginalMode string `json:"original_mode"`
			SizeAfter    []int  `json:"size_after_exif_wh"`
			Error        *struct {
				Stage       string `json:"stage"`
				PillowError string `json:"pillow_error"`
			} `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		n++
		data, err := os.ReadFile(filepath.Join(shared, "images", g.File))
		if err != nil {
			t.Fatal(err)
		}
		info, perr := Probe(data, DefaultOptions())
		_, lerr := Load(data, DefaultOptions())
		if g.Error != nil && g.Error.Stage == "decode" {
			want := g.Error.PillowError[strings.Index(g.Error.PillowError, ": ")+2:]
			if lerr == nil || lerr.Error() != want {
				t.Errorf("%s: Load error %v, golden %q", g.File, lerr, want)
			}
			continue
		}
		if perr != nil || lerr != nil {
			t.Errorf("%s: Probe %v, Load %v", g.File, perr, lerr)
			continue
		}
		if info.Mode != g.OriginalMode || info.Width != g.SizeAfter[0] || info.Height != g.SizeAfter[1] {
			t.Errorf("%s: Probe %s %dx%d, golden %s %v", g.File, info.Mode, info.Width, info.Height, g.OriginalMode, g.SizeAfter)
		}
	}
	if n == 0 {
		t.Fatal("images.jsonl is empty")
	}
}
