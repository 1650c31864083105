package media

import (
	"encoding/base64"
	"strconv"
	"strings"
	"unsafe"

	asmbase64 "github.com/segmentio/asm/base64"
)

// DataURL is a parsed `data:` URL: the media type the client named (vLLM
// ignores it: the decoder sniffs the bytes) and the decoded bytes.
type DataURL struct {
	MediaType string
	Data      []byte
}

// hasDataPrefix is vLLM's `url[:5].lower() == "data:"`.
func hasDataPrefix(url string) bool {
	return len(url) >= 5 && strings.EqualFold(url[:5], "data:")
}

// ParseDataURL reads a `data:` URL as vLLM's MediaConnector._load_data_url
// and ImageMediaIO.load_base64 do: the text after "data:" up to the first
// comma is the spec, the spec's text after its first semicolon must be
// exactly "base64", and the data is standard base64 with its padding and no
// other characters (pybase64.b64decode(validate=True)). Data that would
// decode to more than maxBytes is refused before decoding. url must start
// with "data:" in any case.
func ParseDataURL(url string, maxBytes int64) (DataURL, error) {
	return parseDataURL(url, maxBytes, nil)
}

// parseDataURL is ParseDataURL decoding into buf's storage when it is
// large enough (else into a new slice).
func parseDataURL(url string, maxBytes int64, buf []byte) (DataURL, error) {
	if !hasDataPrefix(url) {
		return DataURL{}, badRequest(KindScheme, msgScheme)
	}
	spec, data, ok := strings.Cut(url[5:], ",")
	if !ok {
		return DataURL{}, badRequest(KindDataURL, msgUnpack(1))
	}
	mediaType, encoding, ok := strings.Cut(spec, ";")
	if !ok {
		return DataURL{}, badRequest(KindDataURL, msgUnpack(1))
	}
	if encoding != "base64" {
		return DataURL{}, &Error{Kind: KindDataURLEncoding, Status: 501, Type: typeNotImpl,
			Message: "Only base64 data URLs are supported for now."}
	}
	b, err := decodeCapped(data, maxBytes, buf)
	if err != nil {
		return DataURL{}, err
	}
	return DataURL{MediaType: mediaType, Data: b}, nil
}

// decodeStrictBase64 decodes what pybase64.b64decode(s, validate=True)
// accepts: the standard alphabet, length a multiple of four, '=' only as
// one or two final characters. The vector decoder answers almost every
// request; anything it does not vouch for goes through the checked decoder,
// which also words the error.
func decodeStrictBase64(s string, buf []byte) ([]byte, error) {
	if b, ok := decodeBase64Fast(s, buf); ok {
		return b, nil
	}
	return decodeBase64Checked(s)
}

// decodeBase64Fast decodes s with segmentio/asm's AVX2 decoder (NEON on
// arm64), about eight times the checked path on a data URL of a photo. Its
// tail is Go's decoder, which skips CR and LF; a skipped character leaves
// the output short of what s's length and padding promise, so only an
// output of exactly that length is trusted (ok). It decodes into buf's
// storage when that holds the output (a buffer reused request after
// request stays in the CPU's cache and is not zeroed again), else into a
// new slice.
func decodeBase64Fast(s string, buf []byte) ([]byte, bool) {
	if len(s)%4 != 0 {
		return nil, false
	}
	want := len(s) / 4 * 3
	switch {
	case strings.HasSuffix(s, "=="):
		want -= 2
	case strings.HasSuffix(s, "="):
		want--
	}
	b := buf[:0]
	if n := asmbase64.StdEncoding.DecodedLen(len(s)); cap(b) < n {
		b = make([]byte, n)
	}
	n, err := asmbase64.StdEncoding.Decode(b[:cap(b)], unsafe.Slice(unsafe.StringData(s), len(s)))
	if err != nil || n != want {
		return nil, false
	}
	return b[:n], true
}

// decodeBase64Checked is decodeStrictBase64 one byte at a time: Go's
// decoder skips CR and LF, which pybase64 refuses, so the alphabet is
// checked first.
func decodeBase64Checked(s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' {
			continue
		}
		if c == '=' && (i == len(s)-1 || i == len(s)-2 && s[len(s)-1] == '=') {
			continue
		}
		if c == '=' {
			return nil, badRequest(KindDataURL, "Incorrect padding")
		}
		return nil, badRequest(KindDataURL, "Non-base64 digit found")
	}
	if len(s)%4 != 0 {
		return nil, badRequest(KindDataURL, "Incorrect padding")
	}
	// The non-strict decoder accepts non-zero bits after the last digit, as
	// pybase64 does; the alphabet check above leaves it nothing else to skip.
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, badRequest(KindDataURL, "Incorrect padding")
	}
	return b, nil
}

const msgScheme = "The URL must be either a HTTP, data or file URL."

// msgUnpack is the ValueError Python raises when `a, b = s.split(x, 1)`
// finds no separator.
func msgUnpack(got int) string {
	return "not enough values to unpack (expected 2, got " + strconv.Itoa(got) + ")"
}

func msgTooLarge(max int64) string {
	return "The media is larger than --max-media-bytes (" + strconv.FormatInt(max, 10) + " bytes)."
}

// DecodeBase64 decodes an inline base64 payload (an image_embeds tensor)
// as vLLM's MediaIO.load_base64 does — pybase64.b64decode(validate=True) —
// refusing one that would decode to more than the fetcher's MaxMediaBytes
// before decoding it.
func (f *Fetcher) DecodeBase64(s string) ([]byte, error) {
	return decodeCapped(s, f.cfg.MaxMediaBytes, nil)
}

// decodeCapped is decodeStrictBase64 of s, refused when it would decode to
// more than max bytes (checked from its length first).
func decodeCapped(s string, max int64, buf []byte) ([]byte, error) {
	if n := base64.StdEncoding.DecodedLen(len(s)); int64(n) > max+2 {
		return nil, badRequest(KindTooLarge, msgTooLarge(max))
	}
	b, err := decodeStrictBase64(s, buf)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, badRequest(KindTooLarge, msgTooLarge(max))
	}
	return b, nil
}

// MaxMediaBytes is the fetcher's cap on one medium's bytes.
func (f *Fetcher) MaxMediaBytes() int64 { return f.cfg.MaxMediaBytes }
