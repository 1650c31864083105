package parsers

import (
	"fmt"
	"strings"
)

// Config selects the parsers, as vLLM's server flags do.
type Config struct {
	// ReasoningParser is --reasoning-parser ("" for none).
	ReasoningParser string
	// ToolParser is --tool-call-parser ("" for none).
	ToolParser string
	// EnableAutoToolChoice is --enable-auto-tool-choice.
	EnableAutoToolChoice bool
	// LegacyToolChoice is VLLM_ENFORCE_STRICT_TOOL_CALLING turned off:
	// parsers with a structural tag parse required and named tool_choice
	// on vLLM's JSON-schema path again.
	LegacyToolChoice bool
}

// Parser is the per-request machine of vLLM's DelegatingParser plus the
// chat server's rules around it: reasoning first, its content through the
// tool parser, then tool_choice, parallel_tool_calls and include_reasoning
// as chat_completion_full_generator applies them.
type Parser struct {
	Choice ToolChoiceKind
	// Parse is set when the tool parser runs on the content.
	Parse bool
	// Parallel is false when parallel_tool_calls is false: calls after
	// the first are dropped.
	Parallel         bool
	IncludeReasoning bool
	// AutoFinish is set when returned calls make finish_reason
	// "tool_calls" (auto tool choice).
	AutoFinish bool

	Reasoning ReasoningMachine
	Tools     ToolMachine

	// WS is whitespace-only content held back while tools may still be
	// called (vLLM drops whitespace-only content next to tool calls).
	WS []byte
	// ContentOut is set once content has been emitted.
	ContentOut bool
	// CallsOut is set once a tool call has been emitted: vLLM reports
	// finish_reason "tool_calls" only for a non-empty list, even when the
	// parser says tools were called (e.g. deepseek_v3's bare calls-begin).
	CallsOut bool
	Finished bool

	// arena backs Push's tool-call deltas, reused PushReuse's; not state.
	arena  callArena
	reused []ToolCallDelta
	hot    hotPath
	// argsStop and argsPlain are the hot arguments path's byte sets,
	// built once.
	argsStop, argsPlain *byteSet
	// text backs the hot path's joined fragments; not state.
	text textArena
	// ownIDs: the tool machine's call ids are vLLM's (ToolInfo.OwnIDs).
	ownIDs bool
}

// New builds the machine for one request. promptIDs may be nil; some
// reasoning parsers read it to learn whether the prompt closed reasoning.
func New(cfg Config, v Vocab, req *Request, promptIDs []int) (*Parser, error) {
	choice, named, err := req.Choice()
	if err != nil {
		return nil, err
	}
	p := &Parser{
		Choice:           choice,
		Parallel:         req.ParallelToolCalls == nil || *req.ParallelToolCalls,
		IncludeReasoning: req.includeReasoning(),
	}
	if cfg.ReasoningParser != "" {
		info, ok := reasoningParsers[cfg.ReasoningParser]
		if !ok {
			return nil, fmt.Errorf("unknown reasoning parser %q", cfg.ReasoningParser)
		}
		if p.Reasoning, err = info.New(v, req, promptIDs); err != nil {
			return nil, err
		}
	}
	if cfg.ToolParser != "" {
		info, ok := toolParsers[cfg.ToolParser]
		if !ok {
			return nil, fmt.Errorf("unknown tool parser %q", cfg.ToolParser)
		}
		supported := info.supportsRequiredAndNamed(cfg.LegacyToolChoice)
		auto := cfg.EnableAutoToolChoice && len(req.Tools) > 0 && (choice == ChoiceAuto ||
			!supported && (choice == ChoiceRequired || choice == ChoiceNamed))
		if (choice == ChoiceRequired || choice == ChoiceNamed) && supported {
			// vLLM's generic JSON path, with or without auto tool choice.
			p.Tools, p.Parse = newJSONChoice(choice, named), true
		} else if auto {
			if p.Tools, err = info.New(v, req); err != nil {
				return nil, err
			}
			p.Parse, p.ownIDs = true, info.OwnIDs
			p.AutoFinish = choice == ChoiceAuto
		} else if choice == ChoiceNone && cfg.EnableAutoToolChoice && info.EngineBased &&
			(cfg.ReasoningParser == "" || engineReasoningParsers[cfg.ReasoningParser]) {
			if p.Tools, err = info.New(v, req); err != nil {
				return nil, err
			}
			p.Parse, p.ownIDs = true, info.OwnIDs
		}
	}
	harmonyPair(cfg, p)
	return p, nil
}

// harmonyPair joins Harmony machines as vLLM's single HarmonyParser: the
// reasoning machine hands the non-analysis text on to a Harmony tool
// machine, and with the "openai" tool parser but no call parsing the
// content is still read out of the Harmony messages.
func harmonyPair(cfg Config, p *Parser) {
	h, ok := p.Reasoning.(*Harmony)
	if _, tools := p.Tools.(*HarmonyTools); ok && tools {
		h.pass = true
	}
	if cfg.ToolParser == "openai" && cfg.EnableAutoToolChoice && !p.Parse && p.Reasoning == nil {
		p.Reasoning = &Harmony{}
	}
}

// engineReasoningParsers are vLLM's reasoning parsers that are ParserEngine
// adapters (engine_based_streaming); with one of them (or none) an
// engine-based tool parser also runs for tool_choice "none".
var engineReasoningParsers = map[string]bool{
	"qwen3": true, "mimo": true, "seed_oss": true, "glm45": true, "glm47": true, "kimi_k2": true,
	"minimax_m2": true, "minimax_m2_append_think": true, "gemma4": true, "nemotron_v3": true,
	"deepseek_v4": true, "inkling": true,
}

// NeedsSpecialTokens reports whether skip_special_tokens must be off for
// this request because a parser reads markers that are special tokens.
func NeedsSpecialTokens(cfg Config, req *Request) bool {
	if info, ok := reasoningParsers[cfg.ReasoningParser]; ok && info.NeedsSpecialTokens {
		return true
	}
	choice, _, _ := req.Choice()
	info, ok := toolParsers[cfg.ToolParser]
	return ok && info.NeedsSpecialTokens && len(req.Tools) > 0 && choice != ChoiceNone
}

// Push hands over the text of newly generated tokens and returns what is
// now certain. ids are accepted for parsers keyed on token ids; the
// families here find their markers in the text.
func (p *Parser) Push(text string, ids []int) Delta {
	_ = ids
	var d Delta
	p.push(&d, text, false)
	return d
}

// PushReuse is Push for a caller done with each delta before its next
// push (a session encoding every step at once): the returned ToolCalls
// slice is overwritten by the next PushReuse, which spares a one-token
// stream the memory of a slice per tool-call push. Copy it to keep it.
func (p *Parser) PushReuse(text string, ids []int) Delta {
	_ = ids
	var d Delta
	p.push(&d, text, true)
	return d
}

// push is Push into d, which must be zero.
func (p *Parser) push(d *Delta, text string, reuse bool) {
	if p.hot.kind != HotNone {
		if p.hotPush(d, text, reuse) {
			return
		}
		text = p.coolText(text)
	}
	if p.fastArgs(d, text, reuse) {
		return
	}
	content := text
	if p.Reasoning != nil {
		d.Reasoning, content = p.Reasoning.Push(text)
	}
	p.route(d, content, false, reuse)
	p.filter(d)
	if content == "" && !p.Finished {
		p.warmReasoning()
	}
}

// callAppender is a tool machine that can append a push's deltas to a
// caller's slice (the parser's arena) instead of a new one.
type callAppender interface {
	pushAppend(text string, calls []ToolCallDelta) (content string, _ []ToolCallDelta)
}

// Finish flushes everything held back. After it, Result-style questions
// (ToolsCalled, ContentNull) have their final answers.
func (p *Parser) Finish() Delta {
	var d Delta
	if p.Finished {
		return d
	}
	p.settle()
	p.Finished = true
	content := ""
	if p.Reasoning != nil {
		d.Reasoning, content = p.Reasoning.Finish()
	}
	p.route(&d, content, true, false)
	p.filter(&d)
	return d
}

// route passes content through the tool machine: with reuse, appending
// its deltas to PushReuse's buffer, else to the arena when it can.
func (p *Parser) route(d *Delta, content string, final, reuse bool) {
	if !p.Parse {
		d.Content = content
		return
	}
	var out string
	var calls []ToolCallDelta
	a, appends := p.Tools.(callAppender)
	switch {
	case appends && reuse:
		out, calls = a.pushAppend(content, p.reused[:0])
		if cap(calls) > cap(p.reused) {
			p.reused = calls[:0]
		}
		if len(calls) == 0 {
			calls = nil // as Push returns it
		}
	case appends && !final:
		out, calls = a.pushAppend(content, p.arena.free())
		calls = p.arena.commit(calls)
	default:
		out, calls = p.Tools.Push(content)
	}
	if final {
		more, last := p.Tools.Finish()
		out += more
		calls = append(calls, last...)
	}
	d.ToolCalls = calls
	d.Content = p.holdWhitespace(out, final)
}

// holdWhitespace delays content while everything so far is whitespace:
// vLLM returns null content when it is whitespace-only and tools were called
// (or, for required and named tool_choice, were to be called).
func (p *Parser) holdWhitespace(out string, final bool) string {
	if out == "" && !final {
		return "" // nothing to hold or release (most pushes inside a call)
	}
	if !p.ContentOut {
		// WS only ever holds whitespace, so appending to a byte slice keeps
		// a long whitespace-only start linear when it arrives in tiny pieces.
		if strings.TrimSpace(out) == "" && !final {
			p.WS = append(p.WS, out...)
			return ""
		}
		if final && strings.TrimSpace(out) == "" && (p.Tools.Called() || p.forcedAuto()) {
			p.WS = nil
			return ""
		}
		out = string(p.WS) + out
		p.WS = nil
		p.ContentOut = out != ""
	}
	return out
}

// forcedAuto reports tool_choice required or named parsed by the model's
// own tool parser (one without supports_required_and_named): vLLM bf578e1's
// _extract_tool_calls then drops whitespace-only content even when no tool
// was called.
func (p *Parser) forcedAuto() bool {
	_, json := p.Tools.(*JSONChoice)
	return p.Parse && !json && (p.Choice == ChoiceRequired || p.Choice == ChoiceNamed)
}

// filter applies include_reasoning and parallel_tool_calls.
func (p *Parser) filter(d *Delta) {
	if !p.IncludeReasoning {
		d.Reasoning = ""
	}
	if !p.Parallel && len(d.ToolCalls) > 0 {
		kept := d.ToolCalls[:0]
		for _, c := range d.ToolCalls {
			if c.Index == 0 {
				kept = append(kept, c)
			}
		}
		d.ToolCalls = kept
	}
	if len(d.ToolCalls) > 0 {
		p.CallsOut = true
	}
}

// ToolCallID is the id to send for a call whose parser-side id is id: id
// itself when the tool machine's ids are vLLM's (ToolInfo.OwnIDs), else
// a fresh chatcmpl-tool-<uuid> made by newID.
func (p *Parser) ToolCallID(id string, newID func() string) string {
	if p.ownIDs && id != "" {
		return id
	}
	return newID()
}

// ToolsCalled reports, after Finish, whether the answer carries tool calls.
func (p *Parser) ToolsCalled() bool { return p.Parse && p.Tools.Called() }

// ReasoningNull reports, after Finish, whether an empty reasoning is null.
func (p *Parser) ReasoningNull() bool {
	if p.Reasoning == nil || !p.IncludeReasoning {
		return true
	}
	r, _ := p.Reasoning.Nulls()
	return r
}

// ContentNull reports, after Finish, whether an empty content is null
// rather than "".
func (p *Parser) ContentNull() bool {
	if p.Choice == ChoiceRequired || p.Choice == ChoiceNamed {
		return false
	}
	if cn, ok := p.Tools.(interface{ ContentNull() (null, decided bool) }); ok && p.Parse {
		// The tool parser's own answer (vLLM's engine path for "none").
		if null, decided := cn.ContentNull(); decided {
			return null
		}
	}
	if pe, ok := p.Reasoning.(interface{ PromptEndedReasoning() bool }); ok && pe.PromptEndedReasoning() {
		// The newer vLLM the golden set follows here (reasoning closed by
		// the prompt) returns "" rather than null, tool calls or not.
		return false
	}
	if p.ToolsCalled() {
		return true
	}
	if p.Reasoning == nil {
		return false
	}
	_, c := p.Reasoning.Nulls()
	return c
}

// FinishReason is the finish_reason vLLM reports for the engine's reason.
func (p *Parser) FinishReason(engine string) string {
	if engine == "stop" && p.Choice == ChoiceRequired {
		return "tool_calls"
	}
	if p.AutoFinish && p.ToolsCalled() && p.CallsOut {
		return "tool_calls"
	}
	if engine == "" {
		return "stop"
	}
	return engine
}
