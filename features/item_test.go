package features

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// synthPixels is gen_fixtures.py's pixels(k, rows, cols).
func synthPixels(k int, rows int64, cols, size int) []byte {
	b := make([]byte, rows*int64(cols)*int64(size))
	for i := range b {
		b[i] = byte(i*31 + k*7 + 3)
	}
	return b
}

func synthImages(grids [][3]int64, cols int) []QwenImage { return synthImagesOf(grids, cols, "") }

func synthImagesOf(grids [][3]int64, cols int, dtype string) []QwenImage {
	imgs := make([]QwenImage, len(grids))
	for k, g := range grids {
		imgs[k] = QwenImage{GridTHW: g, DType: dtype}
		imgs[k].PixelValues = synthPixels(k, imgs[k].Rows(), cols, pixelDTypes[imgs[k].dtype()])
	}
	return imgs
}

// TestQwenItemsFixtures compares the items byte for byte with what vLLM
// bf578e1's MsgpackEncoder writes (testdata/gen_fixtures.py).
func TestQwenItemsFixtures(t *testing.T) {
	var manifest []struct {
		File     string     `json:"file"`
		Metadata string     `json:"metadata"`
		Image    int        `json:"image"`
		Grids    [][3]int64 `json:"grids"`
		Cols     int        `json:"cols"`
		DType    string     `json:"dtype"`
	}
	readJSON(t, "items.json", &manifest)
	if len(manifest) < 8 {
		t.Fatalf("%d fixtures", len(manifest))
	}
	for _, m := range manifest {
		t.Run(m.File, func(t *testing.T) {
			dtype := m.DType
			if dtype == "bfloat16" {
				dtype = ""
			}
			imgs := synthImagesOf(m.Grids, m.Cols, dtype)
			blobs, err := QwenItems(imgs, m.Cols)
			if err != nil {
				t.Fatal(err)
			}
			item := blobs[m.Image].Bytes()
			if want := readFile(t, m.File); !bytes.Equal(item, want) {
				t.Fatalf("item differs from the fixture: %d bytes, want %d; first difference at %d",
					len(item), len(want), testenv.FirstDiff(item, want))
			}
			if want := readFile(t, m.Metadata); !bytes.Equal(QwenMetadata(imgs[m.Image]), want) {
				t.Fatalf("metadata differs: %x, want %x", QwenMetadata(imgs[m.Image]), want)
			}
			// The decoder reads back what was written.
			it, err := DecodeItem(item)
			if err != nil {
				t.Fatal(err)
			}
			q, err := it.QwenImage(m.Cols)
			if err != nil || q.GridTHW != imgs[m.Image].GridTHW || q.DType != imgs[m.Image].DType ||
				!bytes.Equal(q.PixelValues, imgs[m.Image].PixelValues) {
				t.Fatalf("decoded %v %v", q.GridTHW, err)
			}
		})
	}
}

func TestQwenItemsRefuses(t *testing.T) {
	good := synthImages([][3]int64{{1, 2, 2}}, 1176)
	for name, imgs := range map[string][]QwenImage{
		"short pixel_values": {{GridTHW: [3]int64{1, 2, 2}, PixelValues: make([]byte, 10)}},
		"zero grid":          {{GridTHW: [3]int64{1, 0, 2}}},
		"negative grid":      {{GridTHW: [3]int64{1, -2, -2}, PixelValues: good[0].PixelValues}},
	} {
		if _, err := QwenItems(imgs, 1176); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := QwenItems(good, 1536); err == nil {
		t.Error("wrong row width accepted")
	}
	if _, err := QwenItems([]QwenImage{{GridTHW: good[0].GridTHW, PixelValues: good[0].PixelValues, DType: "float32"}}, 1176); err == nil {
		t.Error("bfloat16 bytes accepted as float32")
	}
	if _, err := QwenItems([]QwenImage{{GridTHW: good[0].GridTHW, PixelValues: good[0].PixelValues, DType: "int8"}}, 1176); err == nil {
		t.Error("an int8 pixel_values accepted")
	}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	if err := json.Unmarshal(readFile(t, name), v); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkQwenItems encodes a 1280x720 image's item on Qwen2.5-VL
// (grid [1,52,92]: 4,784 rows, 11.3 MB of bfloat16).
func BenchmarkQwenItems(b *testing.B) {
	imgs := synthImages([][3]int64{{1, 52, 92}}, 1176)
	b.SetBytes(int64(len(imgs[0].PixelValues)))
	for b.Loop() {
		if _, err := QwenItems(imgs, 1176); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFeaturesJSON writes that image's features object (base64 of
// the item included).
func BenchmarkFeaturesJSON(b *testing.B) {
	imgs := synthImages([][3]int64{{1, 52, 92}}, 1176)
	f, err := QwenImageFeatures([]Image{{Hash: "h", Placeholder: Placeholder{Offset: 15, Length: 1196}, Processed: imgs[0]}},
		1176, Options{Kwargs: true})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(imgs[0].PixelValues)))
	var buf []byte
	for b.Loop() {
		buf = f.AppendJSON(buf[:0])
	}
}

// itemCases are requests' images whose items' pixel values end at each of
// the three places a three-byte group can fall (the head's length varies
// with the grid, the row width and the dtype), with every dtype, tensors
// of several stream chunks and requests of one to four images.
var itemCases = []struct {
	grids [][3]int64
	cols  int
	dtype string
}{
	{[][3]int64{{1, 4, 6}}, 1176, ""},
	{[][3]int64{{1, 52, 92}, {1, 34, 46}}, 1176, ""},
	{[][3]int64{{1, 2, 2}, {2, 4, 6}, {1, 200, 2}}, 1536, "float32"},
	{[][3]int64{{1, 1, 1}}, 1, ""},
	{[][3]int64{{1, 1, 1}}, 1, "float32"},
	{[][3]int64{{1, 2, 2}, {1, 1, 3}}, 5, "float16"},
	{[][3]int64{{1, 1, 2}, {1, 70, 2}, {1, 2, 1}, {1, 2, 2}}, 7, ""},
}
