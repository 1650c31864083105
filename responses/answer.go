package responses

import (
	"encoding/json"
	"strconv"

	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// The bodies of OpenAI's /v1/responses as vLLM writes them: the answer is
// Response.model_dump() (every member, nulls included) and each
// stream event openai-python's event model dumped with model_dump_json(),
// members in the models' declaration order
// (vllm/entrypoints/openai/responses/protocol.py, serving.py,
// simple_streaming_events.py).

// Response is vLLM's Response as from_request fills it.
// Raw members are compact JSON as they go out (nil is null); Output is the encoded
// list of output items.
type Response struct {
	ID                string
	CreatedAt         int64
	Incomplete        bool // status "incomplete": incomplete_details {"reason":"max_output_tokens"}
	Instructions      *string
	Metadata          json.RawMessage
	Model             string
	Output            []byte
	ParallelToolCalls bool
	Temperature       float64
	ToolChoice        json.RawMessage
	Tools             json.RawMessage
	TopP              float64
	MaxOutputTokens   int
	MaxToolCalls      *int
	Reasoning         json.RawMessage
	Status            string
	Text              json.RawMessage
	TopLogprobs       *int
	Truncation        string
	Usage             *Usage
	User              *string
}

// Usage is ResponseUsage as vLLM's SimpleContext fills it.
type Usage struct {
	Input, Output int
}

// AppendResponse appends r as model_dump() writes it.
func AppendResponse(dst []byte, r *Response) []byte {
	dst = append(dst, `{"id":`...)
	dst = wire.AppendString(dst, r.ID)
	dst = append(dst, `,"created_at":`...)
	dst = strconv.AppendInt(dst, r.CreatedAt, 10)
	dst = append(dst, `,"incomplete_details":`...)
	if r.Incomplete {
		dst = append(dst, `{"reason":"max_output_tokens"}`...)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"instructions":`...)
	dst = appendOptString(dst, r.Instructions)
	dst = append(dst, `,"metadata":`...)
	dst = protocol.AppendRawOrNull(dst, r.Metadata)
	dst = append(dst, `,"model":`...)
	dst = wire.AppendString(dst, r.Model)
	dst = append(dst, `,"object":"response","output":`...)
	if len(r.Output) == 0 {
		dst = append(dst, "[]"...)
	} else {
		dst = append(dst, r.Output...)
	}
	dst = append(dst, `,"parallel_tool_calls":`...)
	dst = wire.AppendBool(dst, r.ParallelToolCalls)
	dst = append(dst, `,"temperature":`...)
	dst = pyfmt.AppendFloatRepr(dst, r.Temperature)
	dst = append(dst, `,"tool_choice":`...)
	dst = protocol.AppendRawOrNull(dst, r.ToolChoice)
	dst = append(dst, `,"tools":`...)
	if len(r.Tools) == 0 {
		dst = append(dst, "[]"...)
	} else {
		dst = append(dst, r.Tools...)
	}
	dst = append(dst, `,"top_p":`...)
	dst = pyfmt.AppendFloatRepr(dst, r.TopP)
	dst = append(dst, `,"background":false,"max_output_tokens":`...)
	dst = strconv.AppendInt(dst, int64(r.MaxOutputTokens), 10)
	dst = append(dst, `,"max_tool_calls":`...)
	dst = appendOptInt(dst, r.MaxToolCalls)
	dst = append(dst, `,"previous_response_id":null,"prompt":null,"reasoning":`...)
	dst = protocol.AppendRawOrNull(dst, r.Reasoning)
	dst = append(dst, `,"service_tier":"auto","status":`...)
	dst = wire.AppendString(dst, r.Status)
	dst = append(dst, `,"text":`...)
	dst = protocol.AppendRawOrNull(dst, r.Text)
	dst = append(dst, `,"top_logprobs":`...)
	dst = appendOptInt(dst, r.TopLogprobs)
	dst = append(dst, `,"truncation":`...)
	dst = wire.AppendString(dst, r.Truncation)
	dst = append(dst, `,"usage":`...)
	if u := r.Usage; u == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, `{"input_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.Input), 10)
		// SimpleContext keeps no per-turn metrics and counts no reasoning
		// or cached tokens ("not implemented yet" in vLLM).
		dst = append(dst, `,"input_tokens_details":{"cached_tokens":0,"input_tokens_per_turn":[],"cached_tokens_per_turn":[]},"output_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.Output), 10)
		dst = append(dst, `,"output_tokens_details":{"reasoning_tokens":0,"tool_output_tokens":0,"output_tokens_per_turn":[],"tool_output_tokens_per_turn":[]},"total_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.Input+u.Output), 10)
		dst = append(dst, '}')
	}
	dst = append(dst, `,"user":`...)
	dst = appendOptString(dst, r.User)
	return append(dst, `,"input_messages":null,"output_messages":null}`...)
}

func appendOptString(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return wire.AppendString(dst, *s)
}

func appendOptInt(dst []byte, n *int) []byte {
	if n == nil {
		return append(dst, "null"...)
	}
	return strconv.AppendInt(dst, int64(*n), 10)
}

// Logprob is one sampled token of an output_text's logprobs
// (openai's Logprob: token, bytes, logprob, top_logprobs).
type Logprob struct {
	Token   string
	Bytes   []int
	Logprob float64
	Top     []Logprob
}

func appendResponsesLogprobs(dst []byte, lps []Logprob, top bool) []byte {
	return appendLogprobList(dst, lps, top, true)
}

// AppendStreamLogprobs appends the logprobs of a streamed text event
// (response_text_delta_event.Logprob: token, logprob, top_logprobs, no
// bytes).
func AppendStreamLogprobs(dst []byte, lps []Logprob) []byte {
	return appendLogprobList(dst, lps, true, false)
}

func appendLogprobList(dst []byte, lps []Logprob, top, withBytes bool) []byte {
	dst = append(dst, '[')
	for i := range lps {
		if i > 0 {
			dst = append(dst, ',')
		}
		lp := &lps[i]
		dst = append(dst, `{"token":`...)
		dst = wire.AppendString(dst, lp.Token)
		if withBytes {
			dst = append(dst, `,"bytes":`...)
			dst = wire.AppendInts(dst, lp.Bytes)
		}
		dst = append(dst, `,"logprob":`...)
		dst = pyfmt.AppendFloatRepr(dst, lp.Logprob)
		if top {
			dst = append(dst, `,"top_logprobs":`...)
			dst = appendLogprobList(dst, lp.Top, false, withBytes)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// ItemState is which of its three shapes an output item is written in.
type ItemState int

const (
	// ItemAdded is response.output_item.added's item (in_progress).
	ItemAdded ItemState = iota
	// ItemDone is response.output_item.done's item (completed).
	ItemDone
	// ItemFinal is the item in the response object: the shape
	// build_response_output_items gives it.
	ItemFinal
)

// AppendReasoningItem appends a reasoning output item.
func AppendReasoningItem(dst []byte, id, text string, st ItemState) []byte {
	dst = append(dst, `{"id":`...)
	dst = wire.AppendString(dst, id)
	dst = append(dst, `,"summary":[],"type":"reasoning","content":`...)
	if st == ItemAdded {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, `[{"text":`...)
		dst = wire.AppendString(dst, text)
		dst = append(dst, `,"type":"reasoning_text"}]`...)
	}
	dst = append(dst, `,"encrypted_content":null,"status":`...)
	switch st {
	case ItemAdded:
		dst = append(dst, `"in_progress"`...)
	case ItemDone:
		dst = append(dst, `"completed"`...)
	default:
		dst = append(dst, "null"...)
	}
	return append(dst, '}')
}

// AppendOutputText appends an output_text part; logprobs nil is null,
// empty is [].
func AppendOutputText(dst []byte, text string, logprobs []Logprob) []byte {
	dst = append(dst, `{"annotations":[],"text":`...)
	dst = wire.AppendString(dst, text)
	dst = append(dst, `,"type":"output_text","logprobs":`...)
	if logprobs == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendResponsesLogprobs(dst, logprobs, true)
	}
	return append(dst, '}')
}

// AppendMessageItem appends an assistant message output item with one
// output_text part (none when added). The done item carries the extra
// annotations and logprobs members vLLM passes to the model (logprobs are
// the streamed shape there, and the part's own are null).
func AppendMessageItem(dst []byte, id, text string, logprobs []Logprob, st ItemState) []byte {
	dst = append(dst, `{"id":`...)
	dst = wire.AppendString(dst, id)
	dst = append(dst, `,"content":[`...)
	switch st {
	case ItemFinal:
		dst = AppendOutputText(dst, text, logprobs)
	case ItemDone:
		dst = AppendOutputText(dst, text, nil)
	}
	dst = append(dst, `],"role":"assistant","status":`...)
	if st == ItemAdded {
		dst = append(dst, `"in_progress"`...)
	} else {
		dst = append(dst, `"completed"`...)
	}
	dst = append(dst, `,"type":"message"`...)
	if st == ItemDone {
		dst = append(dst, `,"annotations":[],"logprobs":`...)
		dst = AppendStreamLogprobs(dst, logprobs)
	}
	return append(dst, '}')
}

// AppendFunctionCallItem appends a function_call output item.
func AppendFunctionCallItem(dst []byte, id, callID, name, arguments string, st ItemState) []byte {
	dst = append(dst, `{"arguments":`...)
	dst = wire.AppendString(dst, arguments)
	dst = append(dst, `,"call_id":`...)
	dst = wire.AppendString(dst, callID)
	dst = append(dst, `,"name":`...)
	dst = wire.AppendString(dst, name)
	dst = append(dst, `,"type":"function_call","id":`...)
	dst = wire.AppendString(dst, id)
	if st == ItemAdded {
		dst = append(dst, `,"status":"in_progress"}`...)
	} else {
		dst = append(dst, `,"status":"completed"}`...)
	}
	return dst
}

// Event builds one SSE event of the Responses stream:
// "event: <type>\ndata: {...}\n\n", members appended between Begin and End.
type Event struct{ Buf []byte }

// Begin starts an event of type typ.
func (e *Event) Begin(typ string) {
	e.Buf = append(e.Buf[:0], "event: "...)
	e.Buf = append(e.Buf, typ...)
	e.Buf = append(e.Buf, "\ndata: {"...)
}

// Key starts the member k (after the first, with a comma).
func (e *Event) Key(k string) {
	if e.Buf[len(e.Buf)-1] != '{' {
		e.Buf = append(e.Buf, ',')
	}
	e.Buf = wire.AppendString(e.Buf, k)
	e.Buf = append(e.Buf, ':')
}

// Int adds an integer member.
func (e *Event) Int(k string, v int) {
	e.Key(k)
	e.Buf = strconv.AppendInt(e.Buf, int64(v), 10)
}

// String adds a string member.
func (e *Event) String(k, v string) {
	e.Key(k)
	e.Buf = wire.AppendString(e.Buf, v)
}

// Raw adds a member whose JSON is already encoded.
func (e *Event) Raw(k string, v []byte) {
	e.Key(k)
	e.Buf = append(e.Buf, v...)
}

// End closes the event with its sequence_number and type, the last two
// members of every openai-python event model.
func (e *Event) End(seq int, typ string) []byte {
	e.Int("sequence_number", seq)
	e.String("type", typ)
	e.Buf = append(e.Buf, "}\n\n"...)
	return e.Buf
}

// EndText closes a *.done text event, whose model declares text between
// sequence_number and type.
func (e *Event) EndText(seq int, text, typ string) []byte {
	e.Int("sequence_number", seq)
	e.String("text", text)
	e.String("type", typ)
	e.Buf = append(e.Buf, "}\n\n"...)
	return e.Buf
}
