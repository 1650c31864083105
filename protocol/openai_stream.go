package protocol

import (
	"encoding/json"
	"strconv"

	"github.com/vrender/vrender/internal/wire"
)

// The OpenAI server's answers (vLLM's /v1/chat/completions and
// /v1/completions), as the orchestrator sends them. Stream chunks are
// written by hand: vLLM dumps them with exclude_unset=True, so which keys
// appear depends on how each chunk was built, and a chunk is written per
// token, where reflection-based encoding would dominate the cost.

// ServedChatChoice is one choice of a non-streaming chat completion
// (vLLM's ChatCompletionResponseChoice, every field).
type ServedChatChoice struct {
	Index         int                     `json:"index"`
	Message       ChatMessage             `json:"message"`
	Logprobs      *ChatCompletionLogProbs `json:"logprobs"`
	FinishReason  *string                 `json:"finish_reason"`
	StopReason    json.RawMessage         `json:"stop_reason"`
	TokenIDs      []int                   `json:"token_ids"`
	RoutedExperts *string                 `json:"routed_experts"`
}

// ServedChatResponse is vLLM's ChatCompletionResponse from the OpenAI
// server, dumped with model_dump(): every key, nulls included (the fields
// are chatResponse's).
type ServedChatResponse chatResponse[ServedChatChoice]

// ServedCompletionChoice is vLLM's CompletionResponseChoice.
type ServedCompletionChoice struct {
	Index          int                 `json:"index"`
	Text           string              `json:"text"`
	Logprobs       *CompletionLogProbs `json:"logprobs"`
	FinishReason   *string             `json:"finish_reason"`
	StopReason     json.RawMessage     `json:"stop_reason"`
	TokenIDs       []int               `json:"token_ids"`
	PromptLogprobs json.RawMessage     `json:"prompt_logprobs"`
	PromptTokenIDs []int               `json:"prompt_token_ids"`
	RoutedExperts  *string             `json:"routed_experts"`
}

// ServedCompletionResponse is vLLM's CompletionResponse from the OpenAI
// server (the fields are completionResponse's).
type ServedCompletionResponse completionResponse[ServedCompletionChoice]

// ChunkEncoder writes the stream chunks of one request; the parts every
// chunk shares are encoded once.
type ChunkEncoder struct {
	head []byte // {"id":…,"object":…,"created":…,"model":…,"choices":[
}

// NewChunkEncoder prepares the chunks of one request; object is
// "chat.completion.chunk" or "text_completion".
func NewChunkEncoder(id, object string, created int64, model string) *ChunkEncoder {
	b := []byte(`{"id":`)
	b = wire.AppendString(b, id)
	b = append(b, `,"object":`...)
	b = wire.AppendString(b, object)
	b = append(b, `,"created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = wire.AppendString(b, model)
	b = append(b, `,"choices":[`...)
	return &ChunkEncoder{head: b}
}

// AppendChatRole writes the first chunk of a chat choice: the role with
// content "", and (vLLM sets them explicitly) prompt_token_ids and
// prompt_text.
func (e *ChunkEncoder) AppendChatRole(dst []byte, index int, role string, usage *UsageInfo, promptTokenIDs []int) []byte {
	dst = append(dst, e.head...)
	dst = append(dst, `{"index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	dst = append(dst, `,"delta":{"role":`...)
	dst = wire.AppendString(dst, role)
	dst = append(dst, `,"content":""},"logprobs":null,"finish_reason":null}]`...)
	dst = appendChunkUsage(dst, usage)
	dst = append(dst, `,"prompt_token_ids":`...)
	dst = appendIntsOrNull(dst, promptTokenIDs)
	return append(dst, `,"prompt_text":null}`...)
}

// AppendChatEcho writes the chunk vLLM sends after the role chunks when a
// request asks for echo: the last message's content as a delta, with only
// the keys vLLM sets (no token_ids).
func (e *ChunkEncoder) AppendChatEcho(dst []byte, index int, content string, usage *UsageInfo) []byte {
	dst = append(dst, e.head...)
	dst = append(dst, `{"index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	dst = append(dst, `,"delta":{"content":`...)
	dst = wire.AppendString(dst, content)
	dst = append(dst, `},"logprobs":null,"finish_reason":null}]`...)
	dst = appendChunkUsage(dst, usage)
	return append(dst, '}')
}

// ChatChunkChoice is one choice of a chat delta chunk.
type ChatChunkChoice struct {
	Index    int
	Delta    *DeltaMessage
	Logprobs *ChatCompletionLogProbs
	// Final marks the choice's finish chunk, which carries finish_reason
	// and stop_reason.
	Final        bool
	FinishReason string
	StopReason   json.RawMessage
	TokenIDs     []int // written when return_token_ids; else null
}

// AppendChatDelta writes a chat chunk with one choice.
func (e *ChunkEncoder) AppendChatDelta(dst []byte, c *ChatChunkChoice, usage *UsageInfo) ([]byte, error) {
	dst = append(dst, e.head...)
	dst = append(dst, `{"index":`...)
	dst = strconv.AppendInt(dst, int64(c.Index), 10)
	dst = append(dst, `,"delta":`...)
	dst = appendDelta(dst, c.Delta)
	dst = append(dst, `,"logprobs":`...)
	var err error
	if dst, err = c.Logprobs.appendJSON(dst); err != nil {
		return nil, err
	}
	dst = append(dst, `,"finish_reason":`...)
	if c.Final {
		dst = wire.AppendString(dst, c.FinishReason)
		dst = append(dst, `,"stop_reason":`...)
		dst = AppendRawOrNull(dst, c.StopReason)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"token_ids":`...)
	dst = appendIntsOrNull(dst, c.TokenIDs)
	dst = append(dst, "}]"...)
	dst = appendChunkUsage(dst, usage)
	return append(dst, '}'), nil
}

// CompletionChunkChoice is one choice of a completion chunk; vLLM sets
// every field explicitly.
type CompletionChunkChoice struct {
	Index          int
	Text           string
	Logprobs       *CompletionLogProbs
	FinishReason   *string
	StopReason     json.RawMessage
	PromptTokenIDs []int
	TokenIDs       []int
}

// AppendCompletion writes a completion chunk with one choice.
func (e *ChunkEncoder) AppendCompletion(dst []byte, c *CompletionChunkChoice, usage *UsageInfo) ([]byte, error) {
	dst = append(dst, e.head...)
	dst = append(dst, `{"index":`...)
	dst = strconv.AppendInt(dst, int64(c.Index), 10)
	dst = append(dst, `,"text":`...)
	dst = wire.AppendString(dst, c.Text)
	dst = append(dst, `,"logprobs":`...)
	var err error
	if dst, err = c.Logprobs.appendJSON(dst); err != nil {
		return nil, err
	}
	dst = append(dst, `,"finish_reason":`...)
	if c.FinishReason != nil {
		dst = wire.AppendString(dst, *c.FinishReason)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"stop_reason":`...)
	dst = AppendRawOrNull(dst, c.StopReason)
	dst = append(dst, `,"prompt_token_ids":`...)
	dst = appendIntsOrNull(dst, c.PromptTokenIDs)
	dst = append(dst, `,"token_ids":`...)
	dst = appendIntsOrNull(dst, c.TokenIDs)
	dst = append(dst, "}]"...)
	dst = appendChunkUsage(dst, usage)
	return append(dst, '}'), nil
}

// AppendUsage writes the final usage chunk: choices [] and, as vLLM dumps
// it with exclude_none, no null keys.
func (e *ChunkEncoder) AppendUsage(dst []byte, usage *UsageInfo) []byte {
	dst = append(dst, e.head...)
	dst = append(dst, ']')
	dst = appendChunkUsage(dst, usage)
	return append(dst, '}')
}

// appendChunkUsage writes ',"usage":{…}' for a usage vLLM built with three
// fields (prompt_tokens_details unset), or nothing.
func appendChunkUsage(dst []byte, u *UsageInfo) []byte {
	if u == nil {
		return dst
	}
	dst = append(dst, `,"usage":{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.PromptTokens), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.TotalTokens), 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.CompletionTokens), 10)
	return append(dst, '}')
}

// appendDelta writes a DeltaMessage as exclude_unset dumps it: only the
// members set; tool_calls only when non-empty.
func appendDelta(dst []byte, d *DeltaMessage) []byte {
	dst = append(dst, '{')
	first := true
	str := func(key string, v *string) {
		if v == nil {
			return
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, '"')
		dst = append(dst, key...)
		dst = append(dst, `":`...)
		dst = wire.AppendString(dst, *v)
	}
	if d != nil {
		str("role", d.Role)
		str("content", d.Content)
		str("reasoning", d.Reasoning)
		str("reasoning_content", d.ReasoningContent)
		if len(d.ToolCalls) > 0 {
			if !first {
				dst = append(dst, ',')
			}
			dst = append(dst, `"tool_calls":[`...)
			for i := range d.ToolCalls {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendToolCallDelta(dst, &d.ToolCalls[i])
			}
			dst = append(dst, ']')
		}
	}
	return append(dst, '}')
}

// appendToolCallDelta writes a DeltaToolCall in vLLM's field order (id,
// type, index, function); function holds only the members set.
func appendToolCallDelta(dst []byte, tc *ToolCallDelta) []byte {
	dst = append(dst, '{')
	if tc.ID != nil {
		dst = append(dst, `"id":`...)
		dst = wire.AppendString(dst, *tc.ID)
		dst = append(dst, ',')
	}
	if tc.Type != nil {
		dst = append(dst, `"type":`...)
		dst = wire.AppendString(dst, *tc.Type)
		dst = append(dst, ',')
	}
	dst = append(dst, `"index":`...)
	dst = strconv.AppendInt(dst, int64(tc.Index), 10)
	dst = append(dst, `,"function":{`...)
	if tc.Function.Name != nil {
		dst = append(dst, `"name":`...)
		dst = wire.AppendString(dst, *tc.Function.Name)
	}
	if tc.Function.Arguments != nil {
		if tc.Function.Name != nil {
			dst = append(dst, ',')
		}
		dst = append(dst, `"arguments":`...)
		dst = wire.AppendString(dst, *tc.Function.Arguments)
	}
	return append(dst, "}}"...)
}

func appendIntsOrNull(dst []byte, ids []int) []byte {
	if ids == nil {
		return append(dst, "null"...)
	}
	return wire.AppendInts(dst, ids)
}

// AppendRawOrNull appends raw, or null when it is empty.
func AppendRawOrNull(dst []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, raw...)
}

// AppendStreamError writes the in-stream error event vLLM's generators
// yield: json.dumps of the ErrorResponse, so ASCII-only with ", " and ": "
// separators.
func AppendStreamError(dst []byte, e ErrorInfo) []byte {
	dst = append(dst, `{"error": {"message": `...)
	dst = wire.AppendStringASCII(dst, e.Message)
	dst = append(dst, `, "type": `...)
	dst = wire.AppendStringASCII(dst, e.Type)
	dst = append(dst, `, "param": `...)
	if e.Param == nil {
		dst = append(dst, "null"...)
	} else {
		dst = wire.AppendStringASCII(dst, *e.Param)
	}
	dst = append(dst, `, "code": `...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	return append(dst, "}}"...)
}
