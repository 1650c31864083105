package features

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/wire"
)

// pieceSource writes its bytes in pieces of piece bytes (the last shorter),
// stopping at the writer's first error, as vision.Prepared does.
type pieceSource struct {
	b     []byte
	piece int
}

func (s pieceSource) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for p := s.b; len(p) > 0; {
		k, err := w.Write(p[:min(s.piece, len(p))])
		n += int64(k)
		if err != nil {
			return n, err
		}
		p = p[k:]
	}
	return n, nil
}

// recorder keeps what is written to it and the length of each write.
type recorder struct {
	bytes.Buffer
	writes []int
}

func (r *recorder) Write(p []byte) (int, error) {
	r.writes = append(r.writes, len(p))
	return r.Buffer.Write(p)
}

// TestPendingAsRaw is the differential test of items whose pixel values
// are made as the item is written against items of raw pixel values (the
// buffered path): the features JSON copied (AppendJSON) and streamed
// through a body (AppendBody, WriteTo) is the same byte for byte, over the
// three residues of the head, every dtype, sources writing in pieces from
// one byte up to the whole tensor, tensors of several chunks, and requests
// mixing raw and pending images.
func TestPendingAsRaw(t *testing.T) {
	residues := map[int]bool{}
	for _, c := range itemCases {
		raw := synthImagesOf(c.grids, c.cols, c.dtype)
		plain := make([]Image, len(raw))
		for k, q := range raw {
			plain[k] = Image{Hash: "h", Placeholder: Placeholder{Offset: 2 * k, Length: 1}, Processed: q}
			residues[(len(qwenItemHead(q, c.cols))+len(q.PixelValues))%3] = true
		}
		want, err := QwenImageFeatures(plain, c.cols, Options{Kwargs: true, Metadata: true})
		if err != nil {
			t.Fatal(err)
		}
		wantJSON := want.AppendJSON(nil)
		// mixes: every image pending; pending and raw in turn.
		for mix := range 2 {
			for _, piece := range []int{1, 2, 3, 5, 2352, 32 << 10, 1 << 30} {
				if piece < 64 && len(wantJSON) > 1<<20 {
					continue
				}
				name := fmt.Sprintf("%v cols %d %q mix %d pieces of %d", c.grids, c.cols, c.dtype, mix, piece)
				imgs := make([]Image, len(raw))
				for i, q := range raw {
					imgs[i] = plain[i]
					if mix == 0 || i%2 == 0 {
						imgs[i].Processed = QwenImage{GridTHW: q.GridTHW, DType: q.DType,
							Pending: &PendingPixels{Len: len(q.PixelValues), Source: pieceSource{q.PixelValues, piece}}}
					}
				}
				got, err := QwenImageFeatures(imgs, c.cols, Options{Kwargs: true, Metadata: true})
				if err != nil {
					t.Fatal(err)
				}
				if g := got.AppendJSON(nil); !bytes.Equal(g, wantJSON) {
					i := testenv.FirstDiff(g, wantJSON)
					t.Fatalf("%s: copied JSON differs at byte %d", name, i)
				}
				var body wire.Body
				body.B = got.AppendBody([]byte("{"), &body)
				var rec recorder
				if n, err := body.WriteTo(&rec); err != nil || !bytes.Equal(rec.Bytes()[1:], wantJSON) || body.Len() != rec.Len() || int(n) != rec.Len() {
					t.Fatalf("%s: streamed body differs (%v)", name, err)
				}
				if len(body.B) > 1+len(wantJSON)-got.SplicedLen() || got.MaxJSONLen() != want.MaxJSONLen() {
					t.Fatalf("%s: body holds %d bytes, spliced %d of %d; bound %d against %d",
						name, len(body.B), got.SplicedLen(), len(wantJSON), got.MaxJSONLen(), want.MaxJSONLen())
				}
				for _, n := range rec.writes {
					if mix == 0 && n > streamChunk+streamPiece {
						t.Fatalf("%s: a write of %d bytes", name, n)
					}
				}
				for i := range imgs {
					g, w := got.Modalities[0].Kwargs[i], want.Modalities[0].Kwargs[i]
					if !bytes.Equal(g.Bytes(), w.Bytes()) || g.Len() != w.Len() {
						t.Fatalf("%s: item %d's bytes differ", name, i)
					}
				}
			}
		}
	}
	if len(residues) != 3 {
		t.Fatalf("the cases end the pixel values only at residues %v", residues)
	}
}

// failAfter is a writer that fails once it has taken n bytes.
type failAfter struct{ n int }

var errWriter = errors.New("client went away")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errWriter
	}
	f.n -= len(p)
	return len(p), nil
}

// countingSource is pieceSource counting the bytes its writer took.
type countingSource struct {
	pieceSource
	took *int64
}

func (s countingSource) WriteTo(w io.Writer) (int64, error) {
	n, err := s.pieceSource.WriteTo(w)
	*s.took = n
	return n, err
}

// TestPendingWriteFails: a writer's error stops the source within a chunk
// of where it failed and is returned; a source that writes short or long
// is an error, never a body of the wrong length.
func TestPendingWriteFails(t *testing.T) {
	q := synthImages([][3]int64{{1, 52, 92}}, 1176)[0]
	plain := features(t, q)
	// The item's base64 starts after the bytes before it.
	item := bytes.Index(plain.AppendJSON(nil), []byte(`"kwargs_data":{"image":["`)) + len(`"kwargs_data":{"image":["`)
	for _, at := range []int{item, item + 100, item + streamChunk, item + 3*streamChunk} {
		var took int64
		p := &PendingPixels{Len: len(q.PixelValues), Source: countingSource{pieceSource{q.PixelValues, 32 << 10}, &took}}
		f := features(t, QwenImage{GridTHW: q.GridTHW, Pending: p})
		var body wire.Body
		body.B = f.AppendBody(nil, &body)
		if _, err := body.WriteTo(&failAfter{n: at}); !errors.Is(err, errWriter) {
			t.Fatalf("fail at %d: %v", at, err)
		}
		if took > int64(at)+2*streamChunk {
			t.Errorf("fail at %d: the source went on to %d bytes", at, took)
		}
	}
	for _, n := range []int{len(q.PixelValues) - 1, len(q.PixelValues) + 1} {
		b := append(bytes.Clone(q.PixelValues), 0)[:n]
		f := features(t, QwenImage{GridTHW: q.GridTHW, Pending: &PendingPixels{Len: len(q.PixelValues), Source: pieceSource{b, 4096}}})
		var body wire.Body
		body.B = f.AppendBody(nil, &body)
		if _, err := body.WriteTo(io.Discard); err == nil {
			t.Errorf("a source of %d bytes for %d was written", n, len(q.PixelValues))
		}
	}
}

// features is the features of one image with kwargs.
func features(t *testing.T, q QwenImage) Features {
	t.Helper()
	f, err := QwenImageFeatures([]Image{{Hash: "h", Placeholder: Placeholder{Length: 1}, Processed: q}}, 1176, Options{Kwargs: true})
	if err != nil {
		t.Fatal(err)
	}
	return f
}
