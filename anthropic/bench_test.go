package anthropic

import "testing"

// BenchmarkDecodeToChat decodes and converts the conversion goldens: the
// one-pass decoder against the decoder and conversion it replaced.
func BenchmarkDecodeToChat(b *testing.B) {
	cases := loadAnthropicGolden(b)
	b.Run("one-pass", func(b *testing.B) {
		for b.Loop() {
			for _, c := range cases {
				a, err := DecodeMessagesRequest(c.Anthropic)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ToChat(a); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("ref", func(b *testing.B) {
		for b.Loop() {
			for _, c := range cases {
				a, err := refDecodeMessagesRequest(c.Anthropic)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := refToChat(a, false); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
