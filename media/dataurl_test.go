package media

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
)

func TestParseDataURL(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nrest")
	b64 := base64.StdEncoding.EncodeToString(png)
	tests := []struct {
		name   string
		url    string
		max    int64
		want   []byte
		mtype  string
		status int
		kind   Kind
		msg    string
	}{
		{name: "png", url: "data:image/png;base64," + b64, want: png, mtype: "image/png"},
		{name: "prefix any case", url: "DaTa:image/png;base64," + b64, want: png, mtype: "image/png"},
		{name: "empty media type", url: "data:;base64,QUJD", want: []byte("ABC")},
		{name: "empty data", url: "data:image/png;base64,", want: []byte{}, mtype: "image/png"},
		{name: "non-zero trailing bits", url: "data:x;base64,QR==", want: []byte("A"), mtype: "x"},
		{name: "no comma", url: "data:image/png;base64", status: 400, kind: KindDataURL,
			msg: "not enough values to unpack (expected 2, got 1)"},
		{name: "no semicolon", url: "data:image/png," + b64, status: 400, kind: KindDataURL,
			msg: "not enough values to unpack (expected 2, got 1)"},
		{name: "not base64", url: "data:text/plain;charset=utf-8,hello", status: 501, kind: KindDataURLEncoding,
			msg: "Only base64 data URLs are supported for now."},
		{name: "parameter before base64", url: "data:image/png;charset=utf-8;base64," + b64, status: 501,
			kind: KindDataURLEncoding},
		{name: "base64 in other case", url: "data:image/png;BASE64," + b64, status: 501, kind: KindDataURLEncoding},
		{name: "newline inside", url: "data:image/png;base64,QUJD\nREVG", status: 400, kind: KindDataURL,
			msg: "Non-base64 digit found"},
		{name: "space inside", url: "data:image/png;base64,QUJD REVG", status: 400, kind: KindDataURL},
		{name: "url-safe alphabet", url: "data:image/png;base64,-_-_", status: 400, kind: KindDataURL},
		{name: "missing padding", url: "data:image/png;base64,QQ", status: 400, kind: KindDataURL,
			msg: "Incorrect padding"},
		{name: "padding inside", url: "data:image/png;base64,QQ==QUJD", status: 400, kind: KindDataURL,
			msg: "Incorrect padding"},
		{name: "three pads", url: "data:image/png;base64,Q===", status: 400, kind: KindDataURL},
		{name: "over the cap", url: "data:image/png;base64," + b64, max: int64(len(png) - 1), status: 400,
			kind: KindTooLarge},
		{name: "at the cap", url: "data:image/png;base64," + b64, max: int64(len(png)), want: png, mtype: "image/png"},
		{name: "far over the cap, refused before decoding", url: "data:x;base64," + strings.Repeat("QUJD", 1000),
			max: 10, status: 400, kind: KindTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			max := tc.max
			if max == 0 {
				max = DefaultMaxMediaBytes
			}
			got, err := ParseDataURL(tc.url, max)
			if tc.status != 0 {
				e, ok := AsError(err)
				if !ok {
					t.Fatalf("err = %v, want *Error", err)
				}
				if e.Status != tc.status || e.Kind != tc.kind || (tc.msg != "" && e.Message != tc.msg) {
					t.Fatalf("got %d %v %q, want %d %v %q", e.Status, e.Kind, e.Message, tc.status, tc.kind, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Data, tc.want) || got.MediaType != tc.mtype {
				t.Fatalf("got %q %q, want %q %q", got.MediaType, got.Data, tc.mtype, tc.want)
			}
		})
	}
}

func TestErrorTypes(t *testing.T) {
	_, err := ParseDataURL("data:a,b", 10)
	e, _ := AsError(err)
	if e.Type != "BadRequestError" || e.Status != http.StatusBadRequest || e.Param != "" {
		t.Fatalf("%+v", e)
	}
	_, err = ParseDataURL("data:a;utf8,b", 10)
	e, _ = AsError(err)
	if e.Type != "NotImplementedError" || e.Status != http.StatusNotImplemented {
		t.Fatalf("%+v", e)
	}
}

func FuzzParseDataURL(f *testing.F) {
	for _, s := range []string{"data:image/png;base64,QUJD", "data:;base64,", "DATA:a;base64,QR==", "data:a,b",
		"data:a;b;base64,QUJD", "data:x;base64,QUJD\n", "data:x;base64,Q===", "data:,;base64"} {
		f.Add(s, int64(8))
	}
	f.Fuzz(func(t *testing.T, url string, max int64) {
		if max < 0 || max > 1<<20 {
			max = 1 << 20
		}
		d, err := ParseDataURL(url, max)
		// Decoding into a reused buffer of stale bytes answers the same.
		stale := bytes.Repeat([]byte{0x5a}, len(url))
		if db, errb := parseDataURL(url, max, stale); !bytes.Equal(db.Data, d.Data) || db.MediaType != d.MediaType || fmt.Sprint(errb) != fmt.Sprint(err) {
			t.Fatalf("%.80q into a buffer: %q %v, into none: %q %v", url, db.Data, errb, d.Data, err)
		}
		if err != nil {
			if _, ok := AsError(err); !ok {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		if !hasDataPrefix(url) || int64(len(d.Data)) > max {
			t.Fatalf("accepted %q (%d bytes, max %d)", url, len(d.Data), max)
		}
		// What was accepted is base64 of the bytes, up to the bits after
		// the last digit: re-encoding and decoding gives them back.
		_, payload, _ := strings.Cut(url, ",")
		if base64.StdEncoding.DecodedLen(len(payload))-len(d.Data) > 2 {
			t.Fatalf("%q decoded to %d bytes", payload, len(d.Data))
		}
		again, err := base64.StdEncoding.Strict().DecodeString(base64.StdEncoding.EncodeToString(d.Data))
		if err != nil || !bytes.Equal(again, d.Data) {
			t.Fatalf("round trip of %q failed", payload)
		}
	})
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{"data:x", "http://a/b", "HTTPS://A.example/b", "file:///tmp/x", "ftp://x",
		"httpx://h", "http://[::1]:80/", "http://a b", "%zz", "file://host/p", "DaTa:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		c, err := classify(raw)
		if err != nil {
			if e, ok := AsError(err); !ok || e.Status != 400 {
				t.Fatalf("error %v", err)
			}
			return
		}
		isData := len(raw) >= 5 && strings.ToLower(raw[:5]) == "data:"
		if (c.kind == urlData) != isData {
			t.Fatalf("%q: data = %v", raw, c.kind == urlData)
		}
		if isData {
			return
		}
		if (c.kind == urlHTTP) != strings.HasPrefix(strings.ToLower(c.u.Scheme), "http") {
			t.Fatalf("%q: kind %v scheme %q", raw, c.kind, c.u.Scheme)
		}
		if c.kind == urlHTTP && c.host != strings.ToLower(c.host) {
			t.Fatalf("%q: host %q not lowercased", raw, c.host)
		}
	})
}

// checkFastBase64 is the differential check of the vector decoder: where it
// vouches for s, the checked decoder accepts s with the same bytes.
func checkFastBase64(t *testing.T, s string) {
	t.Helper()
	fast, ok := decodeBase64Fast(s, nil)
	want, err := decodeBase64Checked(s)
	if ok && (err != nil || !bytes.Equal(fast, want)) {
		t.Fatalf("%.80q: fast decoder gave %d bytes, checked: %d bytes, %v", s, len(fast), len(want), err)
	}
	// Into a reused buffer of stale bytes: the same answer, in the
	// buffer's storage when it holds the output, none of the stale bytes
	// handed out.
	for _, size := range []int{0, len(s)/4*3 - 1, len(s) / 4 * 3, len(s) + 64} {
		buf := bytes.Repeat([]byte{0xa5}, max(0, size))
		got, gotOK := decodeBase64Fast(s, buf)
		if gotOK != ok || !bytes.Equal(got, fast) {
			t.Fatalf("%.80q into %d stale bytes: %d bytes %v, into none: %d bytes %v", s, len(buf), len(got), gotOK, len(fast), ok)
		}
		if ok && len(got) > 0 && cap(buf) >= len(s)/4*3 && &got[0] != &buf[0] {
			t.Fatalf("%.80q: decoded outside a buffer of %d bytes", s, cap(buf))
		}
	}
	if err == nil && len(s) >= 64 && !ok {
		// Not wrong, but the fast path must not leave valid photos to the slow one.
		t.Fatalf("%.80q: valid, yet the fast decoder declined it", s)
	}
}

func TestDecodeBase64FastAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	valid := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	// Every kind of byte at every offset of a string long enough for the
	// vector loop, and the padding and trailing-bit edges.
	for _, n := range []int{0, 1, 2, 3, 45, 46, 47, 48, 96, 97, 98, 1000, 1001, 1002} {
		s := valid(n)
		checkFastBase64(t, s)
		if len(s) == 0 {
			continue
		}
		for _, pos := range []int{0, len(s) / 3, len(s) / 2, len(s) - 3, len(s) - 2, len(s) - 1} {
			for _, c := range []byte{'\n', '\r', '=', ' ', '-', '_', 0, 0x80, 0xff, '.'} {
				b := []byte(s)
				b[pos] = c
				checkFastBase64(t, string(b))
				checkFastBase64(t, s[:pos]+string(c)+s[pos:])
				checkFastBase64(t, s[:pos]+"\r\n"+s[pos:]+"\r\n")
			}
		}
		// Non-zero bits after the last digit, which pybase64 accepts.
		if strings.HasSuffix(s, "=") {
			b := []byte(s)
			i := strings.IndexByte(s, '=') - 1
			b[i] = 'Z'
			checkFastBase64(t, string(b))
		}
	}
}

func FuzzDecodeBase64Fast(f *testing.F) {
	for _, s := range []string{"QUJD", "QR==", "Q===", "QUJD\n", strings.Repeat("QUJD", 20), strings.Repeat("QUJD", 20) + "QR==",
		strings.Repeat("QUJD", 12) + "\r\n" + strings.Repeat("QUJD", 12) + "QQ=="} {
		f.Add(s)
	}
	f.Fuzz(checkFastBase64)
}

// BenchmarkParseDataURL decodes the data URL of a 180 KB photo.
func BenchmarkParseDataURL(b *testing.B) {
	raw := make([]byte, 180<<10)
	for i := range raw {
		raw[i] = byte(i * 7919 >> 3)
	}
	url := "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(raw)
	b.SetBytes(int64(len(url)))
	for b.Loop() {
		if _, err := ParseDataURL(url, 1<<30); err != nil {
			b.Fatal(err)
		}
	}
}
