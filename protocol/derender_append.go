package protocol

import (
	"math"
	"strconv"

	"github.com/vrender/vrender/internal/wire"
)

// Append writers for the streaming chat derender answer, the per-token hot
// path of the derender tier. Their bytes are encoding/json's for these
// types (floats included), which TestDerenderAppendMatchesEncodingJSON
// checks.

// AppendJSON appends the chunk and the state to echo.
func (r *DerenderChatStreamResponse) AppendJSON(dst []byte) ([]byte, error) {
	return appendDerenderStream(dst, &r.Chunk, &r.StreamState)
}

// AppendJSON appends one chat stream chunk.
func (c *ChatCompletionStreamResponse) AppendJSON(dst []byte) ([]byte, error) {
	w := objectWriter{b: append(dst, '{')}
	w.responseHead(c.ID, c.Object, c.Created, c.Model)
	writeList(&w, "choices", c.Choices, func(ch *ChatStreamChoice) { w.raw(ch.appendJSON(w.b)) })
	w.usage(c.Usage)
	w.optString("system_fingerprint", c.SystemFingerprint)
	w.raw(wire.AppendRaw(w.key("metrics"), c.Metrics))
	return append(w.b, '}'), w.err
}

func (c *ChatStreamChoice) appendJSON(dst []byte) ([]byte, error) {
	w := objectWriter{b: append(dst, '{')}
	w.b = strconv.AppendInt(w.key("index"), int64(c.Index), 10)
	w.b = c.Delta.appendJSON(w.key("delta"))
	w.raw(c.Logprobs.appendJSON(w.key("logprobs")))
	w.optString("finish_reason", c.FinishReason)
	w.raw(wire.AppendRaw(w.key("stop_reason"), c.StopReason))
	w.b = appendIntsOrNull(w.key("token_ids"), c.TokenIDs)
	return append(w.b, '}'), w.err
}

func (d *DeltaMessage) appendJSON(dst []byte) []byte {
	w := objectWriter{b: append(dst, '{')}
	for _, f := range []struct {
		name string
		v    *string
	}{{"role", d.Role}, {"content", d.Content}, {"reasoning", d.Reasoning}, {"reasoning_content", d.ReasoningContent}} {
		if f.v != nil {
			w.b = wire.AppendString(w.key(f.name), *f.v)
		}
	}
	if len(d.ToolCalls) > 0 {
		w.b = append(w.key("tool_calls"), '[')
		for i, tc := range d.ToolCalls {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			t := objectWriter{b: append(w.b, '{')}
			t.b = strconv.AppendInt(t.key("index"), int64(tc.Index), 10)
			if tc.ID != nil {
				t.b = wire.AppendString(t.key("id"), *tc.ID)
			}
			if tc.Type != nil {
				t.b = wire.AppendString(t.key("type"), *tc.Type)
			}
			f := objectWriter{b: append(t.key("function"), '{')}
			if tc.Function.Name != nil {
				f.b = wire.AppendString(f.key("name"), *tc.Function.Name)
			}
			if tc.Function.Arguments != nil {
				f.b = wire.AppendString(f.key("arguments"), *tc.Function.Arguments)
			}
			w.b = append(append(f.b, '}'), '}')
		}
		w.b = append(w.b, ']')
	}
	return append(w.b, '}')
}

// appendJSON appends the logprobs; nil is null.
func (l *ChatCompletionLogProbs) appendJSON(dst []byte) ([]byte, error) {
	if l == nil {
		return append(dst, "null"...), nil
	}
	w := objectWriter{b: append(dst, '{')}
	w.key("content")
	if l.Content == nil {
		w.b = append(w.b, "null"...)
		return append(w.b, '}'), nil
	}
	w.b = append(w.b, '[')
	for i := range l.Content {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		c := &l.Content[i]
		e := objectWriter{b: append(w.b, '{')}
		e.logprobEntry(c.Token, c.Logprob, c.Bytes)
		e.key("top_logprobs")
		if c.TopLogprobs == nil {
			e.b = append(e.b, "null"...)
		} else {
			e.b = append(e.b, '[')
			for j := range c.TopLogprobs {
				if j > 0 {
					e.b = append(e.b, ',')
				}
				t := objectWriter{b: append(e.b, '{')}
				t.logprobEntry(c.TopLogprobs[j].Token, c.TopLogprobs[j].Logprob, c.TopLogprobs[j].Bytes)
				e.b, e.err = append(t.b, '}'), firstErr(e.err, t.err)
			}
			e.b = append(e.b, ']')
		}
		w.b, w.err = append(e.b, '}'), firstErr(w.err, e.err)
	}
	return append(w.b, ']', '}'), w.err
}

func (w *objectWriter) logprobEntry(token string, logprob *float64, bytes []int) {
	w.b = wire.AppendString(w.key("token"), token)
	w.key("logprob")
	if logprob == nil {
		w.b = append(w.b, "null"...)
	} else {
		w.goFloat(*logprob)
	}
	w.b = appendIntsOrNull(w.key("bytes"), bytes)
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// goFloat appends f as encoding/json writes a float64 (ES6 number
// formatting), which these bodies have always used; inf and nan are an
// error there too.
func (w *objectWriter) goFloat(f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		if w.err == nil {
			w.err = &unsupportedFloatError{f}
		}
		w.b = append(w.b, "null"...)
		return
	}
	fmt := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmt = 'e'
	}
	n := len(w.b)
	w.b = strconv.AppendFloat(w.b, f, fmt, -1, 64)
	if fmt == 'e' {
		// clean up e-09 to e-9
		if m := len(w.b) - n; m >= 4 && w.b[len(w.b)-4] == 'e' && w.b[len(w.b)-3] == '-' && w.b[len(w.b)-2] == '0' {
			w.b[len(w.b)-2] = w.b[len(w.b)-1]
			w.b = w.b[:len(w.b)-1]
		}
	}
}

type unsupportedFloatError struct{ f float64 }

func (e *unsupportedFloatError) Error() string {
	return "protocol: unsupported float value " + strconv.FormatFloat(e.f, 'g', -1, 64)
}

func (u *UsageInfo) appendJSON(dst []byte) ([]byte, error) {
	dst = strconv.AppendInt(append(dst, `{"prompt_tokens":`...), int64(u.PromptTokens), 10)
	dst = strconv.AppendInt(append(dst, `,"total_tokens":`...), int64(u.TotalTokens), 10)
	dst = strconv.AppendInt(append(dst, `,"completion_tokens":`...), int64(u.CompletionTokens), 10)
	dst, err := wire.AppendRaw(append(dst, `,"prompt_tokens_details":`...), u.PromptTokensDetails)
	return append(dst, '}'), err
}

func (s *DerenderStreamState) appendJSON(dst []byte) []byte {
	w := objectWriter{b: append(dst, '{')}
	w.b = appendStringsOrNull(w.key("prev_tokens"), s.PrevTokens)
	w.b = strconv.AppendInt(w.key("prefix_offset"), int64(s.PrefixOffset), 10)
	w.b = strconv.AppendInt(w.key("read_offset"), int64(s.ReadOffset), 10)
	w.b = strconv.AppendBool(w.key("role_sent"), s.RoleSent)
	w.b = appendIntsOrNull(w.key("logprob_context_token_ids"), s.LogprobContextTokenIDs)
	w.b = strconv.AppendInt(w.key("logprob_text_offset"), int64(s.LogprobTextOffset), 10)
	w.b = appendIntsOrNull(w.key("output_token_ids"), s.OutputTokenIDs)
	w.b = appendIntsOrNull(w.key("output_chunk_lens"), s.OutputChunkLens)
	w.b = strconv.AppendBool(w.key("tools_streamed"), s.ToolsStreamed)
	w.b = appendStringsOrNull(w.key("last_tool_call_ids"), s.LastToolCallIDs)
	if s.VrenderCheckpoint != "" {
		w.b = wire.AppendString(w.key("vrender_checkpoint"), s.VrenderCheckpoint)
	}
	return append(w.b, '}')
}

func appendStringsOrNull(dst []byte, items []string) []byte {
	if items == nil {
		return append(dst, "null"...)
	}
	return wire.AppendStrings(dst, items)
}
