package tokenizer

import "unicode/utf8"

// appendLossyUTF8 appends b to dst as valid UTF-8, replacing every maximal
// subpart of an ill-formed sequence with one U+FFFD, as Rust's
// String::from_utf8_lossy does. Go's utf8.DecodeRune reports one error per
// byte, which would produce more replacement characters.
func appendLossyUTF8(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			// ASCII runs are the common case; copy them in one go.
			j := i + 1
			for j < len(b) && b[j] < utf8.RuneSelf {
				j++
			}
			dst = append(dst, b[i:j]...)
			i = j
			continue
		}
		n := validPrefixLen(b[i:])
		if n > 0 {
			dst = append(dst, b[i:i+n]...)
			i += n
			continue
		}
		dst = append(dst, "\uFFFD"...)
		i += -n
	}
	return dst
}

// validPrefixLen inspects the sequence starting at b[0] (a non-ASCII byte).
// It returns the length of the sequence when it is well formed, or minus the
// length of its maximal ill-formed subpart (at least one byte).
func validPrefixLen(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return -1
	}
	for k := 1; k <= need; k++ {
		if k >= len(b) || b[k] < lo || b[k] > hi {
			return -k
		}
		lo, hi = 0x80, 0xBF
	}
	return need + 1
}

// lossyString converts b to a string with from_utf8_lossy semantics.
func lossyString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return string(appendLossyUTF8(make([]byte, 0, len(b)+8), b))
}

// validString returns s unchanged when it is valid UTF-8, or its lossy
// conversion: Rust strings are always valid, so the reference never sees
// invalid input and replacement characters are the closest equivalent.
func validString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string(appendLossyUTF8(make([]byte, 0, len(s)+8), []byte(s)))
}
