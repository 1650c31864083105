package tokenizer_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/tokenizer"
)

// fuzzMaxInput bounds fuzz inputs so one slow input cannot stall a short
// `-fuzztime` run; the parity corpus covers long inputs.
const fuzzMaxInput = 8 << 10

// The fuzz targets check, per model, that encoding never panics, yields
// ids inside the vocabulary, and that Decode(Encode(s, false), false) gives
// s back up to what the model's normalizer changes (roundTripWant states the
// exact invariant per model). There is one target per model rather than one
// with the model picked by an input byte: each fuzz worker process loads
// the models it meets, and loading all five (≈7 s on 2 cores) ate the whole
// of a short `-fuzztime` run before a single new input was tried.
//
// Run one briefly with:
//
//	go test ./tokenizer -run '^$' -fuzz '^FuzzEncodeDecodeQwen3$' -fuzztime 10s

func FuzzEncodeDecodeQwen3(f *testing.F)      { fuzzEncodeDecode(f, "qwen3") }
func FuzzEncodeDecodeLlama3_1(f *testing.F)   { fuzzEncodeDecode(f, "llama3_1") }
func FuzzEncodeDecodeDeepseekV3(f *testing.F) { fuzzEncodeDecode(f, "deepseek_v3") }
func FuzzEncodeDecodeGptoss(f *testing.F)     { fuzzEncodeDecode(f, "gptoss") }
func FuzzEncodeDecodeGemma3(f *testing.F)     { fuzzEncodeDecode(f, "gemma3") }

// fuzzSeeds are added to every target; testdata/fuzz/<target>/ holds more.
var fuzzSeeds = []string{
	"Hello world",
	"<|im_start|>user\nDON'T 'ſ it's<|im_end|>\n",
	"e\u0301<think>\u0338 A\u030a \u212b",
	"▁▁ x\n\n\t\t y  ",
	"\ufffd\ufffe\U0010ffff\x00",
}

func fuzzEncodeDecode(f *testing.F, name string) {
	// Load before f.Fuzz: the fuzzer kills a worker whose input runs for
	// 10 s, and a model load on a busy machine can take that long.
	tok := loadedModels.get(f, name) // skips loudly (fails in CI) without the model
	added := tok.AddedTokens()
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || len(s) > fuzzMaxInput {
			t.Skip("not valid UTF-8 or too long")
		}

		ids := tok.Encode(s, false)
		n := tok.Len()
		for i, id := range ids {
			if id < 0 || id >= n {
				t.Fatalf("%s: Encode(%q) id[%d] = %d outside [0, %d)", name, s, i, id, n)
			}
		}
		got := tok.Decode(ids, false)
		if want := roundTripWant(name, added, s); got != want {
			pos := testenv.FirstDiff([]byte(got), []byte(want))
			t.Fatalf("%s: Decode(Encode(s)) differs at byte %d\n s:    %q\n got:  %s\n want: %s",
				name, pos, s, trimForReport(got, pos), trimForReport(want, pos))
		}

		// With special tokens added and skipped only panics matter: the
		// exact results are the parity test's business.
		_ = tok.Decode(tok.Encode(s, true), true)
	})
}

// roundTripWant is what Decode(Encode(s, false), false) must return.
//
//   - qwen3: NFC normalizer, byte-level BPE. The text is split at added
//     tokens before normalizing (none of qwen3's has lstrip, rstrip,
//     single_word or normalized set, so plain leftmost-longest matching is
//     HF's split), and each piece between them is NFC'd on its own: "<think>"
//     followed by U+0338 stays as is although NFC of the whole string
//     would compose ">\u0338" into "≯".
//   - llama3_1, gptoss, deepseek_v3: no normalizer, byte-level BPE without
//     prefix space: the text comes back byte for byte.
//   - gemma3: the normalizer turns ' ' into '▁' and the decoder turns every
//     '▁' into ' ', so a literal '▁' in the input comes back as a space;
//     everything else round-trips via byte fallback.
//
// The parity test checks these statements against the reference binding.
func roundTripWant(model string, added []tokenizer.AddedToken, s string) string {
	switch model {
	case "qwen3":
		return nfcOutsideAddedTokens(s, added)
	case "gemma3":
		return strings.ReplaceAll(s, "▁", " ")
	default:
		return s
	}
}

// nfcOutsideAddedTokens NFC-normalizes the text between leftmost-longest
// matches of the added tokens' contents, keeping the matches verbatim.
func nfcOutsideAddedTokens(s string, added []tokenizer.AddedToken) string {
	var out, piece strings.Builder
	flush := func() {
		out.WriteString(norm.NFC.String(piece.String()))
		piece.Reset()
	}
	for i := 0; i < len(s); {
		best := ""
		for _, a := range added {
			if len(a.Content) > len(best) && strings.HasPrefix(s[i:], a.Content) {
				best = a.Content
			}
		}
		if best != "" {
			flush()
			out.WriteString(best)
			i += len(best)
			continue
		}
		piece.WriteByte(s[i])
		i++
	}
	flush()
	return out.String()
}

func TestNFCOutsideAddedTokens(t *testing.T) {
	added := []tokenizer.AddedToken{{Content: "<think>"}, {Content: "<th"}, {Content: "</think>"}}
	cases := []struct{ name, in, want string }{
		{"plain NFC", "e\u0301", "é"},
		{"token blocks composition", "<think>\u0338", "<think>\u0338"},
		{"outside tokens composes", ">\u0338", "≯"},
		{"longest match wins", "<think>x<th>\u0338", "<think>x<th≯"},
		{"pieces on both sides", "A\u030a</think>A\u030a", "Å</think>Å"},
		{"no tokens", "\u212b", "Å"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := nfcOutsideAddedTokens(tc.in, added); got != tc.want {
				t.Errorf("nfcOutsideAddedTokens(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
