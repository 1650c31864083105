package protocol

import "encoding/json"

// Response shapes of the derender endpoints: vLLM's ChatCompletionResponse,
// ChatCompletionStreamResponse, CompletionResponse and
// CompletionStreamResponse, with every field vLLM's model_dump writes.

// UsageInfo is vLLM's UsageInfo.
type UsageInfo struct {
	PromptTokens        int             `json:"prompt_tokens"`
	TotalTokens         int             `json:"total_tokens"`
	CompletionTokens    int             `json:"completion_tokens"`
	PromptTokensDetails json.RawMessage `json:"prompt_tokens_details"`
}

// NewUsage fills total_tokens.
func NewUsage(prompt, completion int) *UsageInfo {
	return &UsageInfo{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion,
		PromptTokensDetails: json.RawMessage("null")}
}

// ChatLogProb is one alternative of a resolved chat logprob.
type ChatLogProb struct {
	Token   string   `json:"token"`
	Logprob *float64 `json:"logprob"`
	Bytes   []int    `json:"bytes"`
}

// ChatLogProbsContent is one sampled position of resolved chat logprobs.
type ChatLogProbsContent struct {
	Token       string        `json:"token"`
	Logprob     *float64      `json:"logprob"`
	Bytes       []int         `json:"bytes"`
	TopLogprobs []ChatLogProb `json:"top_logprobs"`
}

// ChatCompletionLogProbs is vLLM's ChatCompletionLogProbs.
type ChatCompletionLogProbs struct {
	Content []ChatLogProbsContent `json:"content"`
}

// CompletionLogProbs is vLLM's CompletionLogProbs (parallel lists).
type CompletionLogProbs struct {
	TextOffset    []int                 `json:"text_offset"`
	TokenLogprobs []*float64            `json:"token_logprobs"`
	Tokens        []string              `json:"tokens"`
	TopLogprobs   []*OrderedLogprobDict `json:"top_logprobs"`
}

// OrderedLogprobDict is a token → logprob dict that keeps insertion order
// (and, as a Python dict built from a list, lets a later duplicate key
// overwrite the value in place).
type OrderedLogprobDict struct {
	Keys   []string
	Values []*float64
}

// Set inserts or overwrites key.
func (d *OrderedLogprobDict) Set(key string, v *float64) {
	for i, k := range d.Keys {
		if k == key {
			d.Values[i] = v
			return
		}
	}
	d.Keys = append(d.Keys, key)
	d.Values = append(d.Values, v)
}

// MarshalJSON is AppendJSON into a new buffer.
func (d *OrderedLogprobDict) MarshalJSON() ([]byte, error) { return d.AppendJSON(nil) }

// FunctionCall is a complete tool call's function.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolCall is one complete tool call of a chat message.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// ChatMessage is the assistant message of a chat choice. ReasoningContent
// is set (to the reasoning, null included) only with
// --reasoning-field-compat.
type ChatMessage struct {
	Role             string          `json:"role"`
	Content          *string         `json:"content"`
	Refusal          *string         `json:"refusal"`
	Annotations      json.RawMessage `json:"annotations"`
	Audio            json.RawMessage `json:"audio"`
	FunctionCall     json.RawMessage `json:"function_call"`
	ToolCalls        []ToolCall      `json:"tool_calls,omitempty"`
	Reasoning        *string         `json:"reasoning"`
	ReasoningContent json.RawMessage `json:"reasoning_content,omitempty"`
}

// ChatCompletionChoice is one choice of a chat completion.
type ChatCompletionChoice struct {
	Index        int                     `json:"index"`
	Message      ChatMessage             `json:"message"`
	Logprobs     *ChatCompletionLogProbs `json:"logprobs"`
	FinishReason *string                 `json:"finish_reason"`
	StopReason   json.RawMessage         `json:"stop_reason"`
	TokenIDs     []int                   `json:"token_ids"`
}

// chatResponse is vLLM's ChatCompletionResponse over its choice type:
// derender's choices, or the OpenAI server's, which add routed_experts.
type chatResponse[C any] struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	Choices           []C             `json:"choices"`
	ServiceTier       *string         `json:"service_tier"`
	SystemFingerprint *string         `json:"system_fingerprint"`
	Usage             *UsageInfo      `json:"usage"`
	PromptLogprobs    json.RawMessage `json:"prompt_logprobs"`
	PromptTokenIDs    []int           `json:"prompt_token_ids"`
	PromptText        *string         `json:"prompt_text"`
	KVTransferParams  json.RawMessage `json:"kv_transfer_params"`
	ECTransferParams  json.RawMessage `json:"ec_transfer_params"`
	Metrics           json.RawMessage `json:"metrics"`
}

// ChatCompletionResponse is vLLM's ChatCompletionResponse as derender
// answers it (the fields are chatResponse's).
type ChatCompletionResponse chatResponse[ChatCompletionChoice]

// FunctionDelta is a fragment of a streamed tool call's function.
type FunctionDelta struct {
	Name      *string `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
}

// ToolCallDelta is one streamed tool-call fragment.
type ToolCallDelta struct {
	Index    int           `json:"index"`
	ID       *string       `json:"id,omitempty"`
	Type     *string       `json:"type,omitempty"`
	Function FunctionDelta `json:"function"`
}

// DeltaMessage is a stream choice's delta: only what this chunk carries.
type DeltaMessage struct {
	Role             *string         `json:"role,omitempty"`
	Content          *string         `json:"content,omitempty"`
	Reasoning        *string         `json:"reasoning,omitempty"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCallDelta `json:"tool_calls,omitempty"`
}

// ChatStreamChoice is one choice of a chat stream chunk.
type ChatStreamChoice struct {
	Index        int                     `json:"index"`
	Delta        DeltaMessage            `json:"delta"`
	Logprobs     *ChatCompletionLogProbs `json:"logprobs"`
	FinishReason *string                 `json:"finish_reason"`
	StopReason   json.RawMessage         `json:"stop_reason"`
	TokenIDs     []int                   `json:"token_ids"`
}

// ChatCompletionStreamResponse is one chat stream chunk.
type ChatCompletionStreamResponse struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	Choices           []ChatStreamChoice `json:"choices"`
	Usage             *UsageInfo         `json:"usage"`
	SystemFingerprint *string            `json:"system_fingerprint"`
	Metrics           json.RawMessage    `json:"metrics"`
}

// DerenderChatStreamResponse pairs a chunk with the state to echo.
type DerenderChatStreamResponse struct {
	Chunk       ChatCompletionStreamResponse `json:"chunk"`
	StreamState DerenderStreamState          `json:"stream_state"`
}

// CompletionChoice is one choice of a completion.
type CompletionChoice struct {
	Index          int                 `json:"index"`
	Text           string              `json:"text"`
	Logprobs       *CompletionLogProbs `json:"logprobs"`
	FinishReason   *string             `json:"finish_reason"`
	StopReason     json.RawMessage     `json:"stop_reason"`
	TokenIDs       []int               `json:"token_ids"`
	PromptLogprobs json.RawMessage     `json:"prompt_logprobs"`
	PromptTokenIDs []int               `json:"prompt_token_ids"`
}

// completionResponse is vLLM's CompletionResponse over its choice type:
// derender's choices, or the OpenAI server's, which add routed_experts.
type completionResponse[C any] struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	Choices           []C             `json:"choices"`
	ServiceTier       *string         `json:"service_tier"`
	SystemFingerprint *string         `json:"system_fingerprint"`
	Usage             *UsageInfo      `json:"usage"`
	KVTransferParams  json.RawMessage `json:"kv_transfer_params"`
	ECTransferParams  json.RawMessage `json:"ec_transfer_params"`
	Metrics           json.RawMessage `json:"metrics"`
}

// CompletionResponse is vLLM's CompletionResponse as derender answers it
// (the fields are completionResponse's).
type CompletionResponse completionResponse[CompletionChoice]

// CompletionStreamChoice is one choice of a completion stream chunk.
type CompletionStreamChoice struct {
	Index        int                 `json:"index"`
	Text         string              `json:"text"`
	Logprobs     *CompletionLogProbs `json:"logprobs"`
	FinishReason *string             `json:"finish_reason"`
	StopReason   json.RawMessage     `json:"stop_reason"`
	TokenIDs     []int               `json:"token_ids"`
}

// CompletionStreamResponse is one completion stream chunk.
type CompletionStreamResponse struct {
	ID      string                   `json:"id"`
	Object  string                   `json:"object"`
	Created int64                    `json:"created"`
	Model   string                   `json:"model"`
	Choices []CompletionStreamChoice `json:"choices"`
	Usage   *UsageInfo               `json:"usage"`
	Metrics json.RawMessage          `json:"metrics"`
}

// DerenderCompletionStreamResponse pairs a chunk with the state to echo.
type DerenderCompletionStreamResponse struct {
	Chunk       CompletionStreamResponse `json:"chunk"`
	StreamState DerenderStreamState      `json:"stream_state"`
}
