// Package parsers turns a model's detokenized output into the content,
// reasoning and tool calls vLLM's OpenAI server returns, as push state
// machines: Push hands over the text of new tokens and appends what is now
// certain to the caller's Delta, Finish flushes; AppendState and Restore
// save a stream and resume it elsewhere. The non-streaming answer is the
// same machine fed
// once, so batch and stream agree by construction. Markers are found in the
// text (not by token id), as vLLM's non-streaming path finds them; a push
// costs O(len(text)) plus the few bytes held back as a possible marker.
//
// Layout: registry.go is the one table of parsers by vLLM name, with the
// flags vLLM's server reads off each class. A family is one file named by
// its format: json_* (a JSON call object behind markers), xml_* (XML
// grammars; qwen3_coder, minimax_m2 and glm47 embed engine_tools.go's
// engineCalls and differ only in terminals, states and parameter reader),
// pythonic*, harmony.go, and reasoning_* (most of them a spec for the
// thinking or engine machine). The machinery they share has its own file:
// marker.go and tagscan.go scan, tags.go holds the shared tags,
// schema_coerce.go and callobject.go handle JSON arguments, combined.go
// joins a reasoning and a tool machine into the Parser.
package parsers

import (
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// Delta is what one push made certain.
type Delta struct {
	Content   string
	Reasoning string
	ToolCalls []ToolCallDelta
}

// Empty reports whether d carries nothing.
func (d Delta) Empty() bool {
	return d.Content == "" && d.Reasoning == "" && len(d.ToolCalls) == 0
}

// ToolCallDelta is one fragment of the tool call at Index: ID, Type and
// Name come once, in the first fragment, then Arguments arrive in pieces.
type ToolCallDelta struct {
	Index     int
	ID        string
	Type      string
	Name      string
	Arguments string
}

// Vocab resolves marker strings to token ids (tokenizer.Tokenizer has it).
type Vocab interface {
	TokenToID(token string) (int, bool)
}

// reasoningMachine splits output text into reasoning and content.
type reasoningMachine interface {
	stateMachine
	Push(text string) (reasoning, content string)
	Finish() (reasoning, content string)
	// Nulls reports, after Finish, whether vLLM returns null for an empty
	// reasoning and an empty content.
	Nulls() (reasoningNull, contentNull bool)
}

// toolMachine extracts tool calls from the content a reasoning machine
// passes on.
type toolMachine interface {
	stateMachine
	Push(text string) (content string, calls []ToolCallDelta)
	Finish() (content string, calls []ToolCallDelta)
	// Called reports, after Finish, whether vLLM's non-streaming parser
	// returns tool calls (tools_called).
	Called() bool
}

// Request holds the fields of a ChatCompletionRequest that parsing reads,
// taken from the request protocol decoded (derender builds it; it is never
// decoded from JSON itself).
type Request struct {
	Tools              []protocol.Tool
	ToolChoice         protocol.ToolChoice
	ParallelToolCalls  *bool
	IncludeReasoning   *bool
	SkipSpecialTokens  *bool
	ChatTemplateKwargs *wire.Node // protocol's decoded object; nil: none
}

// The tool_choice values vLLM distinguishes; protocol owns the decoding.
const (
	choiceNone     = protocol.ToolChoiceNone
	choiceAuto     = protocol.ToolChoiceAuto
	choiceRequired = protocol.ToolChoiceRequired
	choiceNamed    = protocol.ToolChoiceNamed
)

// Choice resolves tool_choice with vLLM's defaults: absent means "auto"
// when tools are given and "none" otherwise.
func (r *Request) Choice() (protocol.ToolChoiceKind, string, error) {
	tc, err := r.ToolChoice.Resolve(len(r.Tools) > 0)
	if err != nil {
		return 0, "", err
	}
	return tc.Kind, tc.Name, nil
}

// includeReasoning is include_reasoning with its default (true).
func (r *Request) includeReasoning() bool {
	return r.IncludeReasoning == nil || *r.IncludeReasoning
}
