package parsers

import (
	"fmt"
	"strings"

	"github.com/vrender/vrender/protocol"
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
	choice protocol.ToolChoiceKind
	// parse is set when the tool parser runs on the content.
	parse bool
	// parallel is false when parallel_tool_calls is false: calls after
	// the first are dropped.
	parallel         bool
	includeReasoning bool
	// autoFinish is set when returned calls make finish_reason
	// "tool_calls" (auto tool choice).
	autoFinish bool

	reasoning reasoningMachine
	tools     toolMachine

	// ws is whitespace-only content held back while tools may still be
	// called (vLLM drops whitespace-only content next to tool calls).
	ws []byte
	// contentOut is set once content has been emitted.
	contentOut bool
	// callsOut is set once a tool call has been emitted: vLLM reports
	// finish_reason "tool_calls" only for a non-empty list, even when the
	// parser says tools were called (e.g. deepseek_v3's bare calls-begin).
	callsOut bool
	finished bool

	// arena backs the tool-call deltas of a Delta without room of its
	// own; not state.
	arena callArena
	hot   hotPath
	// argsStop and argsPlain are the hot arguments path's byte sets,
	// built once.
	argsStop, argsPlain *byteSet
	// text backs the hot path's joined fragments; not state.
	text textArena
	// ownIDs: the tool machine's call ids are vLLM's (toolInfo.ownIDs).
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
		choice:           choice,
		parallel:         req.ParallelToolCalls == nil || *req.ParallelToolCalls,
		includeReasoning: req.includeReasoning(),
	}
	if cfg.ReasoningParser != "" {
		info, ok := reasoningParsers[cfg.ReasoningParser]
		if !ok {
			return nil, fmt.Errorf("unknown reasoning parser %q", cfg.ReasoningParser)
		}
		if p.reasoning, err = info.newMachine(v, req, promptIDs); err != nil {
			return nil, err
		}
	}
	if cfg.ToolParser != "" {
		info, ok := toolParsers[cfg.ToolParser]
		if !ok {
			return nil, fmt.Errorf("unknown tool parser %q", cfg.ToolParser)
		}
		supported := info.supportsRequiredAndNamed(cfg.LegacyToolChoice)
		auto := cfg.EnableAutoToolChoice && len(req.Tools) > 0 && (choice == choiceAuto ||
			!supported && (choice == choiceRequired || choice == choiceNamed))
		if (choice == choiceRequired || choice == choiceNamed) && supported {
			// vLLM's generic JSON path, with or without auto tool choice.
			p.tools, p.parse = newJSONChoice(choice, named), true
		} else if auto {
			if p.tools, err = info.newMachine(v, req); err != nil {
				return nil, err
			}
			p.parse, p.ownIDs = true, info.ownIDs
			p.autoFinish = choice == choiceAuto
		} else if choice == choiceNone && cfg.EnableAutoToolChoice && info.engineBased &&
			(cfg.ReasoningParser == "" || reasoningParsers[cfg.ReasoningParser].engineBased) {
			if p.tools, err = info.newMachine(v, req); err != nil {
				return nil, err
			}
			p.parse, p.ownIDs = true, info.ownIDs
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
	h, ok := p.reasoning.(*harmony)
	if _, tools := p.tools.(*harmonyTools); ok && tools {
		h.pass = true
	}
	if cfg.ToolParser == "openai" && cfg.EnableAutoToolChoice && !p.parse && p.reasoning == nil {
		p.reasoning = &harmony{}
	}
}

// NeedsSpecialTokens reports whether skip_special_tokens must be off for
// this request because a parser reads markers that are special tokens.
func NeedsSpecialTokens(cfg Config, req *Request) bool {
	if info, ok := reasoningParsers[cfg.ReasoningParser]; ok && info.needsSpecialTokens {
		return true
	}
	choice, _, _ := req.Choice()
	info, ok := toolParsers[cfg.ToolParser]
	return ok && info.needsSpecialTokens && len(req.Tools) > 0 && choice != choiceNone
}

// Push hands over the text of newly generated tokens and appends what is
// now certain to d: its text to Content and Reasoning, its tool-call
// fragments to ToolCalls. d is the caller's: a caller done with each
// delta before the next push empties it (keeping ToolCalls' backing
// array, d.ToolCalls[:0]) and so reuses its memory; one that keeps deltas
// passes a fresh one, whose tool-call fragments the parser then carves
// from blocks of its own rather than a slice per push. Markers are found
// in the text, not by token id.
func (p *Parser) Push(text string, d *Delta) {
	if set := p.hot.fast; set != nil && len(text) > 0 && !set.any(text) {
		// Most tokens of a long reasoning or string argument: the
		// machines would pass text through whole and change nothing,
		// and fast is set only when the answer goes out unfiltered.
		if p.hot.kind == hotReasoning {
			appendText(&d.Reasoning, text)
			return
		}
		// A reused Delta's next slot usually holds the last push's
		// fragment of the same call: only the text changes (the call
		// went out before, so callsOut is set). Anything else takes
		// the general way, whose hot path gives the same answer.
		if n := len(d.ToolCalls); n < cap(d.ToolCalls) {
			if c := &d.ToolCalls[:n+1][n]; c.ID == "" && c.Type == "" && c.Name == "" {
				d.ToolCalls = d.ToolCalls[:n+1]
				c.Index, c.Arguments = p.hot.index, text
				return
			}
		}
	}
	p.push(d, text)
}

// appendText appends s to *dst; a push's text usually lands in an empty
// field, which then takes it without a concatenation.
func appendText(dst *string, s string) {
	if *dst == "" {
		*dst = s
	} else if s != "" {
		*dst += s
	}
}

// push is Push past the hot path's one-test case.
func (p *Parser) push(d *Delta, text string) {
	if p.finished {
		return // the machines are flushed; nothing can follow
	}
	if p.hot.kind != hotNone {
		if kind, out := p.hotTake(text); kind != hotNone {
			p.hotOut(d, kind, out)
			return
		}
		text = p.coolText(text)
	}
	if p.fastArgs(d, text) {
		return
	}
	content := text
	if p.reasoning != nil {
		var reasoning string
		reasoning, content = p.reasoning.Push(text)
		p.addReasoning(d, reasoning)
	}
	p.route(d, content, false)
	if content == "" && !p.finished {
		p.warmReasoning()
	}
}

// callAppender is a tool machine that can append a push's deltas to a
// caller's slice (the parser's arena) instead of a new one.
type callAppender interface {
	pushAppend(text string, calls []ToolCallDelta) (content string, _ []ToolCallDelta)
}

// Finish flushes everything held back into d, as Push appends. After it,
// Result-style questions (ToolsCalled, ContentNull) have their final
// answers; a second Finish adds nothing.
func (p *Parser) Finish(d *Delta) {
	if p.finished {
		return
	}
	p.settle()
	p.finished = true
	content := ""
	if p.reasoning != nil {
		var reasoning string
		reasoning, content = p.reasoning.Finish()
		p.addReasoning(d, reasoning)
	}
	p.route(d, content, true)
}

// addReasoning appends reasoning to d unless include_reasoning is off.
func (p *Parser) addReasoning(d *Delta, reasoning string) {
	if p.includeReasoning {
		appendText(&d.Reasoning, reasoning)
	}
}

// route passes content through the tool machine, appending its deltas to
// d's (or, when d has no room of its own, to the arena).
func (p *Parser) route(d *Delta, content string, final bool) {
	if !p.parse {
		appendText(&d.Content, content)
		return
	}
	n := len(d.ToolCalls)
	calls, arena := d.ToolCalls, cap(d.ToolCalls) == 0
	if arena {
		calls = p.arena.free()
	}
	var out string
	if a, ok := p.tools.(callAppender); ok && !final {
		out, calls = a.pushAppend(content, calls)
	} else {
		var more []ToolCallDelta
		out, more = p.tools.Push(content)
		calls = append(calls, more...)
	}
	if final {
		more, last := p.tools.Finish()
		out += more
		calls = append(calls, last...)
	}
	if arena {
		calls = p.arena.commit(calls)
	}
	d.ToolCalls = p.filterCalls(calls, n)
	appendText(&d.Content, p.holdWhitespace(out, final))
}

// holdWhitespace delays content while everything so far is whitespace:
// vLLM returns null content when it is whitespace-only and tools were called
// (or, for required and named tool_choice, were to be called).
func (p *Parser) holdWhitespace(out string, final bool) string {
	if out == "" && !final {
		return "" // nothing to hold or release (most pushes inside a call)
	}
	if !p.contentOut {
		// WS only ever holds whitespace, so appending to a byte slice keeps
		// a long whitespace-only start linear when it arrives in tiny pieces.
		if strings.TrimSpace(out) == "" && !final {
			p.ws = append(p.ws, out...)
			return ""
		}
		if final && strings.TrimSpace(out) == "" && (p.tools.Called() || p.forcedAuto()) {
			p.ws = nil
			return ""
		}
		out = string(p.ws) + out
		p.ws = nil
		p.contentOut = out != ""
	}
	return out
}

// forcedAuto reports tool_choice required or named parsed by the model's
// own tool parser (one without supports_required_and_named): vLLM bf578e1's
// _extract_tool_calls then drops whitespace-only content even when no tool
// was called.
func (p *Parser) forcedAuto() bool {
	_, json := p.tools.(*jsonChoice)
	return p.parse && !json && (p.choice == choiceRequired || p.choice == choiceNamed)
}

// filterCalls applies parallel_tool_calls to the calls from n on (the
// ones this push appended) and notes that calls went out.
func (p *Parser) filterCalls(calls []ToolCallDelta, n int) []ToolCallDelta {
	if !p.parallel && len(calls) > n {
		kept := calls[:n]
		for _, c := range calls[n:] {
			if c.Index == 0 {
				kept = append(kept, c)
			}
		}
		calls = kept
	}
	if len(calls) > n {
		p.callsOut = true
	}
	return calls
}

// ToolCallID is the id to send for a call whose parser-side id is id: id
// itself when the tool machine's ids are vLLM's (toolInfo.ownIDs), else
// a fresh chatcmpl-tool-<uuid> made by newID.
func (p *Parser) ToolCallID(id string, newID func() string) string {
	if p.ownIDs && id != "" {
		return id
	}
	return newID()
}

// ToolsCalled reports, after Finish, whether the answer carries tool calls.
func (p *Parser) ToolsCalled() bool { return p.parse && p.tools.Called() }

// ReasoningNull reports, after Finish, whether an empty reasoning is null.
func (p *Parser) ReasoningNull() bool {
	if p.reasoning == nil || !p.includeReasoning {
		return true
	}
	r, _ := p.reasoning.Nulls()
	return r
}

// ContentNull reports, after Finish, whether an empty content is null
// rather than "".
func (p *Parser) ContentNull() bool {
	if p.choice == choiceRequired || p.choice == choiceNamed {
		return false
	}
	if cn, ok := p.tools.(interface{ ContentNull() (null, decided bool) }); ok && p.parse {
		// The tool parser's own answer (vLLM's engine path for "none").
		if null, decided := cn.ContentNull(); decided {
			return null
		}
	}
	if pe, ok := p.reasoning.(interface{ PromptEndedReasoning() bool }); ok && pe.PromptEndedReasoning() {
		// The newer vLLM the golden set follows here (reasoning closed by
		// the prompt) returns "" rather than null, tool calls or not.
		return false
	}
	if p.ToolsCalled() {
		return true
	}
	if p.reasoning == nil {
		return false
	}
	_, c := p.reasoning.Nulls()
	return c
}

// FinishReason is the finish_reason vLLM reports for the engine's reason.
func (p *Parser) FinishReason(engine string) string {
	if engine == "stop" && p.choice == choiceRequired {
		return "tool_calls"
	}
	if p.autoFinish && p.ToolsCalled() && p.callsOut {
		return "tool_calls"
	}
	if engine == "" {
		return "stop"
	}
	return engine
}
