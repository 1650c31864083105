// Package split implements the regular expressions of the Split pre-tokenizers
// of the supported tokenizers as hand-written, byte-oriented scanners.
//
// Go's regexp (RE2) cannot express the lookahead in `\s+(?!\S)`, and a
// backtracking engine over []rune is an order of magnitude too slow for the
// tokenizer's hot path. Each scanner here reproduces, for one exact pattern
// string, the matches Oniguruma's find_iter reports for that pattern (the
// engine Hugging Face tokenizers uses): leftmost-first alternation, greedy
// quantifiers with backtracking, Unicode classes taken from Go's unicode
// tables. A scanner allocates nothing beyond growing dst.
package split

// Scan appends to dst the byte offsets start,end of the non-overlapping leftmost matches of the pattern in s
// that start at or after from, at most limit of them
// (limit < 0: all), and returns dst and where to resume (the start of the next match, or len(s)). Each match
// depends only on s and where the scan stands, so resuming gives the matches one whole scan gives, while the
// offsets of a huge text never all exist at once.
type Scan func(s string, from, limit int, dst []int) ([]int, int)

// LookupScan returns the hand-written scanner for an exact pattern string as it appears in tokenizer.json.
func LookupScan(pattern string) (Scan, bool) {
	f, ok := scanners[pattern]
	return f, ok
}

// Pattern strings exactly as they appear in tokenizer.json, after JSON
// decoding.
const (
	// Qwen3Pattern is the Split regex of Qwen2/2.5/3: cl100k with single digits.
	Qwen3Pattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// Cl100kPattern is the Split regex of Llama 3 (tiktoken's cl100k_base).
	Cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// O200kPattern is the Split regex of gpt-oss (tiktoken's o200k_base).
	O200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// DeepSeekDigitsPattern is the first of DeepSeek V3's three Split regexes.
	DeepSeekDigitsPattern = `\p{N}{1,3}`
	// DeepSeekCJKPattern is the second of DeepSeek V3's Split regexes; the
	// ranges are literal characters in tokenizer.json.
	DeepSeekCJKPattern = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
	// DeepSeekWordsPattern is the third of DeepSeek V3's Split regexes. Its
	// tokenizer.json spells CR and LF inside the classes as literal characters,
	// and the first class contains a backquote, hence the interpreted literal.
	DeepSeekWordsPattern = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+" +
		"|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
	// ByteLevelPattern is the GPT-2 regex the ByteLevel pre-tokenizer applies
	// when use_regex is true; it never appears in tokenizer.json.
	ByteLevelPattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

// scanners is read-only after package initialisation.
var scanners = map[string]Scan{
	Qwen3Pattern:          scanQwen3,
	Cl100kPattern:         scanCl100k,
	O200kPattern:          scanO200k,
	DeepSeekDigitsPattern: scanDigits3,
	DeepSeekCJKPattern:    scanDeepSeekCJK,
	DeepSeekWordsPattern:  scanDeepSeekWords,
	ByteLevelPattern:      scanByteLevel,
}
