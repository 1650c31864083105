// Package wire is vrender's JSON writer: append-style helpers that write
// exactly what Python's json.dumps(..., ensure_ascii=False,
// separators=(",", ":")) writes, which is what vLLM's JSONResponse and
// pydantic send. Response types build their bodies with these into one
// buffer, so no byte is validated or compacted a second time; a Body
// splices writers of megabytes (an image's base64, made as it is written)
// in between that buffer's bytes instead of building them in it.
package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// plain[c] is true for the ASCII bytes a JSON string holds unescaped.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendString appends s as json.dumps(s, ensure_ascii=False) writes it:
// UTF-8 (U+2028 and U+2029 included) kept raw, '"', '\\' and the control
// characters escaped, \n \r \t \b \f by name, others as \u00XX. A Python
// str cannot hold bytes that are not UTF-8; each such byte is written as
// U+FFFD, as a lossy decode would have made it.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	run := 0 // printable ASCII bytes in a row
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !plain[c] {
				dst = appendEscape(append(dst, s[start:i]...), c)
				i++
				start = i
				run = 0
				continue
			}
			// Printable ASCII other than '"' and '\\' is copied as it is.
			// After eight such bytes in a row, the rest of the run is
			// found by words: in escape-dense text (code, JSON held in a
			// string) runs end sooner, and CJK text has few, where word
			// tests would not pay.
			i++
			if run++; run == 8 {
				i = skipSafeWords(s, i, false)
				run = 0
			}
			continue
		}
		run = 0
		size := utf8Len(s[i:])
		if size == 0 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// skipSafeWords returns the offset of the first byte at or after i that
// is not printable ASCII other than '"', '\\' (and DEL, with del), or one
// of the last few, checking eight bytes at a time.
func skipSafeWords(s string, i int, del bool) int {
	for i+8 <= len(s) {
		w := load64(s, i)
		m := stringStops(w) | w&msb
		if del {
			d := w ^ (lsb * 0x7f)
			m |= (d - lsb) &^ d & msb
		}
		if m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	return i
}

// utf8Len is the length of the valid UTF-8 sequence b starts with, 0 if
// it starts with none, as utf8.DecodeRune decides; the two- and three-byte
// sequences of accented, Cyrillic and CJK text are checked inline.
func utf8Len(b string) int {
	if len(b) >= 3 {
		c, c1 := b[0], b[1]
		switch {
		case c >= 0xC2 && c <= 0xDF:
			if c1 >= 0x80 && c1 <= 0xBF {
				return 2
			}
			return 0
		case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
			if c1 >= 0x80 && c1 <= 0xBF && b[2] >= 0x80 && b[2] <= 0xBF {
				return 3
			}
			return 0
		}
	}
	r, size := utf8.DecodeRuneInString(b)
	if r == utf8.RuneError && size == 1 {
		return 0
	}
	return size
}

// decodeRune is utf8.DecodeRuneInString with the two- and three-byte
// sequences of accented, Cyrillic and CJK text decoded inline.
func decodeRune(s string) (rune, int) {
	if len(s) >= 3 {
		c, c1 := s[0], s[1]
		switch {
		case c >= 0xC2 && c <= 0xDF && c1 >= 0x80 && c1 <= 0xBF:
			return rune(c&0x1F)<<6 | rune(c1&0x3F), 2
		case (c >= 0xE1 && c <= 0xEC || c == 0xEE || c == 0xEF) && c1 >= 0x80 && c1 <= 0xBF && s[2] >= 0x80 && s[2] <= 0xBF:
			return rune(c&0x0F)<<12 | rune(c1&0x3F)<<6 | rune(s[2]&0x3F), 3
		}
	}
	return utf8.DecodeRuneInString(s)
}

// load64 is the eight bytes of s at i as a little-endian word (the
// compiler makes it one load).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// AppendStringASCII appends s as json.dumps(s) (ensure_ascii=True) writes
// it: the escapes of AppendString, and every character outside printable
// ASCII (DEL included) as \uXXXX, a surrogate pair above U+FFFF.
func AppendStringASCII(dst []byte, s string) []byte {
	dst = append(dst, '"')
	run := 0 // printable ASCII bytes in a row
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf && c != 0x7f && plain[c] {
			// Printable ASCII other than '"' and '\\' is copied as it is;
			// after eight such bytes in a row, the rest of the run is
			// found by words and copied whole (as in AppendString).
			dst = append(dst, c)
			i++
			if run++; run == 8 {
				j := skipSafeWords(s, i, true)
				dst = append(dst, s[i:j]...)
				i, run = j, 0
			}
			continue
		}
		run = 0
		if c >= 0xE1 && c <= 0xEF && c != 0xED && i+2 < len(s) && s[i+1]&0xC0 == 0x80 && s[i+2]&0xC0 == 0x80 {
			// A three-byte character (CJK text), decoded here: a call to
			// decodeRune per character made CJK slower than ranging.
			// E0 and ED, whose second byte has a narrower range, go below.
			dst = appendU4(dst, rune(c&0x0F)<<12|rune(s[i+1]&0x3F)<<6|rune(s[i+2]&0x3F))
			i += 3
			continue
		}
		// As ranging over s does: an invalid byte is U+FFFD, one byte long.
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = decodeRune(s[i:])
		}
		i += size
		switch {
		case r < utf8.RuneSelf && r != 0x7f:
			dst = appendEscape(dst, byte(r))
		case r >= 0x10000:
			r -= 0x10000
			dst = appendU4(dst, 0xd800+(r>>10))
			dst = appendU4(dst, 0xdc00+(r&0x3ff))
		default:
			dst = appendU4(dst, r)
		}
	}
	return append(dst, '"')
}

// appendEscape appends the escape of the ASCII byte c that json.dumps
// writes.
func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// AppendRune appends r as json.dumps(ensure_ascii=False) writes it inside a
// string; a lone surrogate (which a \u escape can name) becomes U+FFFD.
func AppendRune(dst []byte, r rune) []byte {
	if r < 0x20 || r == '"' || r == '\\' {
		return appendEscape(dst, byte(r))
	}
	if r >= 0xD800 && r <= 0xDFFF {
		r = utf8.RuneError
	}
	return utf8.AppendRune(dst, r)
}

func appendU4(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// AppendInts appends ids as a JSON list, the decimal text
// strconv.AppendInt writes for each. It is the token_ids writer of every
// render and generate body (thousands of ids), so it formats two digits at
// a time straight into dst, which it grows once for the expected length
// rather than once per id.
func AppendInts(dst []byte, ids []int) []byte {
	dst = append(dst, '[')
	// b is dst to its capacity; pos is dst's length within it.
	b, pos := dst[:cap(dst)], len(dst)
	for i, id := range ids {
		if len(b)-pos < maxIntLen+1 {
			// Room for the rest at seven bytes an id (six digits and a
			// comma cover a 152k vocabulary); checked again as it fills.
			b = slices.Grow(b[:pos], maxIntLen+1+7*(len(ids)-i))
			b = b[:cap(b)]
		}
		if i > 0 {
			b[pos] = ','
			pos++
		}
		if id < 0 {
			pos = len(strconv.AppendInt(b[:pos], int64(id), 10))
			continue
		}
		u := uint64(id)
		if u < 1e8 {
			// Token ids: four digits per table word, without branches on
			// the id's length (random ids would mispredict them). A store
			// may run up to three bytes past the id, inside the room kept
			// above.
			hi, lo := u/1e4, u%1e4
			hw, lw := trimQuads[hi], trimQuads[lo]
			if hi == 0 {
				hw = 0
			} else {
				lw = uint64(digitQuads[lo]) | 4<<32
			}
			binary.LittleEndian.PutUint32(b[pos:], uint32(hw))
			pos += int(hw >> 32)
			binary.LittleEndian.PutUint32(b[pos:], uint32(lw))
			pos += int(lw >> 32)
			continue
		}
		// Two digits at a time from the right, inline: a call per id
		// costs a third of the time here.
		pos += decimalLen(u)
		j := pos
		for u >= 100 {
			q := u / 100
			r := (u - q*100) * 2
			j -= 2
			b[j+1] = digitPairs[r+1]
			b[j] = digitPairs[r]
			u = q
		}
		if u >= 10 {
			b[j-1] = digitPairs[u*2+1]
			b[j-2] = digitPairs[u*2]
		} else {
			b[j-1] = byte('0' + u)
		}
	}
	return append(b[:pos], ']')
}

// digitQuads holds "0000" to "9999" as little-endian words: the first
// digit in the low byte.
var digitQuads = func() (t [1e4]uint32) {
	for i := range t {
		t[i] = uint32('0'+i/1000) | uint32('0'+i/100%10)<<8 | uint32('0'+i/10%10)<<16 | uint32('0'+i%10)<<24
	}
	return t
}()

// trimQuads holds 0 to 9999 without leading zeros: the digits as a
// little-endian word in the low 32 bits, their number above.
var trimQuads = func() (t [1e4]uint64) {
	for i := range t {
		n := len(strconv.Itoa(i))
		t[i] = uint64(digitQuads[i]>>(32-8*n)) | uint64(n)<<32
	}
	return t
}()

// maxIntLen is the longest decimal int: len("-9223372036854775808").
const maxIntLen = 20

// digitPairs holds "00" to "99", for writing two digits at a time.
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// pow10 holds 10^0 to 10^19.
var pow10 = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

// decimalLen is the number of decimal digits of u.
func decimalLen(u uint64) int {
	// log10(2) ~ 1233/4096 turns the bit length into the digit count or
	// one less than it.
	n := bits.Len64(u|1) * 1233 >> 12
	if u >= pow10[n] {
		n++
	}
	return max(n, 1)
}

// AppendStrings appends items as a JSON list of strings.
func AppendStrings(dst []byte, items []string) []byte {
	dst = append(dst, '[')
	for i, s := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, s)
	}
	return append(dst, ']')
}

// AppendBool appends true or false.
func AppendBool(dst []byte, b bool) []byte { return strconv.AppendBool(dst, b) }

// AppendRaw appends a JSON value held raw (a client's or an engine's
// object passed through), compacted as json.dumps would re-serialise it
// (separators without spaces) and with the escapes \u2028 and \u2029
// written as the raw characters, as Python does. An empty raw value is
// null; an invalid one is an error.
func AppendRaw(dst, raw []byte) ([]byte, error) {
	if len(raw) == 0 {
		return append(dst, "null"...), nil
	}
	n := len(dst)
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return dst, err
	}
	dst = buf.Bytes()
	if bytes.Contains(dst[n:], []byte(`\u202`)) {
		dst = append(dst[:n], UnescapeLineSeparators(dst[n:])...)
	}
	return dst, nil
}

// UnescapeLineSeparators rewrites the escapes \u2028 and \u2029 (which
// encoding/json writes for JavaScript's sake) as the raw characters. An
// escaped backslash followed by "u2028" is text, not an escape, so escapes
// are skipped pairwise. b is returned unchanged when it holds neither.
func UnescapeLineSeparators(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u202`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			out = append(out, c)
			continue
		}
		if b[i+1] == 'u' && i+5 < len(b) && string(b[i+2:i+5]) == "202" && (b[i+5] == '8' || b[i+5] == '9') {
			if b[i+5] == '8' {
				out = append(out, "\u2028"...)
			} else {
				out = append(out, "\u2029"...)
			}
			i += 5
			continue
		}
		out = append(out, c, b[i+1])
		i++
	}
	return out
}
