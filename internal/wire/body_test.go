package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// spliceString splices a writer of s.
func spliceString(b *Body, dst []byte, s string) []byte {
	return b.SpliceFrom(dst, len(s), func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	})
}

// TestBody: spliced writers' bytes land where the writer was when it
// spliced them, in order, at the start, between and at the end of its own
// bytes, and Len counts them.
func TestBody(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(b *Body) []byte
		want  string
	}{
		{"no splices", func(b *Body) []byte { return append(b.B, "abc"...) }, "abc"},
		{"start, middle, end", func(b *Body) []byte {
			dst := spliceString(b, b.B, "<")
			dst = append(dst, "ab"...)
			dst = spliceString(b, dst, "12")
			dst = spliceString(b, dst, "34")
			dst = append(dst, 'c')
			return spliceString(b, dst, ">")
		}, "<ab1234c>"},
		{"writers of several writes", func(b *Body) []byte {
			dst := b.SpliceFrom(b.B, 3, func(w io.Writer) error {
				_, err := io.WriteString(w, "<<<")
				return err
			})
			dst = append(dst, 'a')
			dst = spliceString(b, dst, "12")
			dst = b.SpliceFrom(dst, 4, func(w io.Writer) error {
				for _, s := range []string{"x", "", "yz", "w"} {
					if _, err := io.WriteString(w, s); err != nil {
						return err
					}
				}
				return nil
			})
			dst = b.SpliceFrom(dst, 0, func(w io.Writer) error { panic("an empty writer ran") })
			return append(dst, 'b')
		}, "<<<a12xyzwb"},
		{"empty splices", func(b *Body) []byte {
			dst := spliceString(b, append(b.B, 'a'), "")
			return append(spliceString(b, dst, ""), 'b')
		}, "ab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b Body
			b.B = tc.write(&b)
			var out bytes.Buffer
			n, err := b.WriteTo(&out)
			if err != nil || out.String() != tc.want || n != int64(len(tc.want)) || b.Len() != len(tc.want) {
				t.Fatalf("wrote %q (%d, %v), Len %d; want %q", out.String(), n, err, b.Len(), tc.want)
			}
			b.Reset()
			if b.Len() != 0 || len(b.splices) != 0 {
				t.Fatalf("after Reset: %d bytes, %d splices", b.Len(), len(b.splices))
			}
		})
	}
}

type failAfter struct{ n int }

func (w *failAfter) Write(p []byte) (int, error) {
	if w.n <= 0 {
		return 0, errors.New("closed")
	}
	w.n--
	return len(p), nil
}

// TestBodyWriteError: the first failing write stops the body.
func TestBodyWriteError(t *testing.T) {
	var b Body
	b.B = append(spliceString(&b, append(b.B, "ab"...), "cd"), "ef"...)
	n, err := b.WriteTo(&failAfter{n: 1})
	if err == nil || n != 2 {
		t.Fatalf("wrote %d, %v; want 2 and the error", n, err)
	}
}

// TestBodyWriterLength: a spliced writer that writes other than its length
// fails the body rather than writing one of the wrong length, and a
// writer's own error is returned as it is.
func TestBodyWriterLength(t *testing.T) {
	for _, s := range []string{"ab", "abcd"} {
		var b Body
		b.B = append(b.SpliceFrom(append(b.B, '{'), 3, func(w io.Writer) error {
			_, err := io.WriteString(w, s)
			return err
		}), '}')
		if _, err := b.WriteTo(io.Discard); err == nil {
			t.Errorf("a writer of %d bytes for 3 was written", len(s))
		}
	}
	closed := errors.New("closed")
	var b Body
	b.B = b.SpliceFrom(b.B, 3, func(w io.Writer) error { return closed })
	if _, err := b.WriteTo(io.Discard); !errors.Is(err, closed) {
		t.Errorf("the writer's error became %v", err)
	}
}
