// Package parsers turns a model's detokenized output into the content,
// reasoning and tool calls vLLM's OpenAI server returns, as push state
// machines: Push hands over the text of new tokens and appends what is now
// certain to the caller's Delta, Finish flushes; AppendState and Restore
// save a stream and resume it elsewhere. The non-streaming answer is the
// same machine fed
// once, so batch and stream agree by construction. Markers are found in the
// text (not by token id), as vLLM's non-streaming path finds them; a push
// costs O(len(text)) plus the few bytes held back as a possible marker.
package parsers

import (
	"encoding/json"
	"sort"

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

// ReasoningMachine splits output text into reasoning and content.
type ReasoningMachine interface {
	stateMachine
	Push(text string) (reasoning, content string)
	Finish() (reasoning, content string)
	// Nulls reports, after Finish, whether vLLM returns null for an empty
	// reasoning and an empty content.
	Nulls() (reasoningNull, contentNull bool)
}

// ToolMachine extracts tool calls from the content a reasoning machine
// passes on.
type ToolMachine interface {
	stateMachine
	Push(text string) (content string, calls []ToolCallDelta)
	Finish() (content string, calls []ToolCallDelta)
	// Called reports, after Finish, whether vLLM's non-streaming parser
	// returns tool calls (tools_called).
	Called() bool
}

// ReasoningFactory builds a reasoning machine for one request.
type ReasoningFactory func(v Vocab, req *Request, promptIDs []int) (ReasoningMachine, error)

// ToolFactory builds a tool machine for one request.
type ToolFactory func(v Vocab, req *Request) (ToolMachine, error)

// ToolInfo describes a tool parser family.
type ToolInfo struct {
	New ToolFactory
	// SupportsRequiredAndNamed is the parser class's
	// supports_required_and_named: when false, required and named
	// tool_choice are parsed like auto. vLLM turns it off for every parser
	// with a StructuralTagModel unless VLLM_ENFORCE_STRICT_TOOL_CALLING is
	// off (see Config.LegacyToolChoice); supportsRequiredAndNamed applies
	// that.
	SupportsRequiredAndNamed bool
	// StructuralTagModel is the parser's structural_tag_model: the key of
	// the structural-tag builder that constrains its tool calls ("" for
	// parsers that keep vLLM's JSON-schema path).
	StructuralTagModel string
	// NeedsSpecialTokens forces skip_special_tokens off when tools are
	// given and tool_choice is not "none" (the markers are special tokens).
	NeedsSpecialTokens bool
	// EngineBased marks vLLM's ParserEngine adapters: with an engine-based
	// (or no) reasoning parser, vLLM runs them even for tool_choice "none"
	// and returns their content (calls dropped).
	EngineBased bool
	// OwnIDs marks a parser whose tool call ids are the ones vLLM sends
	// (mistral's nine alphanumerics, which Mistral's chat templates check
	// on the next turn); other machines' ids are placeholders the server
	// replaces with vLLM's chatcmpl-tool-<uuid>.
	OwnIDs bool
}

// ReasoningInfo describes a reasoning parser family.
type ReasoningInfo struct {
	New ReasoningFactory
	// NeedsSpecialTokens forces skip_special_tokens off.
	NeedsSpecialTokens bool
}

// reasoningParsers and toolParsers are keyed by vLLM's parser names and
// filled by init functions of the family files; read-only afterwards.
var (
	reasoningParsers = map[string]ReasoningInfo{}
	toolParsers      = map[string]ToolInfo{}
)

func registerReasoning(name string, info ReasoningInfo) { reasoningParsers[name] = info }
func registerTool(name string, info ToolInfo)           { toolParsers[name] = info }

// ReasoningParsers lists the registered reasoning parser names.
func ReasoningParsers() []string { return keys(reasoningParsers) }

// ToolParsers lists the registered tool parser names.
func ToolParsers() []string { return keys(toolParsers) }

// HasReasoning reports whether a reasoning parser is registered.
func HasReasoning(name string) bool { _, ok := reasoningParsers[name]; return ok }

// StructuralTagModel is the structural_tag_model of a tool parser ("" when
// it has none or is not registered).
func StructuralTagModel(name string) string { return toolParsers[name].StructuralTagModel }

// supportsRequiredAndNamed is the effective supports_required_and_named:
// vLLM's ToolParser.__init_subclass__ clears it for parsers with a
// structural_tag_model while strict tool calling is enforced.
func (info ToolInfo) supportsRequiredAndNamed(legacy bool) bool {
	return info.SupportsRequiredAndNamed && (info.StructuralTagModel == "" || legacy)
}

// HasTool reports whether a tool parser is registered.
func HasTool(name string) bool { _, ok := toolParsers[name]; return ok }

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Request holds the fields of a ChatCompletionRequest that parsing reads.
type Request struct {
	Tools              []Tool              `json:"tools,omitempty"`
	ToolChoice         protocol.ToolChoice `json:"tool_choice"`
	ParallelToolCalls  *bool               `json:"parallel_tool_calls,omitempty"`
	IncludeReasoning   *bool               `json:"include_reasoning,omitempty"`
	SkipSpecialTokens  *bool               `json:"skip_special_tokens,omitempty"`
	ChatTemplateKwargs map[string]any      `json:"chat_template_kwargs,omitempty"`
}

// Tool is one entry of a request's tools.
type Tool struct {
	Type     string       `json:"type"`
	Function ToolFunction `json:"function"`
}

// ToolFunction is a tool's function definition.
type ToolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ToolChoiceKind is how a request constrains tool calls; protocol owns
// the decoding.
type ToolChoiceKind = protocol.ToolChoiceKind

// The tool_choice values vLLM distinguishes.
const (
	ChoiceNone     = protocol.ToolChoiceNone
	ChoiceAuto     = protocol.ToolChoiceAuto
	ChoiceRequired = protocol.ToolChoiceRequired
	ChoiceNamed    = protocol.ToolChoiceNamed
)

// Choice resolves tool_choice with vLLM's defaults: absent means "auto"
// when tools are given and "none" otherwise.
func (r *Request) Choice() (ToolChoiceKind, string, error) {
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
