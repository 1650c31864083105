package tokenizer

import "unicode/utf8"

// GPT-2's byte-level alphabet maps every byte to a printable rune so that
// byte sequences can live in a JSON vocabulary: printable Latin-1 bytes map
// to themselves and the 68 others to U+0100 onwards, in byte order.
var (
	byteToRune [256]rune
	// runeToByte is indexed by rune (all mapped runes are below 0x144);
	// byteLevelRuneLimit marks which entries are meaningful.
	runeToByte    [byteLevelRuneLimit]byte
	runeIsMapped  [byteLevelRuneLimit]bool
	byteLevelUTF8 [256]string
)

const byteLevelRuneLimit = 0x144

func init() {
	n := rune(0)
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = 256 + n
			n++
		}
	}
	for b, r := range byteToRune {
		runeToByte[r] = byte(b)
		runeIsMapped[r] = true
		byteLevelUTF8[b] = string(r)
	}
}

// byteLevelEncode returns s with every byte replaced by its byte-level rune.
func byteLevelEncode(s string) string {
	buf := make([]byte, 0, len(s)*2)
	for i := 0; i < len(s); i++ {
		buf = utf8.AppendRune(buf, byteToRune[s[i]])
	}
	return string(buf)
}

// byteLevelDecode maps a byte-level token back to its bytes. Like HF's
// ByteLevel decoder, a token with any rune outside the alphabet is kept as
// its raw UTF-8 instead.
func byteLevelDecode(dst []byte, tok string) []byte {
	start := len(dst)
	for _, r := range tok {
		if r >= byteLevelRuneLimit || !runeIsMapped[r] {
			return append(dst[:start], tok...)
		}
		dst = append(dst, runeToByte[r])
	}
	return dst
}

// byteLevelDecodable reports whether every rune of tok is in the alphabet.
func byteLevelDecodable(tok string) bool {
	for _, r := range tok {
		if r >= byteLevelRuneLimit || !runeIsMapped[r] {
			return false
		}
	}
	return true
}
