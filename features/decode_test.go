package features

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

// base64Cases are texts around the fast decoder's edges: its vector loop
// takes blocks of at least 45 bytes and hands the rest, or whatever it
// stops at (padding, CR/LF, a byte outside the alphabet), to Go's decoder.
func base64Cases() []string {
	long := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xfb, 0xff, 0x00, 0x7e, 0x3f}, 300))
	return []string{
		"", "=", "==", "QQ", "QQ==", "QUI=", "QUJD", "QUJD\n", "QU\r\nJD", "QQ=\n=", "QR==", "QUJ=",
		long, long[:len(long)-4], long + "\n", long[:100] + "\n" + long[100:], long[:64] + "*" + long[65:],
		long[:60] + "=" + long[61:], long[:len(long)-2] + "==", strings.Repeat("A", 48), strings.Repeat("A", 49),
		strings.Repeat("/", 96) + "+w==", long[:len(long)-1] + "\x00",
	}
}

// TestDecodeBase64AsGo: the fast decoder answers as Go's standard one
// (which the features reader used): the same bytes, a nil-ness that
// tells an empty item from a null one, an error for the same texts.
func TestDecodeBase64AsGo(t *testing.T) {
	for _, s := range base64Cases() {
		checkBase64AsGo(t, s)
	}
}

func FuzzDecodeBase64AsGo(f *testing.F) {
	for _, s := range base64Cases() {
		f.Add(s)
	}
	f.Fuzz(checkBase64AsGo)
}

func checkBase64AsGo(t *testing.T, s string) {
	want, wantErr := base64.StdEncoding.DecodeString(s)
	got, err := DecodeBase64(s)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, Go's decoder %v", s, err, wantErr)
	}
	if err == nil && (!bytes.Equal(got, want) || (got == nil) != (want == nil)) {
		t.Fatalf("%q: %x, Go's decoder %x", s, got, want)
	}
}
