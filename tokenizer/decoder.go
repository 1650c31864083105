package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// decoder is one step of HF's decoder chain (Decoder::decode_chain): it
// rewrites the list of token strings, and the final list is concatenated.
// A decoder returns a new slice and leaves its argument untouched.
type decoder interface {
	decodeChain(tokens []string) []string
}

type decoderSeq []decoder

func (d decoderSeq) decodeChain(tokens []string) []string {
	for _, x := range d {
		tokens = x.decodeChain(tokens)
	}
	return tokens
}

// byteLevelDecoder maps byte-level runes back to bytes and joins everything
// into one string, lossily decoded as UTF-8.
type byteLevelDecoder struct{}

func (byteLevelDecoder) decodeChain(tokens []string) []string {
	n := 0
	for _, t := range tokens {
		n += len(t)
	}
	buf := make([]byte, 0, n)
	for _, t := range tokens {
		buf = byteLevelDecode(buf, t)
	}
	return []string{lossyString(buf)}
}

type metaspaceDecoder struct {
	repl   rune
	scheme prependScheme
}

// decodeChain turns the replacement rune back into spaces; in the first
// token every replacement rune is dropped unless the scheme is "never".
func (d metaspaceDecoder) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		var b strings.Builder
		for _, r := range t {
			if r == d.repl {
				if i == 0 && d.scheme != prependNever {
					continue
				}
				b.WriteByte(' ')
			} else {
				b.WriteRune(r)
			}
		}
		out[i] = b.String()
	}
	return out
}

// byteFallbackDecoder turns runs of "<0xXX>" tokens into the text they
// encode, or one U+FFFD per byte when the run is not valid UTF-8.
type byteFallbackDecoder struct{}

func parseByteToken(t string) (byte, bool) {
	if len(t) != 6 || !strings.HasPrefix(t, "<0x") || t[5] != '>' {
		return 0, false
	}
	// Rust's u8::from_str_radix accepts a leading '+'.
	h := t[3:5]
	if h[0] == '+' {
		v, ok := hexVal(h[1])
		return v, ok
	}
	hi, ok1 := hexVal(h[0])
	lo, ok2 := hexVal(h[1])
	return hi<<4 | lo, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func (byteFallbackDecoder) decodeChain(tokens []string) []string {
	out := make([]string, 0, len(tokens))
	var pending []byte
	flush := func() {
		if len(pending) == 0 {
			return
		}
		if utf8.Valid(pending) {
			out = append(out, string(pending))
		} else {
			for range pending {
				out = append(out, "\uFFFD")
			}
		}
		pending = pending[:0]
	}
	for _, t := range tokens {
		if b, ok := parseByteToken(t); ok {
			pending = append(pending, b)
			continue
		}
		flush()
		out = append(out, t)
	}
	flush()
	return out
}

type fuseDecoder struct{}

func (fuseDecoder) decodeChain(tokens []string) []string {
	return []string{strings.Join(tokens, "")}
}

// stripDecoder removes up to start leading and stop trailing occurrences of
// content from every token.
type stripDecoder struct {
	content     rune
	start, stop int
}

func (d stripDecoder) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		rs := []rune(t)
		lo := 0
		for j := 0; j < d.start && j < len(rs) && rs[j] == d.content; j++ {
			lo = j + 1
		}
		hi := len(rs)
		for j := 0; j < d.stop && len(rs)-j-1 >= 0; j++ {
			k := len(rs) - j - 1
			if rs[k] != d.content {
				break
			}
			hi = k
		}
		if hi < lo {
			hi = lo
		}
		out[i] = string(rs[lo:hi])
	}
	return out
}

type replaceDecoder struct {
	pattern matcher
	content string
}

func (d replaceDecoder) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		out[i] = replaceMatches(d.pattern, t, d.content)
	}
	return out
}

type wordPieceDecoder struct {
	prefix  string
	cleanup bool
}

func (d wordPieceDecoder) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		if i != 0 {
			if s, ok := strings.CutPrefix(t, d.prefix); ok {
				t = s
			} else {
				t = " " + t
			}
		}
		if d.cleanup {
			t = wordPieceCleanup(t)
		}
		out[i] = t
	}
	return out
}

// wordPieceCleanup undoes the spaces WordPiece puts around punctuation, in
// HF's order of sequential replacements.
func wordPieceCleanup(s string) string {
	for _, r := range [...][2]string{
		{" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"},
		{" n't", "n't"}, {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"},
		{" 've", "'ve"}, {" 're", "'re"},
	} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return s
}

type bpeDecoder struct{ suffix string }

func (d bpeDecoder) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		repl := " "
		if i == len(tokens)-1 {
			repl = ""
		}
		out[i] = strings.ReplaceAll(t, d.suffix, repl)
	}
	return out
}

type ctcDecoder struct {
	pad, delimiter string
	cleanup        bool
}

func (d ctcDecoder) decodeChain(tokens []string) []string {
	out := make([]string, 0, len(tokens))
	for i, t := range tokens {
		if i > 0 && t == tokens[i-1] {
			continue
		}
		s := strings.ReplaceAll(t, d.pad, "")
		if d.cleanup {
			s = strings.ReplaceAll(wordPieceCleanup(s), d.delimiter, " ")
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
