package protocol

import (
	"strconv"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// TokenizeCompletionRequest is the prompt form of POST /tokenize.
type TokenizeCompletionRequest struct {
	Model            *string `json:"model"`
	Prompt           string  `json:"prompt"`
	AddSpecialTokens bool    `json:"add_special_tokens"` // default true
	ReturnTokenStrs  *bool   `json:"return_token_strs"`  // default false; null allowed
}

// TokenizeChatRequest is the chat form of POST /tokenize. Messages and
// tools are typed; the kwargs stay raw JSON: the render tier interprets
// them, and their key order reaches the chat template.
type TokenizeChatRequest struct {
	Model                *string    `json:"model"`
	Messages             []Message  `json:"messages"`
	AddGenerationPrompt  bool       `json:"add_generation_prompt"` // default true
	ReturnTokenStrs      *bool      `json:"return_token_strs"`     // default false; null allowed
	ContinueFinalMessage bool       `json:"continue_final_message"`
	AddSpecialTokens     bool       `json:"add_special_tokens"` // default false
	ChatTemplate         *string    `json:"chat_template"`
	ChatTemplateKwargs   *wire.Node `json:"chat_template_kwargs"` // an object; nil when absent or null
	MediaIOKwargs        *wire.Node `json:"media_io_kwargs"`      // an object of objects; nil when absent or null
	MMProcessorKwargs    *wire.Node `json:"mm_processor_kwargs"`  // an object; nil when absent or null
	Tools                []Tool     `json:"tools"`                // nil when absent or null
}

// TokenizeRequest is vLLM's TokenizeRequest union: exactly one of
// Completion and Chat is set.
type TokenizeRequest struct {
	Completion *TokenizeCompletionRequest
	Chat       *TokenizeChatRequest
}

// ModelName is the request's "model" (nil when absent or null).
func (r TokenizeRequest) ModelName() *string {
	if r.Chat != nil {
		return r.Chat.Model
	}
	if r.Completion != nil {
		return r.Completion.Model
	}
	return nil
}

// WantTokenStrs reports whether token strings were asked for.
func (r TokenizeRequest) WantTokenStrs() bool {
	var p *bool
	if r.Chat != nil {
		p = r.Chat.ReturnTokenStrs
	} else if r.Completion != nil {
		p = r.Completion.ReturnTokenStrs
	}
	return p != nil && *p
}

// DecodeTokenizeRequest validates a /tokenize body as pydantic validates
// vLLM's union TokenizeCompletionRequest | TokenizeChatRequest: each form is
// tried; if both fail, the errors of both are reported, prompt form first;
// if both succeed, preferChatForm decides. Errors are *ValidationError.
func DecodeTokenizeRequest(data []byte) (TokenizeRequest, error) {
	obj, fe := decodeBody(data, "TokenizeCompletionRequest")
	return decodeTokenize(obj, fe, data)
}

// DecodeTokenizeTree is DecodeTokenizeRequest for the tree ParseJSONTree
// decoded from body (nil: an empty body), without scanning it again. The
// request aliases body.
func DecodeTokenizeTree(body []byte, root *wire.Node) (TokenizeRequest, error) {
	obj, fe := decodeTree(root, body, "TokenizeCompletionRequest")
	return decodeTokenize(obj, fe, body)
}

func decodeTokenize(obj *object, fe *pylax.FieldError, data []byte) (TokenizeRequest, error) {
	switch {
	case fe != nil && fe.Type == "missing":
		// An absent body fails before the union is tried.
		return TokenizeRequest{}, &pylax.ValidationError{Errors: []pylax.FieldError{*fe}}
	case fe != nil:
		return TokenizeRequest{}, &pylax.ValidationError{Errors: []pylax.FieldError{*fe, pylax.ModelTypeError(data, "TokenizeChatRequest")}}
	}
	completion, errsC := decodeTokenizeCompletion(obj.fresh())
	chat, errsChat := decodeTokenizeChat(obj.fresh())
	switch {
	case len(errsC) == 0 && len(errsChat) == 0:
		if preferChatForm(obj) {
			return TokenizeRequest{Chat: chat}, nil
		}
		return TokenizeRequest{Completion: completion}, nil
	case len(errsC) == 0:
		return TokenizeRequest{Completion: completion}, nil
	case len(errsChat) == 0:
		return TokenizeRequest{Chat: chat}, nil
	}
	return TokenizeRequest{}, &pylax.ValidationError{Errors: append(errsC, errsChat...)}
}

// Fields only one form declares; the fields both declare count for both.
var (
	completionOnlyFields = []string{"prompt"}
	chatOnlyFields       = []string{
		"messages", "add_generation_prompt", "continue_final_message", "chat_template",
		"chat_template_kwargs", "media_io_kwargs", "mm_processor_kwargs", "tools",
	}
)

// preferChatForm settles a body valid in both forms as pydantic's smart
// union does: the form with more of its declared fields set wins, and a tie
// goes to the first member, the prompt form. So {"prompt", "messages"} is a
// prompt-form request, and adding "add_generation_prompt" makes it a chat.
func preferChatForm(obj *object) bool {
	count := func(names []string) int {
		n := 0
		for _, name := range names {
			if _, ok := obj.Member(name); ok {
				n++
			}
		}
		return n
	}
	return count(chatOnlyFields) > count(completionOnlyFields)
}

// UnmarshalJSON decodes and validates the chat form alone.
func (r *TokenizeChatRequest) UnmarshalJSON(data []byte) error {
	obj, fe := decodeBody(data, "TokenizeChatRequest")
	if fe != nil {
		return &pylax.ValidationError{Errors: []pylax.FieldError{*fe}}
	}
	v, errs := decodeTokenizeChat(obj)
	if len(errs) > 0 {
		return &pylax.ValidationError{Errors: errs}
	}
	*r = *v
	return nil
}

func decodeTokenizeCompletion(obj *object) (*TokenizeCompletionRequest, []pylax.FieldError) {
	r := &TokenizeCompletionRequest{
		Model:            obj.OptionalString("model"),
		Prompt:           obj.RequiredString("prompt"),
		AddSpecialTokens: obj.Bool("add_special_tokens", true),
		ReturnTokenStrs:  obj.OptionalBool("return_token_strs", false),
	}
	if len(obj.Errs) > 0 {
		return nil, obj.Errs
	}
	return r, nil
}

// errBothPrompts is vLLM's check_generation_prompt model validator error.
const errBothPrompts = "Cannot set both `continue_final_message` and `add_generation_prompt` to True."

func decodeTokenizeChat(obj *object) (*TokenizeChatRequest, []pylax.FieldError) {
	// vLLM's "before" validator tests the raw values' truthiness, so
	// {"continue_final_message": "yes", "add_generation_prompt": 1} fails
	// while an absent add_generation_prompt (default true) does not.
	if obj.TruthyMember("continue_final_message") && obj.TruthyMember("add_generation_prompt") {
		return nil, []pylax.FieldError{{
			Type:  "value_error",
			Loc:   nil,
			Msg:   "Value error, " + errBothPrompts,
			Input: obj.Raw,
			Ctx:   []pylax.CtxEntry{{Key: "error", Value: pylax.PyException{Class: "VLLMValidationError", Message: errBothPrompts}}},
		}}
	}
	r := &TokenizeChatRequest{Model: obj.OptionalString("model")}
	r.Messages = obj.messages("messages")
	r.AddGenerationPrompt = obj.Bool("add_generation_prompt", true)
	r.ReturnTokenStrs = obj.OptionalBool("return_token_strs", false)
	r.ContinueFinalMessage = obj.Bool("continue_final_message", false)
	r.AddSpecialTokens = obj.Bool("add_special_tokens", false)
	r.ChatTemplate = obj.OptionalString("chat_template")
	r.ChatTemplateKwargs = obj.OptionalDictNode("chat_template_kwargs")
	r.MediaIOKwargs = obj.OptionalDictOfDicts("media_io_kwargs")
	r.MMProcessorKwargs = obj.OptionalDictNode("mm_processor_kwargs")
	r.Tools = obj.tools("tools")
	if len(obj.Errs) > 0 {
		return nil, obj.Errs
	}
	return r, nil
}

// messages is a required list of chat messages. pydantic checks only the
// shape (a list of objects); the render tier refuses what vLLM's chat
// utils refuse.
func (o *object) messages(name string) []Message {
	items, ok := o.ListNodes(name, true)
	if !ok {
		return nil
	}
	valid := true
	for i, item := range items {
		if item.Kind != wire.Object {
			o.Fail(o.At(name, i), "dict_type", "Input should be a valid dictionary", item.Raw)
			valid = false
		}
	}
	if !valid {
		return nil
	}
	return MessagesOf(o.Trees(name))
}

// TokenizeResponse is the 200 body of POST /tokenize. TokenStrs is null
// unless the request asked for token strings.
type TokenizeResponse struct {
	Count       int      `json:"count"`
	MaxModelLen int      `json:"max_model_len"`
	Tokens      []int    `json:"tokens"`
	TokenStrs   []string `json:"token_strs"`
}

// AppendJSON appends the body; tokens is a list even when empty.
func (r *TokenizeResponse) AppendJSON(dst []byte) ([]byte, error) {
	dst = strconv.AppendInt(append(dst, `{"count":`...), int64(r.Count), 10)
	dst = strconv.AppendInt(append(dst, `,"max_model_len":`...), int64(r.MaxModelLen), 10)
	dst = wire.AppendInts(append(dst, `,"tokens":`...), r.Tokens)
	dst = append(dst, `,"token_strs":`...)
	if r.TokenStrs == nil {
		dst = append(dst, "null"...)
	} else {
		dst = wire.AppendStrings(dst, r.TokenStrs)
	}
	return append(dst, '}'), nil
}

// MarshalJSON is AppendJSON into a new buffer.
func (r TokenizeResponse) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }

// DetokenizeRequest is the body of POST /detokenize.
type DetokenizeRequest struct {
	Model  *string `json:"model"`
	Tokens []int   `json:"tokens"` // each in [0, 2^63-1]
}

// DecodeDetokenizeRequest validates a /detokenize body as vLLM's
// DetokenizeRequest model does. Errors are *ValidationError.
func DecodeDetokenizeRequest(data []byte) (DetokenizeRequest, error) {
	obj, fe := decodeBody(data, "DetokenizeRequest")
	if fe != nil {
		return DetokenizeRequest{}, &pylax.ValidationError{Errors: []pylax.FieldError{*fe}}
	}
	r := DetokenizeRequest{
		Model:  obj.OptionalString("model"),
		Tokens: obj.TokenIDs("tokens"),
	}
	if len(obj.Errs) > 0 {
		return DetokenizeRequest{}, &pylax.ValidationError{Errors: obj.Errs}
	}
	return r, nil
}

// DetokenizeResponse is the 200 body of POST /detokenize.
type DetokenizeResponse struct {
	Prompt string `json:"prompt"`
}

// AppendJSON appends the body.
func (r *DetokenizeResponse) AppendJSON(dst []byte) ([]byte, error) {
	return append(wire.AppendString(append(dst, `{"prompt":`...), r.Prompt), '}'), nil
}

// MarshalJSON is AppendJSON into a new buffer.
func (r DetokenizeResponse) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }
