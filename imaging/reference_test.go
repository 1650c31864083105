package imaging

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// pillowResult is one line of testdata/pillow_load.py: vLLM's load through the system Pillow 9.4.
type pillowResult struct {
	OK    bool   `json:"ok"`
	W     int    `json:"w"`
	H     int    `json:"h"`
	Mode  string `json:"mode"`
	Error string `json:"error"`
	Pix   []byte `json:"-"`
}

// pillowLoad runs the reference over files (env: extra environment such as BG=r,g,b).
func pillowLoad(t testing.TB, files []string, env ...string) []pillowResult {
	t.Helper()
	py := testenv.PillowPython(t)
	dir := t.TempDir()
	cmd := exec.Command(py, append([]string{filepath.Join("testdata", "pillow_load.py"), dir}, files...)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pillow_load.py: %v\n%s", err, stderr.String())
	}
	res := make([]pillowResult, 0, len(files))
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r pillowResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("pillow_load.py output %q: %v", sc.Text(), err)
		}
		if r.OK {
			pix, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.rgb", len(res))))
			if err != nil {
				t.Fatal(err)
			}
			r.Pix = pix
		}
		res = append(res, r)
	}
	if len(res) != len(files) {
		t.Fatalf("pillow_load.py gave %d results for %d files", len(res), len(files))
	}
	return res
}

// pixelDiff is how far two RGB buffers are apart: the largest per-byte difference and how many
// pixels differ at all.
func pixelDiff(a, b []byte) (maxDiff, pixels int) {
	for i := 0; i+2 < len(a) && i+2 < len(b); i += 3 {
		differs := false
		for c := 0; c < 3; c++ {
			d := int(a[i+c]) - int(b[i+c])
			if d < 0 {
				d = -d
			}
			if d > 0 {
				differs = true
				maxDiff = max(maxDiff, d)
			}
		}
		if differs {
			pixels++
		}
	}
	return maxDiff, pixels
}

// corpus lists the shared image corpus (skips or fails via testenv when absent).
func corpus(t testing.TB) []string {
	t.Helper()
	dir := filepath.Join(testenv.SharedDir(t), "multimodal", "images")
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".py") {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		testenv.Missing(t, dir, "the image corpus of ../shared/multimodal")
	}
	return out
}

// compareWithPillow loads every file with Load and checks it against the reference: identical
// pixels, or the identical error message.
func compareWithPillow(t *testing.T, files []string, opt Options, env ...string) {
	t.Helper()
	ref := pillowLoad(t, files, env...)
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Load(data, opt)
		name := filepath.Base(f)
		want := ref[i]
		switch {
		case !want.OK && err == nil:
			t.Errorf("%s: Load succeeded, Pillow failed with %q", name, want.Error)
		case !want.OK:
			if err.Error() != want.Error {
				t.Errorf("%s: error %q, Pillow %q", name, err, want.Error)
			}
		case err != nil:
			t.Errorf("%s: %v (Pillow decodes it, mode %s)", name, err, want.Mode)
		case got.Width != want.W || got.Height != want.H:
			t.Errorf("%s: size %dx%d, Pillow %dx%d", name, got.Width, got.Height, want.W, want.H)
		case !bytes.Equal(got.Pix, want.Pix):
			d, n := pixelDiff(got.Pix, want.Pix)
			t.Errorf("%s (%s %dx%d): pixels differ from Pillow: max |diff| %d, %d of %d pixels", name, want.Mode, want.W, want.H, d, n, want.W*want.H)
		}
	}
}

func TestLoadCorpusMatchesPillow(t *testing.T) {
	compareWithPillow(t, corpus(t), DefaultOptions())
}

// TestLoadVariantsMatchPillow is the differential test over images Pillow writes on the spot
// (testdata/make_variants.py): JPEG at every size class from 1x1 up, subsamplings 4:4:4/4:2:2/4:2:0,
// qualities 30-100, progressive, restart intervals, grayscale, CMYK; EXIF orientations 1-8; the PNG,
// GIF, BMP and WebP modes with and without transparency.
func TestLoadVariantsMatchPillow(t *testing.T) {
	files := variants(t)
	t.Run("white", func(t *testing.T) { compareWithPillow(t, files, DefaultOptions()) })
	opt := DefaultOptions()
	opt.Background = [3]uint8{10, 128, 250}
	t.Run("background", func(t *testing.T) { compareWithPillow(t, files, opt, "BG=10,128,250") })
}

// variants writes testdata/make_variants.py's images into a temporary directory and lists them.
func variants(t testing.TB) []string {
	t.Helper()
	py := testenv.PillowPython(t)
	dir := t.TempDir()
	out, err := exec.Command(py, filepath.Join("testdata", "make_variants.py"), dir).Output()
	if err != nil {
		t.Fatalf("make_variants.py: %v", err)
	}
	var files []string
	for _, name := range strings.Fields(string(out)) {
		files = append(files, filepath.Join(dir, name))
	}
	return files
}
