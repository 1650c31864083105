package anthropic

import (
	"encoding/json"
	"strconv"

	"github.com/vrender/vrender/internal/wire"
)

// The bodies of Anthropic's /v1/messages as vLLM writes them
// (vllm/entrypoints/anthropic/serving.py, protocol.py): the answer is
// AnthropicMessagesResponse.model_dump(exclude_none=True) through
// JSONResponse, the stream events AnthropicStreamEvent.model_dump_json(
// exclude_unset=True), so only the members vLLM sets appear, in the
// models' declaration order.

// Block is one content block of a Messages answer: "thinking"
// (Thinking, Signature), "text" (Text) or "tool_use" (ID, Name, Input, a
// JSON object).
type Block struct {
	Type      string
	Text      string
	Thinking  string
	Signature string
	ID        string
	Name      string
	Input     json.RawMessage
}

// StopReason maps a chat finish reason to vLLM's stop_reason
// (stop_reason_map); ok is false for reasons it leaves unmapped.
func StopReason(finish string) (reason string, ok bool) {
	switch finish {
	case "stop":
		return "end_turn", true
	case "length":
		return "max_tokens", true
	case "tool_calls":
		return "tool_use", true
	}
	return "", false
}

// AppendMessage appends the non-streaming answer. stopReason nil
// omits the member (exclude_none); kv nil omits kv_transfer_params.
func AppendMessage(dst []byte, id, model string, blocks []Block, stopReason *string, input, output int, kv json.RawMessage) ([]byte, error) {
	dst = append(dst, `{"id":`...)
	dst = wire.AppendString(dst, id)
	dst = append(dst, `,"type":"message","role":"assistant","content":[`...)
	for i := range blocks {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendAnthropicBlock(dst, &blocks[i]); err != nil {
			return dst, err
		}
	}
	dst = append(dst, `],"model":`...)
	dst = wire.AppendString(dst, model)
	if stopReason != nil {
		dst = append(dst, `,"stop_reason":`...)
		dst = wire.AppendString(dst, *stopReason)
	}
	dst = append(dst, `,"usage":`...)
	dst = appendAnthropicUsage(dst, input, output)
	if len(kv) > 0 && string(kv) != "null" {
		dst = append(dst, `,"kv_transfer_params":`...)
		var err error
		if dst, err = wire.AppendRaw(dst, kv); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func appendAnthropicBlock(dst []byte, b *Block) ([]byte, error) {
	dst = append(dst, `{"type":`...)
	dst = wire.AppendString(dst, b.Type)
	switch b.Type {
	case "text":
		dst = append(dst, `,"text":`...)
		dst = wire.AppendString(dst, b.Text)
	case "thinking":
		dst = append(dst, `,"thinking":`...)
		dst = wire.AppendString(dst, b.Thinking)
		if b.Signature != "" {
			dst = append(dst, `,"signature":`...)
			dst = wire.AppendString(dst, b.Signature)
		}
	case "tool_use":
		dst = append(dst, `,"id":`...)
		dst = wire.AppendString(dst, b.ID)
		dst = append(dst, `,"name":`...)
		dst = wire.AppendString(dst, b.Name)
		dst = append(dst, `,"input":`...)
		input := b.Input
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		var err error
		if dst, err = wire.AppendRaw(dst, input); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func appendAnthropicUsage(dst []byte, input, output int) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(input), 10)
	dst = append(dst, `,"output_tokens":`...)
	dst = strconv.AppendInt(dst, int64(output), 10)
	return append(dst, '}')
}

// AppendEvent starts an SSE event of the given type: the
// "event:" line and the "data: " prefix; the caller appends the JSON and
// "\n\n".
func AppendEvent(dst []byte, event string) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, event...)
	return append(dst, "\ndata: "...)
}

// AppendMessageStart appends message_start's data: the message
// with only the members vLLM sets (no type or role: exclude_unset drops
// their defaults).
func AppendMessageStart(dst []byte, id, model string, input int) []byte {
	dst = append(dst, `{"type":"message_start","message":{"id":`...)
	dst = wire.AppendString(dst, id)
	dst = append(dst, `,"content":[],"model":`...)
	dst = wire.AppendString(dst, model)
	dst = append(dst, `,"stop_reason":null,"stop_sequence":null,"usage":`...)
	dst = appendAnthropicUsage(dst, input, 0)
	return append(dst, "}}"...)
}

// AppendBlockStart appends content_block_start's data for an
// empty block: text and thinking start with "", tool_use with input {}.
func AppendBlockStart(dst []byte, index int, b *Block) []byte {
	dst = append(dst, `{"type":"content_block_start","content_block":`...)
	dst, _ = appendAnthropicBlock(dst, b) // an empty block's input is {}
	dst = append(dst, `,"index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	return append(dst, '}')
}

// AppendDelta appends content_block_delta's data: deltaType is
// text_delta, thinking_delta, input_json_delta or signature_delta, and
// text the member it carries.
func AppendDelta(dst []byte, index int, deltaType, text string) []byte {
	dst = append(dst, `{"type":"content_block_delta","delta":{"type":`...)
	dst = wire.AppendString(dst, deltaType)
	switch deltaType {
	case "text_delta":
		dst = append(dst, `,"text":`...)
	case "thinking_delta":
		dst = append(dst, `,"thinking":`...)
	case "input_json_delta":
		dst = append(dst, `,"partial_json":`...)
	default:
		dst = append(dst, `,"signature":`...)
	}
	dst = wire.AppendString(dst, text)
	dst = append(dst, `},"index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	return append(dst, '}')
}

// AppendBlockStop appends content_block_stop's data.
func AppendBlockStop(dst []byte, index int) []byte {
	dst = append(dst, `{"type":"content_block_stop","index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	return append(dst, '}')
}

// AppendMessageDelta appends message_delta's data; stopReason nil
// is written as null (vLLM sets it explicitly).
func AppendMessageDelta(dst []byte, stopReason *string, input, output int) []byte {
	dst = append(dst, `{"type":"message_delta","delta":{"stop_reason":`...)
	if stopReason == nil {
		dst = append(dst, "null"...)
	} else {
		dst = wire.AppendString(dst, *stopReason)
	}
	dst = append(dst, `},"usage":`...)
	dst = appendAnthropicUsage(dst, input, output)
	return append(dst, '}')
}

// AppendError appends Anthropic's error body,
// {"type":"error","error":{"type":...,"message":...}}: the data of an
// error event and the body of an error answer.
func AppendError(dst []byte, errType, message string) []byte {
	dst = append(dst, `{"type":"error","error":{"type":`...)
	dst = wire.AppendString(dst, errType)
	dst = append(dst, `,"message":`...)
	dst = wire.AppendString(dst, message)
	return append(dst, "}}"...)
}

// AppendCountTokens appends count_tokens' answer,
// AnthropicCountTokensResponse.model_dump(exclude_none=True).
func AppendCountTokens(dst []byte, n int) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, `,"context_management":{"original_input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, "}}"...)
}
