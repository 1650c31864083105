package parsers

import (
	"fmt"
	"strings"
	"testing"
)

// benchReasoningOutput is an output of about n bytes in each family's
// shape: a long reasoning, the family's separator, a long answer.
func benchReasoningOutput(parser string, n int) string {
	body := strings.Repeat("abc \n", n/10)
	switch parser {
	case "granite":
		return graniteThink + body + graniteResp + body
	case "hunyuan_a13b":
		return hyThink + body + hyAnswer + body + hyEnd
	case "mistral":
		return "[THINK]" + body + "[/THINK]" + body
	case "ernie45":
		return body + "</think>\n\n<response>\n" + body + "</response>\n"
	}
	return "<think>" + body + "</think>" + body
}

// BenchmarkReasoningStream feeds outputs one 4-byte piece at a time: the
// cost per byte must not grow with the output (O(delta) pushes).
func BenchmarkReasoningStream(b *testing.B) {
	for _, name := range []string{"deepseek_v3", "step3", "ernie45", "glm45", "kimi_k2", "minimax_m2",
		"seed_oss", "mistral", "granite", "olmo3", "hunyuan_a13b"} {
		for _, n := range []int{4 << 10, 64 << 10} {
			text := benchReasoningOutput(name, n)
			req := reasoningCase{kwargs: `{"thinking":true}`}.request(b)
			b.Run(fmt.Sprintf("%s/%dk", name, n>>10), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					p, err := New(Config{ReasoningParser: name}, reasoningVocab, req, nil)
					if err != nil {
						b.Fatal(err)
					}
					for i := 0; i < len(text); i += 4 {
						pushDelta(p, text[i:min(i+4, len(text))])
					}
					finishDelta(p)
				}
			})
		}
	}
}
