package split

import (
	"math/rand/v2"
	"strings"
	"unicode/utf8"
)

// corpusAtoms are the building blocks of the generated test inputs, grouped
// by the pattern branches they exercise. Inputs concatenate random atoms, so
// every boundary between two kinds of text gets exercised.
var corpusAtoms = [][]string{
	// ASCII words in all casings, for the letter runs and o200k's case split.
	{"hello", "World", "HTTP", "don", "I", "a", "x", "CamelCase", "iPhone", "ABCdef", "HTTPServer", "eBay", "JOHN", "John", "the", "Quick", "fOx", "Z"},
	// Contractions in every casing, near misses and the folding oddities:
	// ſ (U+017F) folds to s; Kelvin (U+212A) folds to k; ﬆ and ß fold to two letters.
	{"'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'rE", "'ve", "'VE", "'Ve", "'m", "'M", "'ll", "'LL", "'lL", "'Ll", "'d", "'D",
		"'ſ", "'\u212a", "'k", "'K", "'r", "'v", "'l", "'", "''", "'x", "'ſt", "'ﬆ", "'ß", "'é", "'1", "' ", "'\n", "'sa", "'llama", "'Sx"},
	// Every kind of whitespace, runs of it, and look-alikes that are not \s.
	{" ", " ", " ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\r\n\r\n", "\r", " \n", "\n ", " \r\n ", "\v", "\f",
		"\u0085", "\u00a0", "\u1680", "\u2000", "\u2001", "\u2005", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
		"\u180e", "\u200b", "\ufeff", "\x1c", "\x1f", " \t ", "\u00a0\u00a0", "\u3000\n"},
	// Numbers: ASCII runs of every length around the {1,3} limit and other \p{N}.
	{"0", "7", "12", "123", "1234", "12345", "1234567", "٣", "٣٤٥٦", "²", "³4", "½", "¼¾", "Ⅻ", "ⅷ", "𝟘𝟙", "१२३", "①②", "๓", "〇", "3.14", "1,000"},
	// ASCII punctuation and symbols, alone and in runs, and slashes for o200k.
	{".", ",", "!", "?", "...", "--", "/", "//", "/\n", "\\", "@", "#", "$", "%", "^", "&", "*", "()", "[", "]", "{", "}", "<", ">",
		"=", "+", "_", "`", "~", "|", ":", ";", "\"", "'", "-", "->", "</", "?!", ".\n", "!\r\n", "/\r\n/"},
	// Non-ASCII punctuation and symbols.
	{"«", "»", "¿", "¡", "—", "–", "…", "€", "£", "©", "®", "™", "°", "§", "¶", "•", "→", "∑", "√", "、", "。", "「", "」", "・", "ー", "〜", "¨", "˜", "＄", "！"},
	// Latin with precomposed accents, titlecase (ǅ) and modifier letters (ʰ), ordinal indicators (Lo).
	{"é", "café", "naïve", "Ñandú", "ÆØÅ", "straße", "İstanbul", "ǅ", "ǅa", "ǈ", "ʰ", "ʰa", "ª", "º", "Ǆ", "ǆ", "ÉCOLE", "Ÿ", "ı", "ſ", "\u212a", "ﬆ", "ß"},
	// Combining marks: after letters, alone, stacked, enclosing (Me), spacing (Mc).
	{"e\u0301", "\u0301", "\u0300\u0301", "a\u20dd", "\u20dd", "\u0903", "A\u0301", "\u0301A", "\u0301a", "\u0308'", "\u0301'S", "Z\u0335a"},
	// CJK ideographs, kana and the boundaries of DeepSeek's ranges.
	{"中文", "你好世界", "一", "\u9fa5", "\u9fa6", "\u4dff", "\u3040", "\u3041", "\u309f", "\u30a0", "\u30ff", "\u303f", "\u3100",
		"ひらがな", "カタカナ", "ー", "・", "ｶﾀｶﾅ", "한국어", "𠀀", "中a", "日本語です。"},
	// Right-to-left and Indic scripts with their marks.
	{"مرحبا", "السلام", "\u064b", "كتاب\u064b", "نمستے", "नमस्ते", "हिन्दी", "क्षि", "שלום", "ภาษาไทย"},
	// Emoji: plain, skin tones (Sk), ZWJ sequences, flags, keycaps, variation selectors.
	{"😀", "👍🏽", "👨\u200d👩\u200d👧", "🇺🇸", "❤️", "©️", "1️⃣", "🏳️\u200d🌈", "🤖x", "🏻"},
	// Controls, format characters, private use and noncharacters.
	{"\x00", "\x01", "\x1b", "\x7f", "\u200d", "\u200c", "\u2060", "\ue000", "\U000f0000", "\ufffd", "\ufdd0", "\u00ad", "\U000e0041"},
	// Greek, Cyrillic and mathematical letters above the BMP.
	{"Ελληνικά", "ΣΊΣΥΦΟΣ", "Привет", "МИР", "𝐀𝐁𝐜", "𝒳", "ǅǅ"},
}

// randomRune returns a random valid rune, mostly from the BMP.
func randomRune(rng *rand.Rand) rune {
	for {
		var r rune
		switch rng.IntN(4) {
		case 0:
			r = rune(rng.IntN(0x80))
		case 1:
			r = rune(rng.IntN(0x800))
		case 2:
			r = rune(rng.IntN(0x10000))
		default:
			r = rune(rng.IntN(utf8.MaxRune + 1))
		}
		if utf8.ValidRune(r) {
			return r
		}
	}
}

// corpus returns n deterministic test inputs from seed.
func corpus(seed uint64, n int) []string {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make([]string, 0, n)
	var b strings.Builder
	for range n {
		b.Reset()
		for range 1 + rng.IntN(12) {
			switch k := rng.IntN(len(corpusAtoms) + 2); {
			case k < len(corpusAtoms):
				group := corpusAtoms[k]
				b.WriteString(group[rng.IntN(len(group))])
			case k == len(corpusAtoms):
				b.WriteRune(randomRune(rng))
			default:
				// Printable ASCII runs mix everything the ASCII fast paths see.
				for range 1 + rng.IntN(6) {
					b.WriteByte(byte(0x20 + rng.IntN(0x5f)))
				}
			}
		}
		out = append(out, b.String())
	}
	return out
}
