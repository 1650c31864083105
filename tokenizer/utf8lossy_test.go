package tokenizer

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLossyUTF8(t *testing.T) {
	// Expected values follow Rust's String::from_utf8_lossy (checked through
	// the reference's ByteLevel decoder, which applies it).
	tests := []struct {
		name, in, want string
	}{
		{"valid", "héllo €😀", "héllo €😀"},
		{"truncated three-byte sequence is one replacement", "\xe2\x82a", "\ufffda"},
		{"truncated four-byte sequence", "\xf0\x9f\x98", "\ufffd"},
		{"lone continuation bytes", "\x80\xbf", "\ufffd\ufffd"},
		{"surrogate encoding", "\xed\xa0\x80", "\ufffd\ufffd\ufffd"},
		{"overlong and invalid bytes", "\xc0\xaf\xff", "\ufffd\ufffd\ufffd"},
		{"overlong three-byte", "\xe0\x80\x80", "\ufffd\ufffd\ufffd"},
		{"above U+10FFFF", "\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"},
		{"F4 8F is the last valid prefix", "\xf4\x8f\xbf", "\ufffd"},
		{"invalid after valid prefix", "\xe2\x28\xa1", "\ufffd(\ufffd"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := lossyString([]byte(tc.in)); got != tc.want {
				t.Errorf("lossyString(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestLossyUTF8AgreesWithStdlibOnValidRuns: whatever the replacement count,
// the output is valid and keeps every valid rune of the input in order.
func TestLossyUTF8Properties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for i := 0; i < 2000; i++ {
		b := make([]byte, rng.IntN(24))
		for j := range b {
			b[j] = byte(rng.IntN(256))
		}
		got := lossyString(b)
		if !utf8.ValidString(got) {
			t.Fatalf("%q: invalid output %q", b, got)
		}
		if utf8.Valid(b) && got != string(b) {
			t.Fatalf("%q: valid input changed to %q", b, got)
		}
		want := strings.ToValidUTF8(string(b), "")
		if stripped := strings.ReplaceAll(got, "\ufffd", ""); stripped != strings.ReplaceAll(want, "\ufffd", "") {
			t.Fatalf("%q: kept runes %q, want %q", b, stripped, want)
		}
	}
}
