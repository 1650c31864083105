package tensorfile

import (
	"archive/zip"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testMax = 1 << 20

type golden struct {
	File  string `json:"file"`
	DType string `json:"dtype"`
	Shape []int  `json:"shape"`
	Hex   string `json:"hex"`
}

func readGolden(t *testing.T) []golden {
	t.Helper()
	raw, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g []golden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGoldens: every payload testdata/gen.py wrote (numpy's np.save; torch
// 2.x's archive layout with CPython's protocol-2 pickle) loads to the
// dtype, shape and C-order bytes numpy gives for it.
func TestGoldens(t *testing.T) {
	for _, g := range readGolden(t) {
		t.Run(g.File, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", g.File))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Load(data, testMax)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got.DType.String() != g.DType {
				t.Errorf("dtype %s, want %s", got.DType, g.DType)
			}
			if fmt.Sprint(got.Shape) != fmt.Sprint(g.Shape) && !(len(got.Shape) == 0 && len(g.Shape) == 0) {
				t.Errorf("shape %v, want %v", got.Shape, g.Shape)
			}
			if h := hex.EncodeToString(got.Data); h != g.Hex {
				t.Errorf("data %s, want %s", h, g.Hex)
			}
		})
	}
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// npyWith is a version 1.0 .npy file of header h (padded as numpy pads)
// and body.
func npyWith(h string, body []byte) []byte {
	b := []byte("\x93NUMPY\x01\x00")
	b = append(b, byte(len(h)), byte(len(h)>>8))
	b = append(b, h...)
	return append(b, body...)
}

// TestNpyRefused: each malformed or refused .npy gives numpy's (or
// torch.from_numpy's) message.
func TestNpyRefused(t *testing.T) {
	f32 := make([]byte, 24)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"version", []byte("\x93NUMPY\x04\x00\x00\x00"), "we only support format version (1,0), (2,0), and (3,0), not (4, 0)"},
		{"short magic", []byte("\x93NUMPY\x01"), "EOF: reading magic string, expected 8 bytes got 7"},
		{"short length", []byte("\x93NUMPY\x01\x00\x10"), "EOF: reading array header length, expected 2 bytes got 1"},
		{"short header", []byte("\x93NUMPY\x01\x00\x10\x00{}"), "EOF: reading array header, expected 16 bytes got 2"},
		{"not a literal", npyWith("{'descr': __import__('os')}\n", nil), "Cannot parse header: \"{'descr': __import__('os')}\\n\""},
		{"not a dict", npyWith("(1, 2)\n", nil), "Header is not a dictionary: (1, 2)"},
		{"keys", npyWith("{'descr': '<f4', 'shape': (2,)}\n", nil), "Header does not contain the correct keys: ['descr', 'shape']"},
		{"shape", npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}\n", nil), "shape is not valid: [2]"},
		{"fortran", npyWith("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}\n", nil), "fortran_order is not a valid bool: 0"},
		{"descr", npyWith("{'descr': 'zz', 'fortran_order': False, 'shape': (2,)}\n", nil), "descr is not a valid dtype descriptor: 'zz'"},
		{"object", npyWith("{'descr': '|O', 'fortran_order': False, 'shape': (2,)}\n", nil), "Object arrays cannot be loaded when allow_pickle=False"},
		{"short data", npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", f32[:10]), "EOF: reading array data, expected 24 bytes got 10"},
		{"big endian", npyWith("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }\n", f32),
			"given numpy array has byte order different from the native byte order. Conversion between byte orders is currently not supported."},
		{"string dtype", npyWith("{'descr': '<U2', 'fortran_order': False, 'shape': (3,), }\n", f32),
			"can't convert np.ndarray of type numpy.str_. " + fromNumpyTypes},
		{"negative", npyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3), }\n", f32), "negative dimension -1 in shape (-1, 3)"},
		{"too large", npyWith("{'descr': '<f8', 'fortran_order': False, 'shape': (1048576, 1048576), }\n", f32),
			"a tensor of shape (1048576, 1048576) and 8-byte elements is larger than the 1048576-byte limit"},
		{"header size", append([]byte("\x93NUMPY\x02\x00\x11\x27\x00\x00"), bytes.Repeat([]byte(" "), 10001)...),
			"Header info length (10001) is large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.data, testMax)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// rezip rewrites a golden archive with edit applied to each record.
func rezip(t *testing.T, data []byte, edit func(name string, b []byte) (string, []byte)) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(rc)
		rc.Close()
		name, body := edit(f.Name, b.Bytes())
		if name == "" {
			continue
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body)
	}
	zw.Close()
	return out.Bytes()
}

// TestTorchRefused: archives weights_only refuses, or that are not one
// plain dense tensor, are refused with a message saying why.
func TestTorchRefused(t *testing.T) {
	base := readTestdata(t, "pt_f32_2x3.pt")
	pkl := func(edit func(string) string) func(string, []byte) (string, []byte) {
		return func(name string, b []byte) (string, []byte) {
			if strings.HasSuffix(name, "/data.pkl") {
				return name, []byte(edit(string(b)))
			}
			return name, b
		}
	}
	drop := func(suffix string) func(string, []byte) (string, []byte) {
		return func(name string, b []byte) (string, []byte) {
			if strings.HasSuffix(name, suffix) {
				return "", nil
			}
			return name, b
		}
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"not an archive", []byte("hello world"), "image_embeds is neither a .npy file nor a torch.save zip archive"},
		{"legacy pickle", []byte("\x80\x02\x8a\x0alz\xfc\x9cF\xf9 j\xa8P\x19."), "image_embeds is neither a .npy file nor a torch.save zip archive"},
		{"broken zip", []byte("PK\x03\x04garbage"), "PytorchStreamReader failed reading zip archive"},
		{"os.system", rezip(t, base, pkl(func(s string) string {
			return strings.Replace(s, "ctorch._utils\n_rebuild_tensor_v2\n", "cos\nsystem\n", 1)
		})), "Weights only load failed. WeightsUnpickler error: Unsupported global: GLOBAL os.system was not an allowed global by default."},
		{"parameter", rezip(t, base, pkl(func(s string) string {
			return strings.Replace(s, "_rebuild_tensor_v2\n", "_rebuild_parameter\n", 1)
		})), "image_embeds must be a plain dense tensor saved with torch.save; the archive holds torch._utils._rebuild_parameter"},
		{"unknown opcode", rezip(t, base, pkl(func(s string) string { return "\x80\x02}." })), "Weights only load failed. WeightsUnpickler error: Unsupported operand 125"},
		{"truncated pickle", rezip(t, base, pkl(func(s string) string { return s[:40] })), "Weights only load failed. WeightsUnpickler error: pickle data was truncated"},
		{"not a tensor", rezip(t, base, pkl(func(s string) string { return "\x80\x02K\x05." })), "image_embeds must be a plain dense tensor saved with torch.save; the archive holds an int"},
		{"cuda", rezip(t, base, pkl(func(s string) string { return strings.Replace(s, "X\x03\x00\x00\x00cpu", "X\x03\x00\x00\x00gpu", 1) })),
			"Attempting to deserialize object on a CUDA device"},
		{"out of bounds", rezip(t, base, pkl(func(s string) string { return strings.Replace(s, "K\x00K\x02K\x03\x86", "K\x01K\x02K\x03\x86", 1) })),
			"setStorage: sizes [2, 3], strides [3, 1], storage offset 1, and itemsize 4 requiring a storage size of 28 are out of bounds for storage of size 24"},
		{"no data.pkl", rezip(t, base, drop("/data.pkl")), "PytorchStreamReader failed locating file data.pkl: file not found"},
		{"no version", rezip(t, base, drop("/version")), "PytorchStreamReader failed locating file version: file not found"},
		{"no storage", rezip(t, base, drop("/data/0")), "PytorchStreamReader failed locating file data/0: file not found"},
		{"short storage", rezip(t, base, func(name string, b []byte) (string, []byte) {
			if strings.HasSuffix(name, "/data/0") {
				return name, b[:20]
			}
			return name, b
		}), "PytorchStreamReader failed reading file data/0: 20 bytes, want 24 for 6 elements"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.data, testMax)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestTorchCap: a view larger than the cap is refused before its bytes
// are gathered (a stride-0 view can name far more than its storage holds).
func TestTorchCap(t *testing.T) {
	data := readTestdata(t, "pt_expanded_2x3.pt")
	if _, err := Load(data, 23); err == nil || !strings.Contains(err.Error(), "larger than the 23-byte limit") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Load(data, 24); err != nil {
		t.Fatal(err)
	}
}

func FuzzLoadNpy(f *testing.F) {
	for _, g := range readGolden(&testing.T{}) {
		if strings.HasSuffix(g.File, ".npy") {
			b, _ := os.ReadFile(filepath.Join("testdata", g.File))
			f.Add(b)
		}
	}
	f.Add(npyWith("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n", make([]byte, 24)))
	f.Fuzz(func(t *testing.T, data []byte) {
		data = append([]byte("\x93NUMPY"), data...)
		checkLoad(t, data)
	})
}

func FuzzLoadTorch(f *testing.F) {
	for _, g := range readGolden(&testing.T{}) {
		if strings.HasSuffix(g.File, ".pt") {
			b, _ := os.ReadFile(filepath.Join("testdata", g.File))
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkLoad(t, data) })
}

// FuzzPickle runs the pickle machine alone, where a zip's checksums do not
// stand between the fuzzer and the opcodes.
func FuzzPickle(f *testing.F) {
	for _, p := range goldenPickles(f) {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		u := unpickler{s: data}
		v, err := u.run()
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if rt, ok := v.(*rebuiltTensor); ok && len(rt.size) != len(rt.stride) {
			t.Fatalf("size %v and stride %v differ in rank", rt.size, rt.stride)
		}
	})
}

// goldenPickles are the data.pkl files of the torch goldens.
func goldenPickles(tb testing.TB) [][]byte {
	var out [][]byte
	for _, g := range readGolden(&testing.T{}) {
		if !strings.HasSuffix(g.File, ".pt") {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("testdata", g.File))
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			tb.Fatal(err)
		}
		for _, z := range zr.File {
			if strings.HasSuffix(z.Name, "/data.pkl") {
				rc, _ := z.Open()
				var p bytes.Buffer
				p.ReadFrom(rc)
				out = append(out, p.Bytes())
			}
		}
	}
	return out
}

// BenchmarkPickle runs the pickle machine over every golden data.pkl.
func BenchmarkPickle(b *testing.B) {
	pickles := goldenPickles(b)
	if len(pickles) == 0 {
		b.Fatal("no golden pickles")
	}
	for b.Loop() {
		for _, p := range pickles {
			u := unpickler{s: p}
			if _, err := u.run(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// checkLoad: Load either fails with an *Error or returns a tensor whose
// bytes are exactly its shape's, within the cap.
func checkLoad(t *testing.T, data []byte) {
	const max = 1 << 16
	got, err := Load(data, max)
	if err != nil {
		if _, ok := err.(*Error); !ok {
			t.Fatalf("error of type %T: %v", err, err)
		}
		return
	}
	if got.DType == 0 || len(got.Data) > max || len(got.Data) != got.NumElements()*got.DType.Size() {
		t.Fatalf("tensor %s %v with %d bytes", got.DType, got.Shape, len(got.Data))
	}
}
