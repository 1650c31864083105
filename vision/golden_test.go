package vision

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/vision/resize"
)

// pixelGolden is one processor output as the goldens describe it.
type pixelGolden struct {
	Shape      []int     `json:"shape"`
	SHA256F32  string    `json:"sha256_f32le"`
	SHA256BF16 string    `json:"sha256_bf16le"`
	SumF64     float64   `json:"sum_f64"`
	First16    []float64 `json:"first16"`
	GridTHW    [][]int   `json:"grid_thw"`
	Error      string    `json:"error"`
}

// hfRecord is a line of hf_processors.jsonl: Hugging Face's real processors, fast and slow.
type hfRecord struct {
	Model     string       `json:"model"`
	File      string       `json:"file"`
	LoadError string       `json:"load_error"`
	Fast      *pixelGolden `json:"fast"`
	Slow      *pixelGolden `json:"slow"`
}

// pilRecord is a line of images.jsonl: the Pillow 9.4 path, with the resized bytes' hash.
type pilRecord struct {
	File           string       `json:"file"`
	Model          string       `json:"model"`
	ResizedHW      []int        `json:"resized_hw"`
	GridTHW        []int        `json:"grid_thw"`
	NumImageTokens int          `json:"num_image_tokens"`
	ResizedRGBSHA  string       `json:"resized_rgb_sha256"`
	ResizedNPY     string       `json:"resized_npy"`
	PixelValues    *pixelGolden `json:"pixel_values"`
	Error          *struct {
		Stage     string `json:"stage"`
		Kind      string `json:"kind"`
		HFMessage string `json:"hf_message"`
	} `json:"error"`
}

// corpusImage decodes a corpus file once per test binary.
type corpusImage struct {
	img imaging.RGB
	err error
}

func loadCorpus(t *testing.T, files []string) map[string]corpusImage {
	t.Helper()
	dir := filepath.Join(multimodalDir(t), "images")
	out := map[string]corpusImage{}
	for _, f := range files {
		if _, ok := out[f]; ok {
			continue
		}
		img, err := decodeCorpus(filepath.Join(dir, f))
		out[f] = corpusImage{img, err}
	}
	return out
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// f32Stats returns the float64 sum of a float32 tensor and its first 16 values.
func f32Stats(data []byte) (float64, []float64) {
	sum := 0.0
	var first []float64
	for i := 0; i+4 <= len(data); i += 4 {
		v := float64(math.Float32frombits(binary.LittleEndian.Uint32(data[i:])))
		sum += v
		if len(first) < 16 {
			first = append(first, v)
		}
	}
	return sum, first
}

// checkOutput compares one backend's output with its golden: grid, shape, the float32 bytes (with
// sum and first values to size a difference) and the bf16 bytes. It returns a one-line verdict.
func checkOutput(t *testing.T, model string, kw Kwargs, img imaging.RGB, g *pixelGolden) string {
	t.Helper()
	p32 := modelProcessor(t, model, Float32)
	pbf := modelProcessor(t, model, BFloat16)
	r32, err := p32.Process(nil, img, kw)
	if g.Error != "" {
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("want error %s, got %v", g.Error, err)
			return "error MISMATCH"
		}
		if want := "ValueError('" + e.Message + "')"; want != g.Error {
			t.Errorf("error %q, golden %q", want, g.Error)
			return "error MISMATCH"
		}
		return "error exact (" + e.Kind.String() + ")"
	}
	if err != nil {
		t.Errorf("Process: %v", err)
		return "FAILED"
	}
	if got, want := r32.GridTHW[:], g.GridTHW[0]; !slices.Equal(got, want) {
		t.Errorf("grid %v, golden %v", got, want)
	}
	if !slices.Equal(r32.PixelValues.Shape, g.Shape) {
		t.Errorf("shape %v, golden %v", r32.PixelValues.Shape, g.Shape)
	}
	rbf, err := pbf.Process(nil, img, kw)
	if err != nil {
		t.Fatalf("Process bf16: %v", err)
	}
	if streamed := processTo(t, pbf, img, kw); !bytes.Equal(streamed.PixelValues.Data, rbf.PixelValues.Data) {
		t.Errorf("bf16 ProcessTo differs from Process")
	}
	if rbf.PixelValues.DType != BFloat16 || r32.PixelValues.DType != Float32 {
		t.Errorf("dtypes %v %v", rbf.PixelValues.DType, r32.PixelValues.DType)
	}
	f32OK := sha(r32.PixelValues.Data) == g.SHA256F32
	bf16OK := sha(rbf.PixelValues.Data) == g.SHA256BF16
	sum, first := f32Stats(r32.PixelValues.Data)
	if f32OK && bf16OK {
		// The golden sum is numpy's pairwise one; ours is sequential, so they agree only closely.
		if !slices.Equal(first, g.First16) || math.Abs(sum-g.SumF64) > 1e-9*math.Abs(g.SumF64) {
			t.Errorf("hashes match but first16 %v / sum %v differ from %v / %v", first, sum, g.First16, g.SumF64)
		}
		return "exact f32+bf16"
	}
	maxFirst := 0.0
	for i := range min(len(first), len(g.First16)) {
		maxFirst = max(maxFirst, math.Abs(first[i]-g.First16[i]))
	}
	t.Errorf("not exact: f32 %v bf16 %v; sum %.9g vs %.9g (Δ %.3g); max |Δ| over first16 %.3g",
		f32OK, bf16OK, sum, g.SumF64, sum-g.SumF64, maxFirst)
	return fmt.Sprintf("DIFFERS (f32 %v, bf16 %v, Δsum %.3g)", f32OK, bf16OK, sum-g.SumF64)
}

// TestHFProcessorsGolden runs both backends on every decodable corpus image against Hugging Face's
// own processors (transformers 5.17, torch 2.11, torchvision 0.26): fast must match the torchvision
// backend bit for bit, slow the PIL backend.
func TestHFProcessorsGolden(t *testing.T) {
	recs := readJSONL[hfRecord](t, filepath.Join(multimodalDir(t), "golden", "hf_processors.jsonl"))
	if len(recs) != 62 {
		t.Fatalf("%d golden lines, want 62", len(recs))
	}
	var files []string
	for _, r := range recs {
		files = append(files, r.File)
	}
	corpus := loadCorpus(t, files)
	var summary []string
	for _, r := range recs {
		c := corpus[r.File]
		name := r.Model + "/" + r.File
		switch {
		case r.LoadError != "":
			// Decode failures are package imaging's (vLLM's "Failed to load image: ..."); the
			// processor never sees these files.
			summary = append(summary, fmt.Sprintf("%-45s decode error (imaging's): %s", name, r.LoadError))
			continue
		case c.err != nil:
			t.Errorf("%s: imaging.Load: %v", name, c.err)
			continue
		}
		for _, b := range []struct {
			name string
			fast bool
			g    *pixelGolden
		}{{"fast", true, r.Fast}, {"slow", false, r.Slow}} {
			t.Run(name+"/"+b.name, func(t *testing.T) {
				fast := b.fast
				verdict := checkOutput(t, r.Model, Kwargs{UseFast: &fast}, c.img, b.g)
				summary = append(summary, fmt.Sprintf("%-45s %s: %s", name, b.name, verdict))
			})
		}
	}
	t.Logf("corpus results:\n%s", strings.Join(summary, "\n"))
}

// TestPILGolden checks the Pillow path against images.jsonl (Pillow 9.4): the resized bytes
// themselves, the grid and the token count, and the .npy arrays of resized pixels.
func TestPILGolden(t *testing.T) {
	dir := multimodalDir(t)
	recs := readJSONL[pilRecord](t, filepath.Join(dir, "golden", "images.jsonl"))
	var files []string
	for _, r := range recs {
		files = append(files, r.File)
	}
	corpus := loadCorpus(t, files)
	checked := 0
	for _, r := range recs {
		c := corpus[r.File]
		if c.err != nil || (r.Error != nil && r.Error.Stage == "decode") {
			continue // reported by TestHFProcessorsGolden
		}
		t.Run(r.Model+"/"+r.File, func(t *testing.T) {
			p := modelProcessor(t, r.Model, Float32)
			plan, err := p.Plan(c.img.Width, c.img.Height, Kwargs{})
			if r.Error != nil {
				var e *Error
				if !errors.As(err, &e) || e.Message != r.Error.HFMessage || e.Kind.String() != r.Error.Kind {
					t.Fatalf("got %v, want %s error %q", err, r.Error.Kind, r.Error.HFMessage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plan.ResizedHeight != r.ResizedHW[0] || plan.ResizedWidth != r.ResizedHW[1] ||
				!slices.Equal(plan.GridTHW[:], r.GridTHW) || plan.NumTokens != r.NumImageTokens {
				t.Fatalf("plan %+v, golden resized %v grid %v tokens %d", plan, r.ResizedHW, r.GridTHW, r.NumImageTokens)
			}
			resized := pillowResized(t, c.img, plan)
			if got := sha(resized); got != r.ResizedRGBSHA {
				t.Errorf("resized RGB sha256 %s, golden %s", got, r.ResizedRGBSHA)
			}
			if r.ResizedNPY != "" {
				want := readNPYUint8(t, filepath.Join(dir, "golden", r.ResizedNPY))
				if !slices.Equal(resized, want) {
					t.Errorf("resized pixels differ from %s", r.ResizedNPY)
				}
			}
			slow := false
			res, err := p.Process(nil, c.img, Kwargs{UseFast: &slow})
			if err != nil {
				t.Fatal(err)
			}
			if got := sha(res.PixelValues.Data); got != r.PixelValues.SHA256F32 {
				t.Errorf("pixel_values f32 sha256 %s, golden %s", got, r.PixelValues.SHA256F32)
			}
			if got := sha(processTo(t, p, c.img, Kwargs{UseFast: &slow}).PixelValues.Data); got != r.PixelValues.SHA256F32 {
				t.Errorf("ProcessTo pixel_values f32 sha256 %s, golden %s", got, r.PixelValues.SHA256F32)
			}
			checked++
		})
	}
	if checked < 26 {
		t.Errorf("only %d (model, image) pairs checked", checked)
	}
}

// processTo runs p.ProcessTo into a buffer and returns its result with that buffer as the data,
// checking that the plan and shape are Process's.
func processTo(t *testing.T, p Processor, img imaging.RGB, kw Kwargs) *Result {
	t.Helper()
	var buf bytes.Buffer
	res, err := p.ProcessTo(&buf, img, kw)
	if err != nil {
		t.Fatalf("ProcessTo: %v", err)
	}
	if res.PixelValues.Data != nil {
		t.Fatalf("ProcessTo's result holds pixel values")
	}
	if rows, cols := res.PixelValues.Shape[0], res.PixelValues.Shape[1]; rows != res.GridTHW[0]*res.GridTHW[1]*res.GridTHW[2] || cols != res.Cols ||
		buf.Len() != rows*cols*res.PixelValues.DType.Size() {
		t.Fatalf("ProcessTo wrote %d bytes for shape %v, grid %v, cols %d", buf.Len(), res.PixelValues.Shape, res.GridTHW, res.Cols)
	}
	res.PixelValues.Data = buf.Bytes()
	// Prepare then WriteTo, twice over (a cached image is written by every
	// answer that hits it), is ProcessTo.
	prep, err := p.Prepare(img, kw)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if prep.Plan != res.Plan || prep.Len != buf.Len() || prep.DType() != res.PixelValues.DType {
		t.Fatalf("Prepare planned %+v, %d bytes of %v; ProcessTo %+v, %d bytes of %v", prep.Plan, prep.Len, prep.DType(), res.Plan, buf.Len(), res.PixelValues.DType)
	}
	for range 2 {
		var again bytes.Buffer
		if n, err := prep.WriteTo(&again); err != nil || n != int64(again.Len()) || !bytes.Equal(again.Bytes(), res.PixelValues.Data) {
			t.Fatalf("Prepared.WriteTo wrote %d bytes (%v), differing from ProcessTo's", n, err)
		}
	}
	return res
}

// pillowResized is the uint8 image the slow backend resizes to.
func pillowResized(t *testing.T, img imaging.RGB, plan Plan) []uint8 {
	t.Helper()
	if plan.ResizedWidth == img.Width && plan.ResizedHeight == img.Height {
		return img.Pix
	}
	out := make([]uint8, plan.ResizedWidth*plan.ResizedHeight*3)
	var r resize.Resizer
	if err := r.RGB(out, plan.ResizedWidth, plan.ResizedHeight, img.Pix, img.Width, img.Height, resize.Pillow); err != nil {
		t.Fatal(err)
	}
	return out
}

// readNPYUint8 returns the data of a version 1 .npy file of uint8 values.
func readNPYUint8(t *testing.T, path string) []uint8 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 10 || string(b[1:6]) != "NUMPY" || b[6] != 1 {
		t.Fatalf("%s: not a version 1 .npy", path)
	}
	n := int(binary.LittleEndian.Uint16(b[8:]))
	header := string(b[10 : 10+n])
	if !strings.Contains(header, "'descr': '|u1'") || !strings.Contains(header, "'fortran_order': False") {
		t.Fatalf("%s: header %s", path, header)
	}
	return b[10+n:]
}
