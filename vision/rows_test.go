package vision

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"image"
	"image/color"
	stdjpeg "image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/internal/testenv"
)

// loadPrepare is the whole path PrepareData must equal: Load, then Prepare.
func loadPrepare(p *qwen2VL, data []byte, opt imaging.Options, kw Kwargs) (*Prepared, error) {
	img, err := imaging.Load(data, opt)
	if err != nil {
		return nil, err
	}
	return p.Prepare(*img, kw)
}

// prepared is what a Prepare answer is compared by: its plan and a digest of its pixel values, or
// its error's type and text (which pick the client's answer).
func prepared(t testing.TB, prepare func() (*Prepared, error)) string {
	t.Helper()
	p, err := prepare()
	if err != nil {
		return fmt.Sprintf("%T: %v", err, err)
	}
	h := sha256.New()
	if n, err := p.WriteTo(h); err != nil || n != int64(p.Len) {
		t.Fatalf("WriteTo wrote %d of %d bytes: %v", n, p.Len, err)
	}
	return fmt.Sprintf("%+v len %d %x", p.Plan, p.Len, h.Sum(nil))
}

// checkPrepareData compares PrepareData with Load then Prepare for one input and reports whether
// the input took the row-fed path.
func checkPrepareData(t *testing.T, p *qwen2VL, name string, data []byte, opt imaging.Options, kw Kwargs) bool {
	t.Helper()
	want := prepared(t, func() (*Prepared, error) { return loadPrepare(p, data, opt, kw) })
	got := prepared(t, func() (*Prepared, error) { return p.PrepareData(data, opt, kw) })
	if got != want {
		t.Errorf("%s %s: PrepareData %s, Load+Prepare %s", name, kwargsString(kw), got, want)
	}
	rows, ok, _ := imaging.OpenRows(data, opt)
	if ok {
		rows.Close()
	}
	return ok
}

// kwargsString shows the kwargs set, for failures.
func kwargsString(kw Kwargs) string {
	s := ""
	if kw.MinPixels != nil {
		s += fmt.Sprintf(" min_pixels=%d", *kw.MinPixels)
	}
	if kw.MaxPixels != nil {
		s += fmt.Sprintf(" max_pixels=%d", *kw.MaxPixels)
	}
	if kw.UseFast != nil {
		s += fmt.Sprintf(" use_fast=%v", *kw.UseFast)
	}
	return "{" + s + " }"
}

func intp(n int) *int    { return &n }
func boolp(b bool) *bool { return &b }

// rowsKwargs are the resizes the differential tests run: the default (torch, down or up to the
// model's bounds), PIL's, a strong shrink, an enlargement, and bounds that leave a 56x56 image as it is.
var rowsKwargs = []Kwargs{
	{},
	{UseFast: boolp(false)},
	{MinPixels: intp(784), MaxPixels: intp(784 * 4)},
	{MinPixels: intp(1 << 18), MaxPixels: intp(1 << 19)},
	{MinPixels: intp(56 * 56), MaxPixels: intp(56 * 56)},
}

// damaged returns data cut short at several points and with scan bytes overwritten: truncated files,
// corrupt scans that libjpeg repairs, and ones that stop it.
func damaged(name string, data []byte) map[string][]byte {
	out := map[string][]byte{}
	for k := 1; k < 8; k++ {
		out[fmt.Sprintf("%s_cut%d", name, k)] = data[:len(data)*k/8]
	}
	sos := bytes.Index(data, []byte{0xff, 0xda})
	if sos < 0 {
		return out
	}
	scan := len(data) - sos
	for i, at := range []int{sos + scan/5, sos + scan/2, sos + scan*4/5} {
		for j, b := range []byte{0x00, 0xff, 0x5a} {
			c := bytes.Clone(data)
			for x := at; x < min(at+7, len(c)-2); x++ {
				c[x] = b
			}
			if b == 0xff && at+8 < len(c)-2 {
				c[at+7] = 0xd0 + byte(i) // a stray restart marker
			}
			out[fmt.Sprintf("%s_scan%d_%d", name, i, j)] = c
		}
	}
	return out
}

// goJPEG is Go's encoder's 4:2:0 JPEG of a w x h gradient with edges.
func goJPEG(t testing.TB, w, h int) []byte {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.Set(x, y, color.RGBA{uint8(x * 255 / w), uint8((x ^ y) * 7), uint8(y * 3), 255})
		}
	}
	var buf bytes.Buffer
	if err := stdjpeg.Encode(&buf, m, &stdjpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPrepareDataMatchesLoadPrepare is the differential test of the row-fed decode and resize: over
// the corpus, Pillow-written variants (odd sizes, 4:2:0/4:2:2/4:4:4, progressive, restart markers,
// gray, CMYK, EXIF orientations, cut and broken scans), Go-encoded sizes and damaged copies of them,
// PrepareData gives the bytes and errors of Load then Prepare.
func TestPrepareDataMatchesLoadPrepare(t *testing.T) {
	q := mustNew(t, qwen25Config, BFloat16)
	inputs := map[string][]byte{}
	files, _ := filepath.Glob(filepath.Join(testenv.SharedDir(t), "multimodal", "images", "*"))
	for _, f := range files {
		if strings.HasSuffix(f, ".py") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[filepath.Base(f)] = data
	}
	py := testenv.PillowPython(t)
	dir := t.TempDir()
	out, err := exec.Command(py, filepath.Join("..", "imaging", "testdata", "make_variants.py"), dir).Output()
	if err != nil {
		t.Fatalf("make_variants.py: %v", err)
	}
	for _, name := range strings.Fields(string(out)) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		inputs[name] = data
	}
	for _, sz := range [][2]int{{56, 56}, {1, 1}, {3, 500}, {57, 29}, {161, 97}, {1001, 3}} {
		inputs[fmt.Sprintf("go_%dx%d", sz[0], sz[1])] = goJPEG(t, sz[0], sz[1])
	}
	for _, name := range []string{"go_161x97", "j_333x517_s0_q95.jpg", "j_333x517_s1_q75.jpg", "j_333x517_prog.jpg", "j_restart.jpg", "j_restart_rows.jpg"} {
		if inputs[name] == nil {
			t.Fatalf("no input %s", name)
		}
		for n, d := range damaged(name, inputs[name]) {
			inputs[n] = d
		}
	}
	opt := imaging.DefaultOptions()
	fused := 0
	for name, data := range inputs {
		kws := rowsKwargs
		if len(data) > 1<<20 {
			kws = kws[:1] // the corpus's large photos: the default resize only, to keep the test short
		}
		for _, kw := range kws {
			if checkPrepareData(t, q, name, data, opt, kw) {
				fused++
			}
		}
	}
	// The pixel limit, as Load refuses it.
	small := imaging.Options{MaxPixels: 1000, Background: opt.Background}
	checkPrepareData(t, q, "go_161x97 over the limit", inputs["go_161x97"], small, Kwargs{})
	if fused < len(inputs) {
		t.Fatalf("only %d of %d inputs x kwargs took the row-fed path", fused, len(inputs)*len(rowsKwargs))
	}
	t.Logf("%d inputs, %d row-fed runs", len(inputs), fused)
}

// FuzzPrepareData: any bytes give PrepareData the answer of Load then Prepare, the same pixel values
// or the same error.
func FuzzPrepareData(f *testing.F) {
	f.Add(goJPEG(f, 57, 29))
	f.Add(goJPEG(f, 3, 70)[:200])
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(testenv.RepoRoot(f)), "shared", "multimodal", "images", "*.jpg"))
	for _, p := range files {
		if fi, err := os.Stat(p); err == nil && fi.Size() < 64<<10 {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	q := mustNew(f, qwen25Config, BFloat16)
	opt := imaging.Options{MaxPixels: 1 << 20, Background: [3]uint8{255, 255, 255}}
	kw := Kwargs{MinPixels: intp(784), MaxPixels: intp(784 * 16)}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := prepared(t, func() (*Prepared, error) { return loadPrepare(q, data, opt, kw) })
		if got := prepared(t, func() (*Prepared, error) { return q.PrepareData(data, opt, kw) }); got != want {
			t.Fatalf("PrepareData %s, Load+Prepare %s", got, want)
		}
	})
}
