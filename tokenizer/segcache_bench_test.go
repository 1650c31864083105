package tokenizer_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/tokenizer"
)

// benchConversation renders an 80-message conversation of corpus chunks
// between two of the model's added tokens; nonce makes every message's text
// unique to that variant.
func benchConversation(tok *tokenizer.Tokenizer, nonce int) string {
	added := tok.AddedTokens()
	open, end := added[0].Content, added[len(added)-1].Content
	corpus := benchCorpus()
	var b strings.Builder
	for i := range 80 {
		chunk := corpus[(i*1543)%(len(corpus)-600):][:400]
		fmt.Fprintf(&b, "%suser\n[%d.%d] %s%s\n", open, nonce, i, strings.ToValidUTF8(chunk, ""), end)
	}
	return b.String()
}

// BenchmarkSegmentCache encodes conversations with the segment cache off
// (the encoder alone), cold (every segment new: the miss path's cost) and
// warm (the same conversation again: every segment hits).
func BenchmarkSegmentCache(b *testing.B) {
	const variants = 64
	for _, name := range benchModels {
		tok, err := tokenizer.Load(filepath.Join(testenv.ModelDir(b, name), "tokenizer.json"))
		if err != nil {
			b.Fatal(err)
		}
		convs := make([]string, variants)
		for i := range convs {
			convs[i] = benchConversation(tok, i)
		}
		// Warm the model's word cache on every variant first, so that the
		// modes differ only by the segment cache.
		tok.SetSegmentCacheSize(0)
		for _, c := range convs {
			tok.Encode(c, false)
		}
		run := func(mode string, size int64) {
			b.Run(name+"/"+mode, func(b *testing.B) {
				tok.SetSegmentCacheSize(size)
				b.SetBytes(int64(len(convs[0])))
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if mode == "cold" && i%variants == 0 && i > 0 {
						b.StopTimer()
						tok.SetSegmentCacheSize(size) // empty: the variants come round again
						b.StartTimer()
					}
					c := convs[i%variants]
					if mode == "warm" {
						c = convs[0]
					}
					tok.Encode(c, false)
					i++
				}
			})
		}
		run("off", 0)
		run("cold", tokenizer.DefaultSegmentCacheBytes)
		run("warm", tokenizer.DefaultSegmentCacheBytes)
	}
}
