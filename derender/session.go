package derender

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/tokenizer"
)

// A session derenders one choice of one engine request in-process, event by
// event, for the orchestrator: no stream_state round trips, no history
// replay. It owns a detokenizer seeded from the prompt, the stop-string
// checker vLLM runs in its engine, and (for chat with a parser) the live
// parser. Sessions are not safe for concurrent use; one per choice.

// SessionConfig configures a session.
type SessionConfig struct {
	// Prompt seeds the detokenizer and the reasoning parser.
	Prompt []int
	// Stop is the request's stop configuration.
	Stop StopConfig
	// Collect keeps the whole answer for Result (non-streaming requests).
	Collect bool
}

// ChatStep is what one engine event made of a chat choice.
type ChatStep struct {
	// Emit reports whether vLLM's server sends a chunk for this event:
	// something was derendered, or the choice finished. Without it Delta
	// is not to be read (a one-token step may leave the last one's).
	Emit bool
	// Delta is the chunk's delta (role never set: the caller sends the
	// role chunk itself). Its pointers and slices are reused by the
	// session: they are valid until the next Push.
	Delta protocol.DeltaMessage
	// Logprobs are the event's resolved logprobs (nil when none asked).
	Logprobs *protocol.ChatCompletionLogProbs
	// FinishReason is set on the choice's last step.
	FinishReason *string
	// StopReason is the JSON stop_reason of the last step: null, the
	// matched stop string, or the stop token id.
	StopReason json.RawMessage
	// StopMatched reports that a stop string ended the choice here: the
	// engine is still generating and should be aborted.
	StopMatched bool
}

// CompletionStep is what one engine event made of a completion choice.
type CompletionStep struct {
	// Emit reports whether a chunk is sent (vLLM skips only empty events
	// before the first token).
	Emit         bool
	Text         string
	Logprobs     *protocol.CompletionLogProbs
	FinishReason *string
	StopReason   json.RawMessage
	StopMatched  bool
}

// sessionCore is the part chat and completion sessions share: the
// detokenizer, stop handling, token counting and logprob context.
type sessionCore struct {
	e      *Engine
	detok  *tokenizer.Detokenizer
	stop   StopConfig
	text   *stopText // nil without stop strings
	stops  map[int]bool
	tokens int
	lpCtx  []int
	done   bool
}

var nullJSON = json.RawMessage("null")

func (e *Engine) newCore(cfg SessionConfig, opts tokenizer.DetokOptions) sessionCore {
	c := sessionCore{e: e, detok: tokenizer.NewDetokenizer(e.model.Tokenizer, opts, cfg.Prompt), stop: cfg.Stop,
		text: newStopText(cfg.Stop), stops: e.stops}
	extra := cfg.Stop.StopTokenIDs
	if cfg.Stop.EOS != nil {
		extra = append(extra[:len(extra):len(extra)], *cfg.Stop.EOS)
	}
	for _, id := range extra {
		if !c.stops[id] {
			// The engine's set is shared: copy it once, only when needed.
			c.stops = cloneSet(e.stops, extra)
			break
		}
	}
	return c
}

func cloneSet(base map[int]bool, extra []int) map[int]bool {
	m := make(map[int]bool, len(base)+len(extra))
	for id := range base {
		m[id] = true
	}
	for _, id := range extra {
		m[id] = true
	}
	return m
}

// decode runs the engine-side half of a step: detokenize the event's ids
// (without the stop token that ended generation, unless
// include_stop_str_in_output), check the stop strings, and return the text
// released to the client side, the final finish_reason and stop_reason.
func (c *sessionCore) decode(ids []int, finish *string) (text string, fin *string, stopReason json.RawMessage, matched bool) {
	textIDs := ids
	stopTerminated := finish != nil && *finish == "stop" && len(ids) > 0 &&
		(c.stops[ids[len(ids)-1]] || c.e.model.Tokenizer.IsSpecial(ids[len(ids)-1]))
	if stopTerminated && !c.stop.IncludeInOutput {
		textIDs = ids[:len(ids)-1]
	}
	before := c.tokens
	c.tokens += len(ids)
	final := finish != nil
	if c.text == nil {
		text = c.detok.Push(textIDs)
	} else {
		var checked int
		if minTok := c.stop.MinTokens; minTok > 0 && before < minTok {
			// Text of the first min_tokens tokens is never searched: decode
			// one token at a time up to that point, as vLLM's loop does.
			var b strings.Builder
			for i, id := range textIDs {
				piece := c.detok.Step(id)
				b.WriteString(piece)
				if before+i+1 > minTok {
					checked += len(piece)
				}
			}
			text = b.String()
		} else {
			text = c.detok.Push(textIDs)
			checked = len(text)
		}
		var stop string
		text, stop, matched = c.text.push(text, checked, c.tokens > c.stop.MinTokens, final)
		if matched {
			return text, stopFinish(), quoteJSON(stop), true
		}
	}
	stopReason = nullJSON
	if stopTerminated {
		last := ids[len(ids)-1]
		isEOS := c.stop.EOS != nil && *c.stop.EOS == last
		for _, id := range c.stop.StopTokenIDs {
			if id == last && !isEOS {
				stopReason = json.RawMessage(strconv.Itoa(last))
				break
			}
		}
	}
	return text, finish, stopReason, false
}

func (c *sessionCore) logprobs(lp *protocol.GenerateLogProbs, ids []int) *protocol.ChatCompletionLogProbs {
	if lp == nil {
		return nil
	}
	out := c.e.resolveLogprobs(lp, c.lpCtx)
	c.lpCtx = contextTail(c.lpCtx, ids)
	return out
}

// Tokens is the number of completion tokens the choice counted (events
// after it finished are not counted).
func (c *sessionCore) Tokens() int { return c.tokens }

// Done reports whether the choice has finished.
func (c *sessionCore) Done() bool { return c.done }

// stopFinish is the finish_reason of a matched stop string.
func stopFinish() *string {
	s := "stop"
	return &s
}

func quoteJSON(s string) json.RawMessage { return wire.AppendString(nil, s) }

// ChatSession derenders one chat choice.
type ChatSession struct {
	sessionCore
	parser  *parsers.Parser // nil without a parser
	state   protocol.DerenderStreamState
	collect bool
	acc     parsers.Accumulator
	content strings.Builder // the no-parser answer
	finish  string
	lp      []protocol.ChatLogProbsContent
	hasLP   bool
	stopRsn json.RawMessage
	buf     deltaBuf
	delta   parsers.Delta // the parser's answer for the step being made
	step    ChatStep      // what Push returns
	// hotOK: one-token events may take Push's steady state (a parser,
	// nothing collected).
	hotOK bool
	// layout is the shape the steady state left step in (see
	// layoutArgs), so the next step of the same kind only replaces the
	// text.
	layout int
	// st times the stages; nil when the engine times nothing.
	st *telemetry.Stages
}

// NewChatSession starts a chat choice for cr, whose prompt is cfg.Prompt.
func (e *Engine) NewChatSession(cr *protocol.ChatCompletionRequest, cfg SessionConfig) (*ChatSession, error) {
	s := &ChatSession{collect: cfg.Collect, stopRsn: nullJSON}
	s.state.RoleSent = true // the orchestrator sends the role chunk
	if !e.HasParser() {
		s.sessionCore = e.newCore(cfg, tokenizer.DetokOptions{SkipSpecialTokens: cr.SkipSpecialTokens})
		return s, nil
	}
	setup, err := e.newParseSetup(cr, cfg.Prompt)
	if err != nil {
		return nil, err
	}
	if s.parser, err = e.newParser(setup); err != nil {
		return nil, err
	}
	s.sessionCore = e.newCore(cfg, setup.opts)
	if !cfg.Collect {
		// Every delta goes out as it is made, as on the stream_state
		// path: the machines need not keep text for a batch-only
		// fallback, so a long call's argument is not copied twice.
		s.parser.SetStreaming()
	}
	s.hotOK = !cfg.Collect
	s.st = e.stages.Load()
	return s, nil
}

// push is Push for the events its steady state does not take.
func (s *ChatSession) push(ids []int, lp *protocol.GenerateLogProbs, finish *string) *ChatStep {
	step, st := &s.step, s.st
	s.clearStep()
	if s.done {
		return step
	}
	if len(ids) == 0 && finish == nil && s.tokens == 0 {
		// vLLM skips empty outputs before the first token (chunked prefill).
		return step
	}
	start := st.Start()
	text, fin, stopReason, matched := s.decode(ids, finish)
	start = st.Since(telemetry.StageDetokenize, start)
	return s.emit(start, text, ids, lp, fin, stopReason, matched)
}

// emit parses a decoded step's text (the stage clock started at start)
// and finishes the step.
func (s *ChatSession) emit(start time.Time, text string, ids []int, lp *protocol.GenerateLogProbs, fin *string, stopReason json.RawMessage, matched bool) *ChatStep {
	step, st := &s.step, s.st
	step.StopMatched = matched
	if lp != nil {
		step.Logprobs = s.logprobs(lp, ids)
	}
	if step.Logprobs != nil && s.collect {
		s.hasLP = true
		s.lp = append(s.lp, step.Logprobs.Content...)
	}
	final := fin != nil
	if s.parser == nil {
		// vLLM sends every event's text as content, "" included.
		s.buf.content = text
		step.Delta.Content = &s.buf.content
		step.Emit = true
		if s.collect {
			s.content.WriteString(text)
		}
	} else {
		s.parse(st, start, step, text, final)
	}
	if final {
		s.done = true
		s.finish = *fin
		reason := *fin
		if s.parser != nil {
			reason = s.parser.FinishReason(reason)
		}
		step.FinishReason = &reason
		step.StopReason = stopReason
		s.stopRsn = stopReason
	}
	return step
}

// parse runs the parser on a step's text (the stage clock started at
// start) and fills the step's delta.
func (s *ChatSession) parse(st *telemetry.Stages, start time.Time, step *ChatStep, text string, final bool) {
	d := s.pushParser(text, final)
	st.Since(telemetry.StageParse, start)
	if s.collect {
		s.acc.Add(*d)
	}
	s.buf.fill(s.e, s.parser, d, &s.state, &step.Delta)
	step.Emit = !d.Empty() || final
}

// emptyDelta empties d for the next push, keeping its tool-call backing.
// Field by field: most are empty already, and storing a whole zero Delta
// costs a token more than the tests.
func emptyDelta(d *parsers.Delta) {
	if d.Content != "" {
		d.Content = ""
	}
	if d.Reasoning != "" {
		d.Reasoning = ""
	}
	d.ToolCalls = d.ToolCalls[:0]
}

// pushParser parses text (and with final, flushes) into the session's
// delta, emptied first: the step made from it last is encoded by now, so
// its tool-call backing is reused.
func (s *ChatSession) pushParser(text string, final bool) *parsers.Delta {
	d := &s.delta
	emptyDelta(d)
	s.parser.Push(text, d)
	if final {
		s.parser.Finish(d)
	}
	return d
}

// Result is the non-streaming choice once the session finished (Collect
// must have been set): the accumulated answer with vLLM's null rules.
func (s *ChatSession) Result() protocol.ChatCompletionChoice {
	out := protocol.ChatCompletionChoice{StopReason: s.stopRsn}
	if s.hasLP {
		out.Logprobs = &protocol.ChatCompletionLogProbs{Content: s.lp}
	}
	finish := s.finish
	if finish == "" {
		finish = "stop"
	}
	if s.parser == nil {
		text := s.content.String()
		out.Message = s.e.message(&text, nil, nil)
		out.FinishReason = &finish
		return out
	}
	r := s.acc.Result(s.parser, s.finish)
	out.FinishReason = &r.FinishReason
	var calls []protocol.ToolCall
	for i, tc := range r.ToolCalls {
		var id string
		if i < len(s.state.LastToolCallIDs) {
			id = s.state.LastToolCallIDs[i]
		} else {
			id = s.parser.ToolCallID(tc.ID, newToolCallID)
		}
		calls = append(calls, protocol.ToolCall{ID: id, Type: "function",
			Function: protocol.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
	}
	out.Message = s.e.message(r.Content, r.Reasoning, calls)
	return out
}

// CompletionSession derenders one completion choice.
type CompletionSession struct {
	sessionCore
	offset  int // logprob text_offset, in characters
	collect bool
	text    strings.Builder
	lp      *protocol.CompletionLogProbs
	finish  string
	stopRsn json.RawMessage
}

// NewCompletionSession starts a completion choice decoded with the
// request's skip_special_tokens.
func (e *Engine) NewCompletionSession(skipSpecialTokens bool, cfg SessionConfig) *CompletionSession {
	return &CompletionSession{sessionCore: e.newCore(cfg, tokenizer.DetokOptions{SkipSpecialTokens: skipSpecialTokens}),
		collect: cfg.Collect, stopRsn: nullJSON}
}

// Push derenders one engine event of this choice.
func (s *CompletionSession) Push(ids []int, lp *protocol.GenerateLogProbs, finish *string) CompletionStep {
	if s.done {
		return CompletionStep{}
	}
	if len(ids) == 0 && finish == nil && s.tokens == 0 {
		return CompletionStep{}
	}
	text, fin, stopReason, matched := s.decode(ids, finish)
	step := CompletionStep{Emit: true, Text: text, StopMatched: matched, StopReason: nullJSON}
	if lp != nil {
		step.Logprobs = completionLogprobs(s.logprobs(lp, ids), s.offset)
	}
	s.offset += runeCount(text)
	if s.collect {
		s.text.WriteString(text)
		if step.Logprobs != nil {
			s.lp = appendCompletionLogprobs(s.lp, step.Logprobs)
		}
	}
	if fin != nil {
		s.done = true
		s.finish = *fin
		step.FinishReason = fin
		step.StopReason = stopReason
		s.stopRsn = stopReason
	}
	return step
}

// Result is the non-streaming choice once the session finished (Collect
// must have been set); Index is left to the caller.
func (s *CompletionSession) Result() protocol.CompletionChoice {
	finish := s.finish
	return protocol.CompletionChoice{Text: s.text.String(), Logprobs: s.lp, FinishReason: &finish,
		StopReason: s.stopRsn}
}

func appendCompletionLogprobs(acc, lp *protocol.CompletionLogProbs) *protocol.CompletionLogProbs {
	if acc == nil {
		acc = &protocol.CompletionLogProbs{TextOffset: []int{}, TokenLogprobs: []*float64{}, Tokens: []string{},
			TopLogprobs: []*protocol.OrderedLogprobDict{}}
	}
	acc.TextOffset = append(acc.TextOffset, lp.TextOffset...)
	acc.TokenLogprobs = append(acc.TokenLogprobs, lp.TokenLogprobs...)
	acc.Tokens = append(acc.Tokens, lp.Tokens...)
	acc.TopLogprobs = append(acc.TopLogprobs, lp.TopLogprobs...)
	return acc
}

func runeCount(s string) int {
	n := 0
	for range s {
		n++
	}
	return n
}
