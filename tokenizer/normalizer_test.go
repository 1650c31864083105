package tokenizer

import (
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

func TestNormalizers(t *testing.T) {
	tests := []struct {
		name, json, in, want string
	}{
		{"NFC composes", "{\"type\":\"NFC\"}", "e\u0301 ﬁ Å", "é ﬁ Å"},
		{"NFD decomposes", "{\"type\":\"NFD\"}", "é Å ﬁ", "e\u0301 A\u030a ﬁ"},
		{"NFKC folds compatibility", "{\"type\":\"NFKC\"}", "ﬁ① ｘ e\u0301", "fi1 x é"},
		{"NFKD folds and decomposes", "{\"type\":\"NFKD\"}", "ﬁé①", "fie\u03011"},
		{"Lowercase per character", "{\"type\":\"Lowercase\"}", "HeLLo İstanbul ΣΑΣ ÀÉ", "hello i\u0307stanbul σασ àé"},
		{"Replace string", "{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"▁\"}", "a b  c ", "a▁b▁▁c▁"},
		{"Replace regex", "{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"\\\\s+\"},\"content\":\" \"}", "a \t\n b\u3000c", "a b c"},
		{"Replace regex to empty", "{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"[0-9]\"},\"content\":\"\"}", "a1b22c", "abc"},
		{"Prepend", "{\"type\":\"Prepend\",\"prepend\":\"▁\"}", "abc", "▁abc"},
		{"Prepend skips empty", "{\"type\":\"Prepend\",\"prepend\":\"▁\"}", "", ""},
		{"Strip both", "{\"type\":\"Strip\",\"strip_left\":true,\"strip_right\":true}", " \t a b \n\u3000", "a b"},
		{"Strip left only", "{\"type\":\"Strip\",\"strip_left\":true,\"strip_right\":false}", "  a b  ", "a b  "},
		{"StripAccents", "{\"type\":\"StripAccents\"}", "e\u0301a\u0308o", "eao"},
		{"Sequence NFD StripAccents Lowercase", "{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"NFD\"},{\"type\":\"StripAccents\"},{\"type\":\"Lowercase\"}]}", "Héllo Wörld", "hello world"},
		{"empty Sequence", "{\"type\":\"Sequence\",\"normalizers\":[]}", "Keep ME", "Keep ME"},
		{"BertNormalizer defaults", "{\"type\":\"BertNormalizer\",\"clean_text\":true,\"handle_chinese_chars\":true,\"strip_accents\":null,\"lowercase\":true}", "Héllo\tWORLD 中文\x00x\u200b", "hello world  中  文 x"},
		{"BertNormalizer keep case", "{\"type\":\"BertNormalizer\",\"clean_text\":true,\"handle_chinese_chars\":false,\"strip_accents\":false,\"lowercase\":false}", "Héllo\r\nWORLD 中文", "Héllo  WORLD 中文"},
		{"ByteLevel normalizer", "{\"type\":\"ByteLevel\"}", "é a\n", "Ã©ĠaĊ"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := buildNormalizer([]byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			if got := n.normalize(tc.in); got != tc.want {
				t.Errorf("normalize(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestNormalizerErrors(t *testing.T) {
	tests := []struct{ name, json, wantErr string }{
		{"unknown type", `{"type":"Precompiled","precompiled_charsmap":""}`, `unknown normalizer type "Precompiled"`},
		{"unknown type in Sequence", `{"type":"Sequence","normalizers":[{"type":"NFC"},{"type":"Nope"}]}`, `sequence item 1: unknown normalizer type "Nope"`},
		{"missing type", `{"normalizers":[]}`, "without a type"},
		{"Replace without pattern", `{"type":"Replace","content":"x"}`, "normalizer Replace needs pattern and content"},
		{"pattern with both kinds", `{"type":"Replace","pattern":{"String":"a","Regex":"b"},"content":"x"}`, "exactly one of String or Regex"},
		{"bad regex", `{"type":"Replace","pattern":{"Regex":"("},"content":"x"}`, "compile regex"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := buildNormalizer([]byte(tc.json))
			if err == nil || !contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

// The ASCII shortcut gives what norm gives, in every form, for any text.
func TestUnicodeNormalizerMatchesNorm(t *testing.T) {
	cases := []string{"", "a", "plain ascii text of more than eight bytes", "1234567", "12345678", "123456789",
		"abcdefg\u00e9", "abcdefgh\u00e9", "e\u0301", "ASCII then ﬁ", "\x7f\x00\x1f", "\xff\xfe", "ok\xc3", "caf\u00e9 na\u00efve e\u0301 A\u030a x\u0301\u0323y", "\u0301 lead mark", "\u1100\u1161\u11a8 hangul", "ﬁ①ｘ then ascii", "a\u0308\u0301b\u0327\u0301", "Å" + strings.Repeat("x", 30)}
	for _, s := range cases {
		checkUnicodeNormalizer(t, s)
	}
}

func FuzzUnicodeNormalizer(f *testing.F) {
	f.Add("hello world")
	f.Add("e\u0301 ﬁ Å")
	f.Add("abcdefgh\xff")
	f.Fuzz(checkUnicodeNormalizer)
}

func checkUnicodeNormalizer(t *testing.T, s string) {
	for _, form := range []norm.Form{norm.NFC, norm.NFD, norm.NFKC, norm.NFKD} {
		if got, want := (unicodeNormalizer{form}).normalize(s), form.String(s); got != want {
			t.Fatalf("form %v normalize(%q) = %q, want %q", form, s, got, want)
		}
	}
	ascii := true
	for i := 0; i < len(s); i++ {
		ascii = ascii && s[i] < 0x80
	}
	if got := asciiSpan(s, 0) == len(s); got != ascii {
		t.Fatalf("asciiSpan(%q) says all ASCII = %v", s, got)
	}
}

func BenchmarkUnicodeNormalizerASCII(b *testing.B) {
	s := strings.Repeat("The request response token model cache stream parser server client latency. ", 60)
	n := unicodeNormalizer{norm.NFC}
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		n.normalize(s)
	}
}
