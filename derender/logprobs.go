package derender

import (
	"strings"
	"unicode/utf8"

	"github.com/vrender/vrender/protocol"
)

// logprobContextWindow is how many preceding sampled ids repair a token
// that decodes alone to U+FFFD (vLLM's _LOGPROB_CONTEXT_WINDOW).
const logprobContextWindow = 4

const replacement = "\uFFFD"

// resolveLogprobs fills token text and bytes into engine logprobs as vLLM's
// _resolve_logprobs does: every id decoded alone, a trailing U+FFFD
// re-decoded with up to four preceding sampled ids. context seeds those
// ids across stream chunks. Entries naming no id keep their token.
func (e *Engine) resolveLogprobs(lp *protocol.GenerateLogProbs, context []int) *protocol.ChatCompletionLogProbs {
	if lp == nil {
		return nil
	}
	out := &protocol.ChatCompletionLogProbs{Content: []protocol.ChatLogProbsContent{}}
	if lp.Content == nil {
		out.Content = nil
		return out
	}
	ctx := append([]int(nil), context...)
	for _, entry := range lp.Content {
		tok, b := e.resolveToken(&entry.LogprobTop, ctx)
		c := protocol.ChatLogProbsContent{Token: tok, Logprob: entry.Logprob, Bytes: b, TopLogprobs: []protocol.ChatLogProb{}}
		for i := range entry.TopLogprobs {
			top := &entry.TopLogprobs[i]
			ts, tb := e.resolveToken(top, ctx)
			c.TopLogprobs = append(c.TopLogprobs, protocol.ChatLogProb{Token: ts, Logprob: top.Logprob, Bytes: tb})
		}
		out.Content = append(out.Content, c)
		if id, ok := entry.ID(); ok {
			ctx = append(ctx, id)
		}
	}
	return out
}

// resolveToken is one entry's text and UTF-8 bytes.
func (e *Engine) resolveToken(t *protocol.LogprobTop, ctx []int) (string, []int) {
	id, ok := t.ID()
	if !ok {
		if t.Bytes != nil {
			return t.Token, t.Bytes
		}
		return t.Token, utf8Bytes(t.Token)
	}
	s := e.decode([]int{id})
	if strings.HasSuffix(s, replacement) {
		s = e.correctToken(id, ctx)
	}
	return s, utf8Bytes(s)
}

// decode is tokenizer.decode with special tokens kept, as vLLM's
// logprob decoding calls it.
func (e *Engine) decode(ids []int) string {
	for _, id := range ids {
		if id < 0 || id >= e.model.Tokenizer.Len() {
			return ""
		}
	}
	s, err := e.model.Decode(ids, false)
	if err != nil {
		return ""
	}
	return s
}

// correctToken is vLLM's _correct_decoded_token.
func (e *Engine) correctToken(id int, ctx []int) string {
	for n := 1; n <= min(len(ctx), logprobContextWindow); n++ {
		context := ctx[len(ctx)-n:]
		full := e.decode(append(append([]int(nil), context...), id))
		if strings.HasSuffix(full, replacement) {
			continue
		}
		clean := len(context)
		for j := len(context) - 1; j >= 0; j-- {
			if !strings.HasSuffix(e.decode(context[j:j+1]), replacement) {
				break
			}
			clean = j
		}
		prefix := ""
		if clean > 0 {
			prefix = e.decode(context[:clean])
		}
		if rest, ok := strings.CutPrefix(full, prefix); ok {
			return rest
		}
		// Python compares code points.
		pr, fr := []rune(prefix), []rune(full)
		common := 0
		for common < len(pr) && common < len(fr) && pr[common] == fr[common] {
			common++
		}
		return string(fr[common:])
	}
	return ""
}

func utf8Bytes(s string) []int {
	out := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = int(s[i])
	}
	return out
}

// completionLogprobs is vLLM's conversion to the completions shape;
// text_offset counts code points from offset.
func completionLogprobs(lp *protocol.ChatCompletionLogProbs, offset int) *protocol.CompletionLogProbs {
	if lp == nil {
		return nil
	}
	out := &protocol.CompletionLogProbs{TextOffset: []int{}, TokenLogprobs: []*float64{}, Tokens: []string{},
		TopLogprobs: []*protocol.OrderedLogprobDict{}}
	if lp.Content == nil {
		return out
	}
	for _, c := range lp.Content {
		out.TextOffset = append(out.TextOffset, offset)
		out.Tokens = append(out.Tokens, c.Token)
		out.TokenLogprobs = append(out.TokenLogprobs, c.Logprob)
		var d *protocol.OrderedLogprobDict
		if len(c.TopLogprobs) > 0 {
			d = &protocol.OrderedLogprobDict{}
			for _, t := range c.TopLogprobs {
				d.Set(t.Token, t.Logprob)
			}
		}
		out.TopLogprobs = append(out.TopLogprobs, d)
		offset += utf8.RuneCountInString(c.Token)
	}
	return out
}

// contextTail advances the carried logprob context by a chunk's ids.
func contextTail(ctx, ids []int) []int {
	all := append(append([]int{}, ctx...), ids...)
	return all[max(len(all)-logprobContextWindow, 0):]
}
