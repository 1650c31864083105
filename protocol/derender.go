package protocol

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// The derender request bodies (vLLM's token_in_token_out/protocol.py):
// one path takes a non-streaming and a streaming shape, told apart by
// "stream". Members keep vLLM's names and defaults; a nil pointer is
// Python's None.

// LogprobTop is one alternative of an engine logprob entry. The engine
// names a token either by an integer token_id or by a "token_id:N" string
// in token (the two shapes vLLM's generate has used); derender fills in the
// text.
type LogprobTop struct {
	Token   string   `json:"token"`
	TokenID *int     `json:"token_id"`
	Logprob *float64 `json:"logprob"`
	Bytes   []int    `json:"bytes"`
}

// LogprobEntry is one sampled position of an engine logprobs list.
type LogprobEntry struct {
	LogprobTop
	TopLogprobs []LogprobTop `json:"top_logprobs"`
}

// UnmarshalJSON reads the embedded fields and top_logprobs (embedding
// alone would let LogprobTop's method-less fields shadow nothing, but keep
// it explicit for clarity of the wire shape).
func (e *LogprobEntry) UnmarshalJSON(data []byte) error {
	var w struct {
		Token       string       `json:"token"`
		TokenID     *int         `json:"token_id"`
		Logprob     *float64     `json:"logprob"`
		Bytes       []int        `json:"bytes"`
		TopLogprobs []LogprobTop `json:"top_logprobs"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*e = LogprobEntry{LogprobTop{w.Token, w.TokenID, w.Logprob, w.Bytes}, w.TopLogprobs}
	return nil
}

// ID returns the token id an entry names, from token_id or a "token_id:N"
// placeholder.
func (t *LogprobTop) ID() (int, bool) {
	if t.TokenID != nil {
		return *t.TokenID, true
	}
	s, ok := strings.CutPrefix(t.Token, "token_id:")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// GenerateLogProbs is the logprobs of one engine choice.
type GenerateLogProbs struct {
	Content []LogprobEntry `json:"content"`
}

// GenerateChoice is one choice of a generate response or stream event.
type GenerateChoice struct {
	Index        int               `json:"index"`
	Logprobs     *GenerateLogProbs `json:"logprobs"`
	FinishReason *string           `json:"finish_reason"`
	TokenIDs     []int             `json:"token_ids"`
	finishSet    bool
}

// UnmarshalJSON records whether finish_reason was given: a non-streaming
// choice defaults it to "stop", a stream choice to null.
func (c *GenerateChoice) UnmarshalJSON(data []byte) error {
	type plain GenerateChoice
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*c = GenerateChoice(p)
	_, c.finishSet = objectNode(data).Get("finish_reason")
	return nil
}

// GenerateUsage is the usage of a generate stream event.
type GenerateUsage struct {
	PromptTokens     *int `json:"prompt_tokens"`
	CompletionTokens *int `json:"completion_tokens"`
}

// GenerateResponse is the engine's non-streaming answer or one parsed SSE
// event (a GenerateStreamResponse) of /inference/v1/generate.
type GenerateResponse struct {
	RequestID        string           `json:"request_id"`
	Choices          []GenerateChoice `json:"choices"`
	Usage            *GenerateUsage   `json:"usage"`
	PromptLogprobs   json.RawMessage  `json:"prompt_logprobs"`
	KVTransferParams json.RawMessage  `json:"kv_transfer_params"`
	Metrics          json.RawMessage  `json:"metrics"`
	PromptTokenIDs   []int            `json:"prompt_token_ids"`
	OutputMode       *string          `json:"output_mode"`
}

// DerenderStreamState is what a streaming derender client carries from one
// call to the next, field for field vLLM's DerenderStreamState. The parser
// fields (output_token_ids onward) are used only with a parser configured.
type DerenderStreamState struct {
	PrevTokens             []string `json:"prev_tokens"`
	PrefixOffset           int      `json:"prefix_offset"`
	ReadOffset             int      `json:"read_offset"`
	RoleSent               bool     `json:"role_sent"`
	LogprobContextTokenIDs []int    `json:"logprob_context_token_ids"`
	LogprobTextOffset      int      `json:"logprob_text_offset"`
	OutputTokenIDs         []int    `json:"output_token_ids"`
	OutputChunkLens        []int    `json:"output_chunk_lens"`
	ToolsStreamed          bool     `json:"tools_streamed"`
	LastToolCallIDs        []string `json:"last_tool_call_ids"`
	// VrenderCheckpoint is vrender's signed parser checkpoint: with it the
	// client may drop output_token_ids, output_chunk_lens and the prompt.
	VrenderCheckpoint string `json:"vrender_checkpoint,omitempty"`
}

// MaxStatePrevTokens and MaxLogprobContext bound a carried state as vLLM
// does.
const (
	MaxStatePrevTokens = 1024
	MaxLogprobContext  = 4
)

// DerenderChatRequest is the non-streaming body of
// /v1/chat/completions/derender.
type DerenderChatRequest struct {
	Model            *string
	GenerateResponse GenerateResponse
	PromptTokens     *int
	PromptTokenIDs   []int
	ChatRequest      *ChatCompletionRequest
}

// DerenderChatStreamRequest is the streaming body (stream: true).
type DerenderChatStreamRequest struct {
	Model          *string
	GenerateChunk  GenerateResponse
	StreamState    *DerenderStreamState
	PromptTokens   *int
	PromptTokenIDs []int
	ChatRequest    *ChatCompletionRequest
}

// CompletionDecodeParams are the only fields derender reads from a
// completion_request.
type CompletionDecodeParams struct {
	SkipSpecialTokens          *bool `json:"skip_special_tokens"`
	SpacesBetweenSpecialTokens *bool `json:"spaces_between_special_tokens"`
}

// DerenderCompletionRequest is the non-streaming body of
// /v1/completions/derender.
type DerenderCompletionRequest struct {
	Model             *string
	GenerateResponses []GenerateResponse
	PromptTokens      []int
	PromptTokenIDs    [][]int
	CompletionRequest *CompletionDecodeParams
}

// DerenderCompletionStreamRequest is the streaming body of
// /v1/completions/derender.
type DerenderCompletionStreamRequest struct {
	Model             *string
	GenerateChunk     GenerateResponse
	StreamState       *DerenderStreamState
	PromptTokens      *int
	PromptTokenIDs    []int
	CompletionRequest *CompletionDecodeParams
}

// derenderBody walks one derender body, recording pydantic-style errors.
type derenderBody struct {
	*object
	cache ChatRequestCache // nil: decode every chat_request
}

// DecodeDerenderChat decodes the body of /v1/chat/completions/derender:
// exactly one of the results is non-nil. Errors are *ValidationError.
func DecodeDerenderChat(data []byte) (*DerenderChatRequest, *DerenderChatStreamRequest, error) {
	obj, fe := decodeDerenderBody(data, "DerenderChatRequest")
	return derenderChatOf(obj, fe, nil)
}

func derenderChatOf(obj *object, fe *pylax.FieldError, cache ChatRequestCache) (*DerenderChatRequest, *DerenderChatStreamRequest, error) {
	if fe != nil {
		return nil, nil, &pylax.ValidationError{Errors: []pylax.FieldError{*fe}}
	}
	b := derenderBody{object: obj, cache: cache}
	if b.isStream() {
		r := &DerenderChatStreamRequest{
			Model:          b.OptionalString("model"),
			GenerateChunk:  b.generate("generate_chunk", true),
			StreamState:    b.state(),
			PromptTokens:   b.optInt("prompt_tokens"),
			PromptTokenIDs: b.optIDs("prompt_token_ids"),
			ChatRequest:    b.chatRequest(),
		}
		if len(obj.Errs) > 0 {
			return nil, nil, &pylax.ValidationError{Errors: obj.Errs}
		}
		return nil, r, nil
	}
	r := &DerenderChatRequest{
		Model:            b.OptionalString("model"),
		GenerateResponse: b.generate("generate_response", false),
		PromptTokens:     b.optInt("prompt_tokens"),
		PromptTokenIDs:   b.optIDs("prompt_token_ids"),
		ChatRequest:      b.chatRequest(),
	}
	if len(obj.Errs) > 0 {
		return nil, nil, &pylax.ValidationError{Errors: obj.Errs}
	}
	return r, nil, nil
}

// DecodeDerenderCompletion decodes the body of /v1/completions/derender.
func DecodeDerenderCompletion(data []byte) (*DerenderCompletionRequest, *DerenderCompletionStreamRequest, error) {
	obj, fe := decodeDerenderBody(data, "DerenderCompletionRequest")
	if fe != nil {
		return nil, nil, &pylax.ValidationError{Errors: []pylax.FieldError{*fe}}
	}
	b := derenderBody{object: obj}
	if b.isStream() {
		r := &DerenderCompletionStreamRequest{
			Model:             b.OptionalString("model"),
			GenerateChunk:     b.generate("generate_chunk", true),
			StreamState:       b.state(),
			PromptTokens:      b.optInt("prompt_tokens"),
			PromptTokenIDs:    b.optIDs("prompt_token_ids"),
			CompletionRequest: b.completionParams(),
		}
		if len(obj.Errs) > 0 {
			return nil, nil, &pylax.ValidationError{Errors: obj.Errs}
		}
		return nil, r, nil
	}
	r := &DerenderCompletionRequest{Model: b.OptionalString("model")}
	items, ok := b.ListNodes("generate_responses", true)
	if ok {
		for i, item := range items {
			r.GenerateResponses = append(r.GenerateResponses, b.generateRaw(b.At("generate_responses", i), item.Raw, false))
		}
	}
	if raw, ok := obj.Member("prompt_tokens"); ok && !pylax.IsNull(raw) {
		var err error
		if r.PromptTokens, err = decodeIntList(raw); err != nil {
			b.Fail(b.At("prompt_tokens"), "list_type", "Input should be a valid list", raw)
		}
	}
	if raw, ok := obj.Member("prompt_token_ids"); ok && !pylax.IsNull(raw) {
		var err error
		if r.PromptTokenIDs, err = decodeIntLists(raw); err != nil {
			b.Fail(b.At("prompt_token_ids"), "list_type", "Input should be a valid list", raw)
		}
	}
	r.CompletionRequest = b.completionParams()
	if len(obj.Errs) > 0 {
		return nil, nil, &pylax.ValidationError{Errors: obj.Errs}
	}
	if r.PromptTokens != nil && len(r.PromptTokens) != len(r.GenerateResponses) {
		return nil, nil, &pylax.ValidationError{Errors: []pylax.FieldError{{Type: "value_error", Loc: []any{},
			Msg: fmt.Sprintf("Value error, prompt_tokens length (%d) must equal generate_responses length (%d)",
				len(r.PromptTokens), len(r.GenerateResponses)), Input: obj.Raw,
			Ctx: []pylax.CtxEntry{{Key: "error", Value: pylax.PyException{Class: "ValueError",
				Message: fmt.Sprintf("prompt_tokens length (%d) must equal generate_responses length (%d)",
					len(r.PromptTokens), len(r.GenerateResponses))}}}}}}
	}
	if r.PromptTokenIDs != nil && len(r.PromptTokenIDs) != len(r.GenerateResponses) {
		return nil, nil, &pylax.ValidationError{Errors: []pylax.FieldError{{Type: "value_error", Loc: []any{},
			Msg: fmt.Sprintf("Value error, prompt_token_ids length (%d) must equal generate_responses length (%d)",
				len(r.PromptTokenIDs), len(r.GenerateResponses)), Input: obj.Raw,
			Ctx: []pylax.CtxEntry{{Key: "error", Value: pylax.PyException{Class: "ValueError",
				Message: fmt.Sprintf("prompt_token_ids length (%d) must equal generate_responses length (%d)",
					len(r.PromptTokenIDs), len(r.GenerateResponses))}}}}}}
	}
	return r, nil, nil
}

// isStream is the union discriminator: a body whose stream is true is the
// streaming shape; absent, null or false is the non-streaming one.
func (b derenderBody) isStream() bool {
	raw, ok := b.Member("stream")
	if !ok || pylax.IsNull(raw) {
		return false
	}
	v, typ, _ := pylax.LaxBool(raw)
	return typ == "" && v
}

func (b derenderBody) optInt(name string) *int {
	raw, ok := b.Member(name)
	if !ok || pylax.IsNull(raw) {
		return nil
	}
	n, typ, msg := pylax.LaxInt(raw)
	if typ != "" {
		b.Fail(b.At(name), typ, msg, raw)
		return nil
	}
	v := int(n.Int64())
	return &v
}

func (b derenderBody) optIDs(name string) []int {
	raw, ok := b.Member(name)
	if !ok || pylax.IsNull(raw) {
		return nil
	}
	return b.TokenIDs(name)
}

func (b derenderBody) generate(name string, stream bool) GenerateResponse {
	raw, ok := b.Member(name)
	if !ok {
		b.Missing(name)
		return GenerateResponse{}
	}
	return b.generateRaw(b.At(name), raw, stream)
}

// generateRaw decodes one generate response; negative token ids are
// rejected as vLLM's validator does.
func (b derenderBody) generateRaw(loc []any, raw json.RawMessage, stream bool) GenerateResponse {
	var g GenerateResponse
	if pylax.Kind(raw) != '{' {
		b.Fail(loc, "model_type", "Input should be a valid dictionary or instance of GenerateResponse", raw)
		return g
	}
	var dec GenerateDecoder
	var hasChoices, hasRequestID bool
	if dec.Fast(raw, &g) == nil {
		// Fast reads members by their exact names and declines any other
		// spelling, so what it saw is what the body holds.
		hasChoices, hasRequestID = dec.seen&seenChoices != 0, dec.seen&seenRequestID != 0
	} else {
		g = GenerateResponse{}
		if err := json.Unmarshal(raw, &g); err != nil {
			b.Fail(loc, "value_error", "Value error, "+err.Error(), raw)
			return g
		}
		root := objectNode(raw)
		_, hasChoices = root.Get("choices")
		_, hasRequestID = root.Get("request_id")
	}
	if !hasChoices {
		b.Fail(append(loc, "choices"), "missing", "Field required", raw)
	}
	if g.RequestID == "" && !hasRequestID {
		g.RequestID = RandomUUID()
	}
	for i := range g.Choices {
		c := &g.Choices[i]
		if !stream && !c.finishSet {
			stop := "stop"
			c.FinishReason = &stop
		}
		for _, id := range c.TokenIDs {
			if id < 0 {
				b.Fail(append(loc, "choices", i, "token_ids"), "value_error",
					"Value error, token_ids must not contain negative values", raw)
				break
			}
		}
	}
	return g
}

func (b derenderBody) state() *DerenderStreamState {
	raw, ok := b.Member("stream_state")
	if !ok || pylax.IsNull(raw) {
		return nil
	}
	if ck, ok := checkpointOnly(raw); ok {
		// What a checkpoint client echoes on every call; nothing to check.
		return &DerenderStreamState{VrenderCheckpoint: ck}
	}
	s, err := decodeStreamState(raw)
	if err != nil {
		b.Fail(b.At("stream_state"), "model_type", "Input should be a valid dictionary or instance of DerenderStreamState", raw)
		return nil
	}
	loc := func(f string) []any { return b.At("stream_state", f) }
	switch {
	case len(s.PrevTokens) > MaxStatePrevTokens:
		b.Fail(loc("prev_tokens"), "value_error", fmt.Sprintf("Value error, prev_tokens length (%d) exceeds maximum (%d)",
			len(s.PrevTokens), MaxStatePrevTokens), raw)
	case s.PrefixOffset < 0:
		b.Fail(loc("prefix_offset"), "greater_than_equal", "Input should be greater than or equal to 0", raw, pylax.CtxEntry{Key: "ge", Value: 0})
	case s.ReadOffset < 0:
		b.Fail(loc("read_offset"), "greater_than_equal", "Input should be greater than or equal to 0", raw, pylax.CtxEntry{Key: "ge", Value: 0})
	case len(s.LogprobContextTokenIDs) > MaxLogprobContext:
		b.Fail(loc("logprob_context_token_ids"), "too_long",
			fmt.Sprintf("List should have at most %d items after validation, not %d", MaxLogprobContext, len(s.LogprobContextTokenIDs)), raw)
	case s.LogprobTextOffset < 0:
		b.Fail(loc("logprob_text_offset"), "greater_than_equal", "Input should be greater than or equal to 0", raw, pylax.CtxEntry{Key: "ge", Value: 0})
	}
	for i, n := range s.OutputChunkLens {
		if n <= 0 {
			b.Fail(b.At("stream_state", "output_chunk_lens", i), "greater_than", "Input should be greater than 0", raw, pylax.CtxEntry{Key: "gt", Value: 0})
			break
		}
	}
	for i, id := range s.OutputTokenIDs {
		if id < 0 {
			b.Fail(b.At("stream_state", "output_token_ids", i), "greater_than_equal", "Input should be greater than or equal to 0", raw, pylax.CtxEntry{Key: "ge", Value: 0})
			break
		}
	}
	return &s
}

// checkpointOnly reads a stream_state that is only
// {"vrender_checkpoint":"..."} with a plain checkpoint (plainString), as
// decodeStreamState would, without it; anything else is for decodeStreamState.
func checkpointOnly(raw []byte) (string, bool) {
	const head, tail = `{"vrender_checkpoint":`, `}`
	if len(raw) < len(head)+len(tail) || string(raw[:len(head)]) != head || string(raw[len(raw)-len(tail):]) != tail {
		return "", false
	}
	return pylax.PlainString(raw[len(head) : len(raw)-len(tail)])
}

// chatRequest validates chat_request as a ChatCompletionRequest, its
// errors located under chat_request.
func (b derenderBody) chatRequest() *ChatCompletionRequest {
	raw, ok := b.Member("chat_request")
	if !ok || pylax.IsNull(raw) {
		return nil
	}
	r, err := decodeChatRequestCached(raw, b.cache)
	if err != nil {
		if verr, ok := err.(*pylax.ValidationError); ok {
			for _, fe := range verr.Errors {
				fe.Loc = append(b.At("chat_request"), fe.Loc...)
				b.Errs = append(b.Errs, fe)
			}
			return nil
		}
		b.Fail(b.At("chat_request"), "value_error", "Value error, "+err.Error(), raw)
		return nil
	}
	return r
}

func (b derenderBody) completionParams() *CompletionDecodeParams {
	raw, ok := b.Member("completion_request")
	if !ok || pylax.IsNull(raw) {
		return nil
	}
	p, err := decodeCompletionParams(raw)
	if err != nil {
		b.Fail(b.At("completion_request"), "model_type", "Input should be a valid dictionary or instance of CompletionRequest", raw)
		return nil
	}
	return &p
}

// objectNode is the tree of data when it is one JSON object the body
// parser takes (nil otherwise, whose Get finds nothing): the members
// encoding/json just read, looked up by name.
func objectNode(data []byte) *wire.Node {
	root, err := wire.Parse(data)
	if err != nil || root.Kind != wire.Object {
		return nil
	}
	return root
}
