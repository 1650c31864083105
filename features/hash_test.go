package features

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zeebo/blake3"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/wire"
)

// TestBlake3Vectors checks the library against BLAKE3's official vectors
// (the shared golden copy).
func TestBlake3Vectors(t *testing.T) {
	path := filepath.Join(testenv.SharedDir(t), "multimodal", "golden", "blake3_vectors.json")
	if _, err := os.Stat(path); err != nil {
		testenv.Missing(t, path, "the shared multimodal goldens")
	}
	var v struct {
		Hash []struct {
			InputLen int    `json:"input_len"`
			Hex      string `json:"hex"`
		} `json:"hash"`
	}
	if err := jsonUnmarshalFile(path, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Hash) < 4 {
		t.Fatalf("%d vectors", len(v.Hash))
	}
	for _, c := range v.Hash {
		in := make([]byte, c.InputLen)
		for i := range in {
			in[i] = byte(i % 251)
		}
		sum := blake3.Sum256(in)
		if got := hex.EncodeToString(sum[:]); got != c.Hex {
			t.Errorf("len %d: %s, want %s", c.InputLen, got, c.Hex)
		}
		// The Hasher's streaming writes give the same digest.
		h := Blake3.new()
		h.Write(in[:len(in)/2])
		h.Write(in[len(in)/2:])
		if got := hex.EncodeToString(h.Sum(nil)); got != c.Hex {
			t.Errorf("len %d streamed: %s", c.InputLen, got)
		}
	}
}

// TestImageHash checks ImageHash against the byte streams gen_fixtures.py
// builds from bf578e1's hasher.py: the sha256 digest end to end, and blake3
// of the Python stream against the default algorithm.
func TestImageHash(t *testing.T) {
	var fx struct {
		FileHex string `json:"file_hex"`
		Cases   []struct {
			Name      string  `json:"name"`
			ModelID   string  `json:"model_id"`
			UUID      *string `json:"uuid"`
			Kwargs    *string `json:"mm_processor_kwargs"`
			StreamHex *string `json:"stream_hex"`
			SHA256    string  `json:"hash_sha256"`
		} `json:"cases"`
	}
	readJSON(t, "hashes.json", &fx)
	file, _ := hex.DecodeString(fx.FileHex)
	if len(fx.Cases) < 8 {
		t.Fatalf("%d cases", len(fx.Cases))
	}
	for _, c := range fx.Cases {
		t.Run(c.Name, func(t *testing.T) {
			var kw *wire.Node
			if c.Kwargs != nil {
				var err error
				if kw, err = wire.Parse([]byte(*c.Kwargs)); err != nil {
					t.Fatal(err)
				}
			}
			checkHash(t, c.SHA256, c.StreamHex, func(h Hasher) (string, error) {
				h.ModelID = c.ModelID
				return h.ImageHash(file, c.UUID, kw)
			})
		})
	}
}

// checkHash checks a hash function against a fixture: sha256 end to end,
// and the default blake3 against the Python stream (or the sha256 value,
// a uuid used verbatim, when there is no stream).
func checkHash(t *testing.T, sha256 string, streamHex *string, hash func(Hasher) (string, error)) {
	t.Helper()
	got, err := hash(Hasher{Algorithm: SHA256})
	if err != nil || got != sha256 {
		t.Fatalf("sha256: %q %v, want %q", got, err, sha256)
	}
	got, err = hash(Hasher{})
	if err != nil {
		t.Fatal(err)
	}
	want := sha256
	if streamHex != nil {
		stream, _ := hex.DecodeString(*streamHex)
		sum := blake3.Sum256(stream)
		want = hex.EncodeToString(sum[:])
	}
	if got != want {
		t.Fatalf("blake3: %s, want %s", got, want)
	}
}

// parseFrame splits an ImageHashFramed frame into its algorithm, prefix
// and suffix.
func parseFrame(t testing.TB, frame []byte) (alg Algorithm, prefix, suffix []byte) {
	t.Helper()
	next := func() []byte {
		if len(frame) < 8 || binary.LittleEndian.Uint64(frame) > uint64(len(frame)-8) {
			t.Fatalf("frame %q: bad length", frame)
		}
		n := binary.LittleEndian.Uint64(frame)
		b := frame[8 : 8+n]
		frame = frame[8+n:]
		return b
	}
	alg = Algorithm(next())
	if len(frame) < 8 || binary.LittleEndian.Uint64(frame) > uint64(len(frame)-8) {
		t.Fatalf("frame: bad prefix length")
	}
	n := binary.LittleEndian.Uint64(frame)
	return alg, frame[8 : 8+n], frame[8+n:]
}

// checkFrame holds ImageHashFramed to the premise a cache keying on
// (frame, hash) needs: the hashed stream is prefix ‖ file ‖ suffix with
// the frame's prefix and suffix, which do not depend on file. It returns
// the stream.
func checkFrame(t testing.TB, h Hasher, file []byte, kw *wire.Node) []byte {
	t.Helper()
	hash, frame, err := h.ImageHashFramed(file, nil, kw)
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := h.ImageHash(file, nil, kw); err != nil || plain != hash {
		t.Fatalf("ImageHashFramed %s, ImageHash %s %v", hash, plain, err)
	}
	alg, prefix, suffix := parseFrame(t, frame)
	if want := cmp.Or(h.Algorithm, Blake3); alg != want {
		t.Fatalf("frame algorithm %q, want %q", alg, want)
	}
	stream := slices.Concat(prefix, file, suffix)
	d := alg.new()
	d.Write(stream)
	if got := hex.EncodeToString(d.Sum(nil)); got != hash {
		t.Fatalf("%s(prefix ‖ file ‖ suffix) = %s, mm_hash %s", alg, got, hash)
	}
	other := append(slices.Clip(file), "another file"...)
	if _, f2, err := h.ImageHashFramed(other, nil, kw); err != nil || !bytes.Equal(f2, frame) {
		t.Fatalf("the frame depends on the file: %q, %q (%v)", frame, f2, err)
	}
	return stream
}

// TestImageHashFrame: for every fixture without a uuid, the frame's
// prefix ‖ file ‖ suffix is the byte stream bf578e1's hasher.py builds
// (gen_fixtures.py), for blake3 and sha256; with a uuid there is no frame.
// If vLLM's hash input changed shape (the file no longer one contiguous
// run between parts that do not depend on it), this fails.
func TestImageHashFrame(t *testing.T) {
	var fx struct {
		FileHex string `json:"file_hex"`
		Cases   []struct {
			Name      string  `json:"name"`
			ModelID   string  `json:"model_id"`
			UUID      *string `json:"uuid"`
			Kwargs    *string `json:"mm_processor_kwargs"`
			StreamHex *string `json:"stream_hex"`
		} `json:"cases"`
	}
	readJSON(t, "hashes.json", &fx)
	file, _ := hex.DecodeString(fx.FileHex)
	framed := 0
	for _, c := range fx.Cases {
		var kw *wire.Node
		if c.Kwargs != nil {
			var err error
			if kw, err = wire.Parse([]byte(*c.Kwargs)); err != nil {
				t.Fatal(err)
			}
		}
		for _, alg := range []Algorithm{"", SHA256, SHA512} {
			h := Hasher{ModelID: c.ModelID, Algorithm: alg}
			if c.UUID != nil {
				if _, frame, err := h.ImageHashFramed(file, c.UUID, kw); err != nil || frame != nil {
					t.Fatalf("%s: a uuid's hash has frame %q (%v)", c.Name, frame, err)
				}
				continue
			}
			stream := checkFrame(t, h, file, kw)
			if c.StreamHex == nil {
				t.Fatalf("%s: no stream in the fixture", c.Name)
			}
			if want, _ := hex.DecodeString(*c.StreamHex); !bytes.Equal(stream, want) {
				t.Fatalf("%s: prefix ‖ file ‖ suffix is not hasher.py's stream:\n%x\n%x", c.Name, stream, want)
			}
			framed++
		}
	}
	if framed < 6 {
		t.Fatalf("%d framed cases", framed)
	}
}

// FuzzImageHashFrame: any file under any kwargs object the hasher takes
// hashes as prefix ‖ file ‖ suffix with a frame that does not depend on it.
func FuzzImageHashFrame(f *testing.F) {
	f.Add([]byte("\x89PNG"), []byte(`{"max_pixels": 1000, "a": [1, "x", null], "z": {"k": 1.5}}`))
	f.Add([]byte{}, []byte(`{}`))
	f.Fuzz(func(t *testing.T, file, kwargs []byte) {
		kw, err := wire.Parse(kwargs)
		if err != nil {
			return
		}
		if _, err := (Hasher{ModelID: "m"}).ImageHash(file, nil, kw); err != nil {
			return
		}
		checkFrame(t, Hasher{ModelID: "m"}, file, kw)
	})
}

func TestImageHashRefuses(t *testing.T) {
	for _, kw := range []string{`{"image": 1}`, `{"model_id": "x"}`, `{"n": 18446744073709551616}`,
		`{"n": -9223372036854775809}`} {
		n, err := wire.Parse([]byte(kw))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := (Hasher{ModelID: "m"}).ImageHash([]byte("x"), nil, n); err == nil {
			t.Errorf("%s: accepted", kw)
		}
	}
	for _, s := range []string{"", "BLAKE3", "sha256", "Sha512"} {
		if _, err := ParseAlgorithm(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseAlgorithm("md5"); err == nil {
		t.Error("md5 accepted")
	}
}

func BenchmarkImageHash1MB(b *testing.B) {
	file := make([]byte, 1<<20)
	h := Hasher{ModelID: "Qwen/Qwen2.5-VL-3B-Instruct"}
	b.SetBytes(int64(len(file)))
	for b.Loop() {
		if _, err := h.ImageHash(file, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}
