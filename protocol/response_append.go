package protocol

import (
	"strconv"

	"github.com/vrender/vrender/internal/wire"
)

// Append writers for the non-streaming derender answers, the completion
// derender stream answer, the OpenAI server's non-streaming answers and
// error bodies. Their bytes are what encoding/json wrote for these types
// (floats included), which TestResponseAppendMatchesEncodingJSON checks.

// AppendJSON appends the chat completion.
func (r *ChatCompletionResponse) AppendJSON(dst []byte) ([]byte, error) {
	w := objectWriter{b: append(dst, '{')}
	w.responseHead(r.ID, r.Object, r.Created, r.Model)
	writeList(&w, "choices", r.Choices, func(c *ChatCompletionChoice) {
		w.raw(appendChatChoice(w.b, c.Index, &c.Message, c.Logprobs, c.FinishReason, c.StopReason, c.TokenIDs, nil, false))
	})
	w.optString("service_tier", r.ServiceTier)
	w.optString("system_fingerprint", r.SystemFingerprint)
	w.usage(r.Usage)
	w.raw(wire.AppendRaw(w.key("prompt_logprobs"), r.PromptLogprobs))
	w.b = appendIntsOrNull(w.key("prompt_token_ids"), r.PromptTokenIDs)
	w.optString("prompt_text", r.PromptText)
	w.transferTail(r.KVTransferParams, r.ECTransferParams, r.Metrics)
	return append(w.b, '}'), w.err
}

// AppendJSON appends the OpenAI server's chat completion.
func (r *ServedChatResponse) AppendJSON(dst []byte) ([]byte, error) {
	w := objectWriter{b: append(dst, '{')}
	w.responseHead(r.ID, r.Object, r.Created, r.Model)
	writeList(&w, "choices", r.Choices, func(c *ServedChatChoice) {
		w.raw(appendChatChoice(w.b, c.Index, &c.Message, c.Logprobs, c.FinishReason, c.StopReason, c.TokenIDs, c.RoutedExperts, true))
	})
	w.optString("service_tier", r.ServiceTier)
	w.optString("system_fingerprint", r.SystemFingerprint)
	w.usage(r.Usage)
	w.raw(wire.AppendRaw(w.key("prompt_logprobs"), r.PromptLogprobs))
	w.b = appendIntsOrNull(w.key("prompt_token_ids"), r.PromptTokenIDs)
	w.optString("prompt_text", r.PromptText)
	w.transferTail(r.KVTransferParams, r.ECTransferParams, r.Metrics)
	return append(w.b, '}'), w.err
}

// appendChatChoice writes a chat choice; the OpenAI server's choices also
// carry routed_experts.
func appendChatChoice(dst []byte, index int, m *ChatMessage, lp *ChatCompletionLogProbs, finish *string,
	stop []byte, tokenIDs []int, routed *string, served bool) ([]byte, error) {
	w := objectWriter{b: append(dst, '{')}
	w.b = strconv.AppendInt(w.key("index"), int64(index), 10)
	w.raw(m.appendJSON(w.key("message")))
	w.raw(lp.appendJSON(w.key("logprobs")))
	w.optString("finish_reason", finish)
	w.raw(wire.AppendRaw(w.key("stop_reason"), stop))
	w.b = appendIntsOrNull(w.key("token_ids"), tokenIDs)
	if served {
		w.optString("routed_experts", routed)
	}
	return append(w.b, '}'), w.err
}

func (m *ChatMessage) appendJSON(dst []byte) ([]byte, error) {
	w := objectWriter{b: append(dst, '{')}
	w.b = wire.AppendString(w.key("role"), m.Role)
	w.optString("content", m.Content)
	w.optString("refusal", m.Refusal)
	w.raw(wire.AppendRaw(w.key("annotations"), m.Annotations))
	w.raw(wire.AppendRaw(w.key("audio"), m.Audio))
	w.raw(wire.AppendRaw(w.key("function_call"), m.FunctionCall))
	if len(m.ToolCalls) > 0 {
		w.b = append(w.key("tool_calls"), '[')
		for i := range m.ToolCalls {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			tc := &m.ToolCalls[i]
			w.b = wire.AppendString(append(w.b, `{"id":`...), tc.ID)
			w.b = wire.AppendString(append(w.b, `,"type":`...), tc.Type)
			w.b = wire.AppendString(append(w.b, `,"function":{"name":`...), tc.Function.Name)
			w.b = wire.AppendString(append(w.b, `,"arguments":`...), tc.Function.Arguments)
			w.b = append(w.b, "}}"...)
		}
		w.b = append(w.b, ']')
	}
	w.optString("reasoning", m.Reasoning)
	if len(m.ReasoningContent) > 0 {
		w.raw(wire.AppendRaw(w.key("reasoning_content"), m.ReasoningContent))
	}
	return append(w.b, '}'), w.err
}

// AppendJSON appends the completion.
func (r *CompletionResponse) AppendJSON(dst []byte) ([]byte, error) {
	w := objectWriter{b: append(dst, '{')}
	w.responseHead(r.ID, r.Object, r.Created, r.Model)
	writeList(&w, "choices", r.Choices, func(c *CompletionChoice) {
		w.raw(appendCompletionChoice(w.b, c.Index, c.Text, c.Logprobs, c.FinishReason, c.StopReason, c.TokenIDs,
			c.PromptLogprobs, c.PromptTokenIDs, nil, false))
	})
	w.completionTail(r.ServiceTier, r.SystemFingerprint, r.Usage)
	w.transferTail(r.KVTransferParams, r.ECTransferParams, r.Metrics)
	return append(w.b, '}'), w.err
}

// AppendJSON appends the OpenAI server's completion.
func (r *ServedCompletionResponse) AppendJSON(dst []byte) ([]byte, error) {
	w := objectWriter{b: append(dst, '{')}
	w.responseHead(r.ID, r.Object, r.Created, r.Model)
	writeList(&w, "choices", r.Choices, func(c *ServedCompletionChoice) {
		w.raw(appendCompletionChoice(w.b, c.Index, c.Text, c.Logprobs, c.FinishReason, c.StopReason, c.TokenIDs,
			c.PromptLogprobs, c.PromptTokenIDs, c.RoutedExperts, true))
	})
	w.completionTail(r.ServiceTier, r.SystemFingerprint, r.Usage)
	w.transferTail(r.KVTransferParams, r.ECTransferParams, r.Metrics)
	return append(w.b, '}'), w.err
}

func (w *objectWriter) completionTail(tier, fingerprint *string, u *UsageInfo) {
	w.optString("service_tier", tier)
	w.optString("system_fingerprint", fingerprint)
	w.usage(u)
}

// transferTail ends a chat or completion response as vLLM bf578e1's
// models do: kv_transfer_params, ec_transfer_params, metrics.
func (w *objectWriter) transferTail(kv, ec, metrics []byte) {
	w.raw(wire.AppendRaw(w.key("kv_transfer_params"), kv))
	w.raw(wire.AppendRaw(w.key("ec_transfer_params"), ec))
	w.raw(wire.AppendRaw(w.key("metrics"), metrics))
}

// appendCompletionChoice writes a completion choice; a stream choice
// (stream) stops after token_ids, the OpenAI server's (served) ends with
// routed_experts.
func appendCompletionChoice(dst []byte, index int, text string, lp *CompletionLogProbs, finish *string, stop []byte,
	tokenIDs []int, promptLogprobs []byte, promptTokenIDs []int, routed *string, served bool) ([]byte, error) {
	w := objectWriter{b: append(dst, '{')}
	w.completionChoiceHead(index, text, lp, finish, stop, tokenIDs)
	w.raw(wire.AppendRaw(w.key("prompt_logprobs"), promptLogprobs))
	w.b = appendIntsOrNull(w.key("prompt_token_ids"), promptTokenIDs)
	if served {
		w.optString("routed_experts", routed)
	}
	return append(w.b, '}'), w.err
}

func (w *objectWriter) completionChoiceHead(index int, text string, lp *CompletionLogProbs, finish *string, stop []byte, tokenIDs []int) {
	w.b = strconv.AppendInt(w.key("index"), int64(index), 10)
	w.b = wire.AppendString(w.key("text"), text)
	w.raw(lp.appendJSON(w.key("logprobs")))
	w.optString("finish_reason", finish)
	w.raw(wire.AppendRaw(w.key("stop_reason"), stop))
	w.b = appendIntsOrNull(w.key("token_ids"), tokenIDs)
}

// AppendJSON appends the chunk and the state to echo.
func (r *DerenderCompletionStreamResponse) AppendJSON(dst []byte) ([]byte, error) {
	return appendDerenderStream(dst, &r.Chunk, &r.StreamState)
}

func appendDerenderStream(dst []byte, chunk Appender, state *DerenderStreamState) ([]byte, error) {
	w := objectWriter{b: append(dst, '{')}
	w.raw(chunk.AppendJSON(w.key("chunk")))
	w.b = state.appendJSON(w.key("stream_state"))
	return append(w.b, '}'), w.err
}

// AppendJSON appends one completion stream chunk.
func (c *CompletionStreamResponse) AppendJSON(dst []byte) ([]byte, error) {
	w := objectWriter{b: append(dst, '{')}
	w.responseHead(c.ID, c.Object, c.Created, c.Model)
	writeList(&w, "choices", c.Choices, func(ch *CompletionStreamChoice) {
		e := objectWriter{b: append(w.b, '{')}
		e.completionChoiceHead(ch.Index, ch.Text, ch.Logprobs, ch.FinishReason, ch.StopReason, ch.TokenIDs)
		w.b, w.err = append(e.b, '}'), firstErr(w.err, e.err)
	})
	w.usage(c.Usage)
	w.raw(wire.AppendRaw(w.key("metrics"), c.Metrics))
	return append(w.b, '}'), w.err
}

func (w *objectWriter) responseHead(id, object string, created int64, model string) {
	w.b = wire.AppendString(w.key("id"), id)
	w.b = wire.AppendString(w.key("object"), object)
	w.b = strconv.AppendInt(w.key("created"), created, 10)
	w.b = wire.AppendString(w.key("model"), model)
}

func (w *objectWriter) usage(u *UsageInfo) {
	w.key("usage")
	if u == nil {
		w.b = append(w.b, "null"...)
	} else {
		w.raw(u.appendJSON(w.b))
	}
}

// appendJSON appends the logprobs; nil is null.
func (l *CompletionLogProbs) appendJSON(dst []byte) ([]byte, error) {
	if l == nil {
		return append(dst, "null"...), nil
	}
	w := objectWriter{b: append(dst, '{')}
	w.b = appendIntsOrNull(w.key("text_offset"), l.TextOffset)
	writeList(&w, "token_logprobs", l.TokenLogprobs, func(v **float64) { w.floatOrNull(*v) })
	w.b = appendStringsOrNull(w.key("tokens"), l.Tokens)
	writeList(&w, "top_logprobs", l.TopLogprobs, func(d **OrderedLogprobDict) { w.raw((*d).AppendJSON(w.b)) })
	return append(w.b, '}'), w.err
}

// writeList writes name: items as a JSON list, null when nil, each item
// through item (which appends to w).
func writeList[T any](w *objectWriter, name string, items []T, item func(*T)) {
	w.key(name)
	if items == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '[')
	for i := range items {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		item(&items[i])
	}
	w.b = append(w.b, ']')
}

// AppendJSON writes the dict in insertion order; a nil dict is null.
func (d *OrderedLogprobDict) AppendJSON(dst []byte) ([]byte, error) {
	if d == nil {
		return append(dst, "null"...), nil
	}
	w := objectWriter{b: append(dst, '{')}
	for i, k := range d.Keys {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = append(wire.AppendString(w.b, k), ':')
		w.floatOrNull(d.Values[i])
	}
	return append(w.b, '}'), w.err
}

func (w *objectWriter) floatOrNull(v *float64) {
	if v == nil {
		w.b = append(w.b, "null"...)
	} else {
		w.goFloat(*v)
	}
}

// AppendJSON appends the error body.
func (e ErrorResponse) AppendJSON(dst []byte) ([]byte, error) {
	dst = wire.AppendString(append(dst, `{"error":{"message":`...), e.Error.Message)
	dst = wire.AppendString(append(dst, `,"type":`...), e.Error.Type)
	dst = append(dst, `,"param":`...)
	if e.Error.Param == nil {
		dst = append(dst, "null"...)
	} else {
		dst = wire.AppendString(dst, *e.Error.Param)
	}
	dst = strconv.AppendInt(append(dst, `,"code":`...), int64(e.Error.Code), 10)
	return append(dst, "}}"...), nil
}
