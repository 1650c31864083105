package tokenizer

import (
	"slices"
	"testing"
)

func TestDecoders(t *testing.T) {
	tests := []struct {
		name, json string
		tokens     []string
		want       string
	}{
		{"ByteLevel joins and maps bytes", "{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"trim_offsets\":true,\"use_regex\":true}", []string{"Hello", "Ġworld", "Ã©", "!"}, "Hello worldé!"},
		{"ByteLevel keeps tokens outside the alphabet", "{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"trim_offsets\":true,\"use_regex\":true}", []string{"<｜tag｜>", "Ġa", "日本"}, "<｜tag｜> a日本"},
		{"ByteLevel lossy truncated sequence", "{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"trim_offsets\":true,\"use_regex\":true}", []string{"âĤ", "a", "ðŁ", "Ģ¿", "íłĢ", "À¯ÿ"}, "�a🀿������"},
		{"ByteLevel split multibyte", "{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"trim_offsets\":true,\"use_regex\":true}", []string{"â", "Ĥ¬"}, "€"},
		{"Metaspace always", "{\"type\":\"Metaspace\",\"replacement\":\"▁\",\"prepend_scheme\":\"always\",\"split\":true}", []string{"▁Hello", "▁wor", "ld", "▁▁x"}, "Hello world  x"},
		{"Metaspace drops every replacement of the first token", "{\"type\":\"Metaspace\",\"replacement\":\"▁\",\"prepend_scheme\":\"always\",\"split\":true}", []string{"▁a▁b", "▁c"}, "ab c"},
		{"Metaspace never", "{\"type\":\"Metaspace\",\"replacement\":\"▁\",\"prepend_scheme\":\"never\",\"split\":true}", []string{"▁Hello", "▁world"}, " Hello world"},
		{"ByteFallback", "{\"type\":\"ByteFallback\"}", []string{"<0x41>", "<0xE4>", "<0xB8>", "<0xAD>", "x", "<0xE4>", "y", "<0xff>", "<0x+F>", "<0xG1>"}, "A中x�y��<0xG1>"},
		{"Fuse", "{\"type\":\"Fuse\"}", []string{"a", " b", "c"}, "a bc"},
		{"Strip", "{\"type\":\"Strip\",\"content\":\" \",\"start\":1,\"stop\":1}", []string{" a", "  b ", "c  ", "x"}, "a bc x"},
		{"Replace", "{\"type\":\"Replace\",\"pattern\":{\"String\":\"▁\"},\"content\":\" \"}", []string{"▁Hi", "a▁▁b"}, " Hia  b"},
		{"WordPiece", "{\"type\":\"WordPiece\",\"prefix\":\"##\",\"cleanup\":true}", []string{"hel", "##lo", "world", ".", "do", "n't", "?"}, "hello world. don't?"},
		{"WordPiece no cleanup", "{\"type\":\"WordPiece\",\"prefix\":\"##\",\"cleanup\":false}", []string{"a", "##b", "."}, "ab ."},
		{"BPEDecoder", "{\"type\":\"BPEDecoder\",\"suffix\":\"</w>\"}", []string{"hel", "lo</w>", "world</w>"}, "hello world"},
		{"CTC", "{\"type\":\"CTC\",\"pad_token\":\"<pad>\",\"word_delimiter_token\":\"|\",\"cleanup\":true}", []string{"<pad>", "h", "h", "e", "|", "l", "l", "<pad>", "l", "o", "."}, "he llo."},
		{"Sequence Replace ByteFallback Fuse", "{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Replace\",\"pattern\":{\"String\":\"▁\"},\"content\":\" \"},{\"type\":\"ByteFallback\"},{\"type\":\"Fuse\"}]}", []string{"▁Hi", "<0xE4>", "<0xB8>", "<0xAD>", "▁", "<0xE4>", "<0xB8>"}, " Hi中 ��"},
		{"no decoder joins with spaces", "", []string{"a", "b", "c"}, "a b c"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok := testTokenizerJSON{decoder: tc.json}.build(t)
			if got := tok.TokensToString(tc.tokens); got != tc.want {
				t.Errorf("TokensToString(%q) = %q, want %q", tc.tokens, got, tc.want)
			}
			// Decode takes precomputed shortcuts for common chains: it must
			// agree with the chain run over the tokens of the ids.
			var vocab []string
			var ids []int
			for _, tk := range tc.tokens {
				i := slices.Index(vocab, tk)
				if i < 0 {
					i = len(vocab)
					vocab = append(vocab, tk)
				}
				ids = append(ids, i)
			}
			tok = testTokenizerJSON{decoder: tc.json, model: testBPE(vocab, []string{}, nil)}.build(t)
			if got := tok.Decode(ids, false); got != tc.want {
				t.Errorf("Decode(%v) = %q, want %q", ids, got, tc.want)
			}
		})
	}
}

func TestDecoderErrors(t *testing.T) {
	tests := []struct{ name, json, wantErr string }{
		{"unknown type", `{"type":"Nope"}`, `unknown decoder type "Nope"`},
		{"unknown nested type", `{"type":"Sequence","decoders":[{"type":"Fuse"},{"type":"Nope"}]}`, `sequence item 1: unknown decoder type "Nope"`},
		{"Strip content", `{"type":"Strip","content":"ab","start":1,"stop":0}`, "one-character content"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := buildDecoder([]byte(tc.json))
			if err == nil || !contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}
