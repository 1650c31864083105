package render

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render/jinja"
)

// ChatInput holds the fields of vLLM's ChatCompletionRequest that shape the
// prompt. Raw JSON keeps key order and unknown fields, as Python dicts do.
// Render never modifies the messages (nor the JSON they hold), so a
// request can be rendered again or concurrently.
type ChatInput struct {
	Messages             []protocol.Message
	Tools                []protocol.Tool // nil: no tools given
	ToolChoice           protocol.ToolChoice
	Documents            *node // protocol's decoded list; nil: none
	ChatTemplate         *string
	ChatTemplateKwargs   *node // protocol's decoded object; nil: none
	ReasoningEffort      *string
	AddGenerationPrompt  bool
	ContinueFinalMessage bool
	AddSpecialTokens     bool
	TruncatePromptTokens *int
	TruncationSide       string
	// ToolDicts, when not nil, are what the template gets as tools instead
	// of Tools' ChatCompletionToolsParam dumps: a front end's own tool
	// dumps (the Responses API's construct_tool_dicts).
	ToolDicts []*wire.Node
	// MMProcessorKwargs is the request's mm_processor_kwargs object
	// (protocol's decoded tree; nil: none).
	MMProcessorKwargs *node
	// MediaIOKwargs is the request's media_io_kwargs object of objects
	// (protocol's decoded tree; nil: none).
	MediaIOKwargs *node
	// OmitMMKwargs is return_mm_kwargs false: the features carry hashes
	// and placeholders only, and images are not decoded.
	OmitMMKwargs bool
	// CheckText, when set, vets the rendered prompt before it is
	// tokenized: vLLM's length checks, and the server's byte limit, must
	// refuse an oversized prompt before the tokenizer spends memory on it.
	CheckText func(text string) error
}

// ChatPrompt is a rendered chat request.
type ChatPrompt struct {
	Text string
	// TokenIDs are the prompt's tokens after truncation.
	TokenIDs []int
	// ContentFormat is the content format the messages were given to the
	// template in: "string" or "openai".
	ContentFormat string
	// Features is what the GenerateRequest's features member says (its
	// AppendJSON writes it) and what prefix routing keys image blocks by,
	// when the request has images; else nil.
	Features *features.Features
}

// continueTag is transformers' marker for continue_final_message; the
// trailing space tells whether the template trimmed the message's end.
const continueTag = "CONTINUE_FINAL_MESSAGE_TAG "

// applyChatTemplateParams are apply_chat_template's own parameters: a
// chat_template_kwargs entry with one of these names never reaches the
// template as a variable.
var applyChatTemplateParams = map[string]bool{
	"conversation": true, "tools": true, "documents": true, "chat_template": true,
	"add_generation_prompt": true, "continue_final_message": true, "tokenize": true,
	"padding": true, "truncation": true, "max_length": true, "return_tensors": true,
	"return_dict": true, "return_assistant_tokens_mask": true, "tokenizer_kwargs": true,
}

// RenderChat renders a chat request to its prompt text and token IDs.
func (r *Renderer) RenderChat(ctx context.Context, in ChatInput) (*ChatPrompt, error) {
	if in.ContinueFinalMessage && in.AddGenerationPrompt {
		return nil, badRequest("Cannot set both `continue_final_message` and `add_generation_prompt` to True.")
	}
	kwargs, reqTemplate, err := r.templateKwargs(in)
	if err != nil {
		return nil, err
	}
	tools, err := r.toolsNode(in)
	if err != nil {
		return nil, err
	}
	tmpl, err := r.chooseTemplate(reqTemplate, tools != nil)
	if err != nil {
		return nil, err
	}
	if tmpl.err != nil {
		return nil, templateError(tmpl.err)
	}
	format := r.cfg.ContentFormat
	if format == FormatAuto {
		format = tmpl.format
	}
	var mm *imageParts
	if r.images != nil {
		mm = &imageParts{im: r.images}
	}
	msgs, err := normalizeChat(in.Messages, format, tmpl.usesDeveloper, mm)
	if err != nil {
		return nil, err
	}
	var embeds []features.QwenEmbeds
	if mm != nil {
		if err := r.images.checkLimit(len(mm.refs)); err != nil {
			return nil, err
		}
		if embeds, err = r.images.checkEmbeds(mm); err != nil {
			return nil, err
		}
	}

	documents := in.Documents
	if documents != nil {
		if err := checkDocuments(documents); err != nil {
			return nil, err
		}
	}

	finalText := ""
	if in.ContinueFinalMessage {
		if finalText, err = markFinalMessage(msgs, tmpl); err != nil {
			return nil, err
		}
	}

	vars, err := r.contextVars(msgs, tools, documents, kwargs, in.AddGenerationPrompt)
	if err != nil {
		return nil, err
	}
	st := r.stages.Load()
	start := st.Start()
	text, err := tmpl.tmpl.Render(ctx, vars, r.cfg.Now)
	st.Since(telemetry.StageTemplate, start)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, templateError(err)
	}
	if in.ContinueFinalMessage {
		if text, err = cutAtFinalMessage(text, finalText); err != nil {
			return nil, err
		}
	}
	if in.CheckText != nil {
		if err := in.CheckText(text); err != nil {
			return nil, err
		}
	}
	ids, err := r.TokenizePrompt(text, in.AddSpecialTokens, in.TruncatePromptTokens, in.TruncationSide)
	if err != nil {
		return nil, err
	}
	var feats *features.Features
	switch {
	case mm != nil && len(mm.refs) > 0:
		if ids, feats, err = r.images.expand(ctx, mm.refs, ids, in.MMProcessorKwargs, in.MediaIOKwargs, !in.OmitMMKwargs); err != nil {
			return nil, err
		}
	case len(embeds) > 0:
		if ids, feats, err = r.images.expandEmbeds(ctx, embeds, mm.embedsUUIDs(), ids, in.MMProcessorKwargs, !in.OmitMMKwargs); err != nil {
			return nil, err
		}
	}
	return &ChatPrompt{Text: text, TokenIDs: ids, ContentFormat: format, Features: feats}, nil
}

// templateKwargs builds vLLM's chat_template_kwargs: the server defaults,
// then the request's, then enable_thinking from reasoning_effort. It also
// returns a chat_template given inside the kwargs.
func (r *Renderer) templateKwargs(in ChatInput) (*node, *string, error) {
	kw := &node{Kind: jObj}
	if r.defaultKwargs != nil {
		for i, k := range r.defaultKwargs.Keys {
			kw.Set(k, r.defaultKwargs.Vals[i])
		}
	}
	reqTemplate := in.ChatTemplate
	userSetThinking := false
	if req := in.ChatTemplateKwargs; req != nil {
		switch req.Kind {
		case jNull:
		case jObj:
			if t, ok := req.Get("chat_template"); ok {
				s, isStr := t.Text()
				if !r.cfg.TrustRequestChatTemplate {
					return nil, nil, badRequest("Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.")
				}
				if isStr && reqTemplate == nil {
					reqTemplate = &s
				}
			}
			if _, ok := req.Get("tokenize"); ok {
				return nil, nil, badParam("chat_template_kwargs", "Found unexpected chat template kwargs from request: {'tokenize'}")
			}
			for i, k := range req.Keys {
				kw.Set(k, req.Vals[i])
			}
			_, userSetThinking = req.Get("enable_thinking")
		default:
			return nil, nil, badParam("chat_template_kwargs", "chat_template_kwargs must be an object")
		}
	}
	if in.ReasoningEffort != nil {
		kw.Set("reasoning_effort", strNode(*in.ReasoningEffort))
		if !userSetThinking {
			kw.Set("enable_thinking", &node{Kind: jBool, B: *in.ReasoningEffort != "none"})
		}
	}
	for i := 0; i < len(kw.Keys); {
		if applyChatTemplateParams[kw.Keys[i]] {
			kw.Del(kw.Keys[i])
			continue
		}
		i++
	}
	return kw, reqTemplate, nil
}

// toolsNode returns the tools as vLLM passes them to the template
// (tool.model_dump() of each, or the front end's ToolDicts), or nil when
// the template gets None.
func (r *Renderer) toolsNode(in ChatInput) (*node, error) {
	dicts := in.ToolDicts
	if dicts == nil {
		if in.Tools == nil {
			return nil, nil
		}
		dicts = make([]*node, len(in.Tools))
		for i := range in.Tools {
			dicts[i] = dumpTool(&in.Tools[i])
		}
	}
	if r.cfg.ExcludeToolsWhenToolChoiceNone && in.ToolChoice.Kind == protocol.ToolChoiceNone {
		return nil, nil
	}
	for i, d := range dicts {
		if nodeDepth(d) > maxJSONDepth {
			// Valid JSON (the request decoded), only too deep to render.
			return nil, badParam(fmt.Sprintf("tools.%d", i), "tools.%d is nested more than %d levels deep", i, maxJSONDepth)
		}
	}
	return &node{Kind: jArr, Arr: dicts}, nil
}

// nodeDepth is wire.Node's Depth for a tree built by code around parsed
// ones: the longest chain of nested values below n.
func nodeDepth(n *node) int {
	if n.Raw != nil {
		return n.Depth
	}
	d := 0
	for _, v := range n.Arr {
		d = max(d, nodeDepth(v)+1)
	}
	for _, v := range n.Vals {
		d = max(d, nodeDepth(v)+1)
	}
	return d
}

// dumpTool is pydantic's model_dump of ChatCompletionToolsParam: declared
// fields first, defaults filled in, then extra fields in request order.
func dumpTool(t *protocol.Tool) *node {
	f := &t.Function
	dfn := objNode(len(f.Extra), objMember{"name", strNode(f.Name)},
		objMember{"description", optStrNode(f.Description)}, objMember{"parameters", orNull(f.Parameters)})
	appendMembers(dfn, f.Extra)
	out := objNode(len(t.Extra), objMember{"type", strNode(t.Type)}, objMember{"function", dfn})
	appendMembers(out, t.Extra)
	return out
}

func appendMembers(n *node, ms []protocol.Member) {
	for _, m := range ms {
		n.Keys = append(n.Keys, m.Key)
		n.Vals = append(n.Vals, m.Value)
	}
}

func optStrNode(s *string) *node {
	if s == nil {
		return wire.NullNode
	}
	return strNode(*s)
}

func orNull(n *node) *node {
	if n == nil {
		return wire.NullNode
	}
	return n
}

// checkDocuments is transformers' check that documents are dicts.
func checkDocuments(d *node) error {
	var items []*node
	switch d.Kind {
	case jNull:
		return nil
	case jArr:
		items = d.Arr
	case jObj, jStr:
		// Iterating a dict or str yields strings, which are not dicts.
		if truthy(d) {
			items = []*node{strNode("")}
		}
	default:
		return badParam("documents", "'%s' object is not iterable", pyType(d))
	}
	for _, it := range items {
		if it.Kind != jObj {
			return badParam("documents", "Documents should be a list of dicts with 'title' and 'text' keys!")
		}
	}
	return nil
}

// contextVars assembles what transformers passes to the template: the set
// special tokens, the chat-template kwargs over them, then messages, tools,
// documents (None when absent) and add_generation_prompt.
func (r *Renderer) contextVars(msgs []*node, tools, documents, kwargs *node, addGen bool) (*jinja.Dict, error) {
	// One batch converts every tree: kwargs values, messages, then tools
	// and documents when given.
	trees := make([]*node, 0, len(kwargs.Vals)+len(msgs)+2)
	trees = append(append(trees, kwargs.Vals...), msgs...)
	if tools != nil {
		trees = append(trees, tools)
	}
	if documents != nil {
		trees = append(trees, documents)
	}
	vals, failed, err := jinja.FromTrees(trees)
	if err != nil {
		param := "documents"
		switch {
		case failed < len(kwargs.Vals):
			param = "chat_template_kwargs"
		case failed < len(kwargs.Vals)+len(msgs):
			param = "messages"
		case failed == len(kwargs.Vals)+len(msgs) && tools != nil:
			param = "tools"
		}
		return nil, badParam(param, "%v", err)
	}
	d := jinja.NewDict(len(r.specials) + len(kwargs.Keys) + 4)
	for _, st := range r.specials {
		d.SetStr(st.name, jinja.Str(st.value))
	}
	for i, k := range kwargs.Keys {
		d.SetStr(k, vals[i])
	}
	vals = vals[len(kwargs.Keys):]
	d.SetStr("messages", jinja.List(vals[:len(msgs):len(msgs)]))
	vals = vals[len(msgs):]
	for _, kv := range []struct {
		name string
		n    *node
	}{{"tools", tools}, {"documents", documents}} {
		v := jinja.None()
		if kv.n != nil {
			v, vals = vals[0], vals[1:]
		}
		d.SetStr(kv.name, v)
	}
	d.SetStr("add_generation_prompt", jinja.Bool(addGen))
	return d, nil
}

// markFinalMessage appends transformers' continue tag to the final
// message's text and returns that text as it was.
func markFinalMessage(msgs []*node, tmpl *compiled) (string, error) {
	if len(msgs) == 0 {
		return "", badParam("messages", "list index out of range")
	}
	last := msgs[len(msgs)-1]
	content, ok := last.Get("content")
	if !ok || content.IsNull() {
		return "", badRequest(`continue_final_message is set but the final message has no "content" to continue!`)
	}
	if !tmpl.mentionsContent {
		return "", badRequest(`continue_final_message is set to "content" but this is not an accepted field in the chat_template`)
	}
	switch content.Kind {
	case jArr:
		for i := len(content.Arr) - 1; i >= 0; i-- {
			block := content.Arr[i]
			if t, ok := block.Get("text"); ok {
				s, _ := t.Text()
				block.Set("text", strNode(s+continueTag))
				return s, nil
			}
		}
		return "", badRequest("continue_final_message is set but we could not find any text to continue in the final message!")
	case jStr:
		last.Set("content", strNode(content.S+continueTag))
		return content.S, nil
	}
	return "", badParam("messages", "can only concatenate %s (not \"str\") to %s", pyType(content), pyType(content))
}

// cutAtFinalMessage cuts the rendered chat right after the final message's
// text, as transformers does.
func cutAtFinalMessage(text, final string) (string, error) {
	tag := strings.TrimRightFunc(continueTag, pyIsSpace)
	stripped := pyStrip(final)
	if !strings.Contains(text, stripped) || !strings.Contains(text, tag) {
		return "", badRequest("continue_final_message is set but the final message does not appear in the chat after applying the chat template! This can happen if the chat template deletes portions of the final message. Please verify the chat template and final message in your chat to ensure they are compatible.Final message to continue: %s\nRendered chat:\n%s", stripped, text)
	}
	loc := strings.LastIndex(text, tag)
	if strings.HasPrefix(text[loc:], continueTag) {
		return text[:loc], nil
	}
	return strings.TrimRightFunc(text[:loc], pyIsSpace), nil
}

// pyIsSpace is Python's str.isspace for one character.
func pyIsSpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }
