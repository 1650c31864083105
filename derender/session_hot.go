package derender

import (
	"time"

	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
)

// Push derenders one engine event of this choice: its new token ids, their
// logprobs, and the engine's finish_reason on the last event. Events after
// the choice finished (a stop string matched) are ignored.
//
// The step is the session's own, valid until the next Push: a one-token
// stream then copies no step struct per token.
//
// Push itself is the steady state of a one-token stream: a token the
// detokenizer decodes by table lookup, inside reasoning or a tool call's
// string argument, where the parser's answer keeps the step's shape.
// Those are nearly all tokens of a long output, and the general path's
// layers (the engine-side stop checks, the delta fill) would cost several
// times the work itself; the rest goes to push. A token the detokenizer
// took whose answer has another shape is filled here the general way.
func (s *ChatSession) Push(ids []int, lp *protocol.GenerateLogProbs, finish *string) *ChatStep {
	if !s.hotOK || len(ids) != 1 || lp != nil || finish != nil || s.done || s.text != nil && s.tokens < s.stop.MinTokens {
		return s.push(ids, lp, finish)
	}
	st, step := s.st, &s.step
	// The stage clock is read only when metrics are on: Start and Since
	// are calls even on a nil Stages, a fifth of this step's cost.
	var start time.Time
	if st != nil {
		start = st.Start()
	}
	text, ok := s.detok.FastStep(ids[0])
	if !ok {
		return s.push(ids, lp, finish)
	}
	s.tokens++
	if s.text != nil {
		// Past min_tokens the token's whole text is checked, as decode
		// does; a match ends the choice the general way.
		var stop string
		var matched bool
		if text, stop, matched = s.text.push(text, len(text), true, false); matched {
			s.clearStep()
			if st != nil {
				start = st.Since(telemetry.StageDetokenize, start)
			}
			return s.emit(start, text, ids, nil, stopFinish(), quoteJSON(stop), true)
		}
	}
	if st != nil {
		start = st.Since(telemetry.StageDetokenize, start)
	}
	d := &s.delta // pushParser, one call less on the per-token path
	emptyDelta(d)
	s.parser.Push(text, d)
	if st != nil {
		st.Since(telemetry.StageParse, start)
	}
	// Consecutive steps of one kind keep the delta's shape: only the
	// text changes, so a step writes one string, not a cleared struct
	// and its pointers. The kinds are the parser's steady state: all
	// reasoning, or one arguments fragment of a call already opened.
	switch {
	case d.Content != "":
	case len(d.ToolCalls) == 1 && d.Reasoning == "" && isFragment(&d.ToolCalls[0]):
		index := d.ToolCalls[0].Index
		if s.layout != layoutArgs(index) {
			s.clearStep()
			s.layout = layoutArgs(index)
			s.buf.argsLayout(index, &s.state, &step.Delta)
		}
		s.buf.strs[3] = d.ToolCalls[0].Arguments
		step.Emit = true
		return step
	case len(d.ToolCalls) == 0:
		if d.Reasoning == "" {
			step.Emit = false // nothing to send for this token
			return step
		}
		s.buf.reasoning = d.Reasoning
		if s.layout != layoutReasoning {
			s.clearStep()
			s.layout = layoutReasoning
			step.Delta.Reasoning = &s.buf.reasoning
			if s.e.cfg.ReasoningFieldCompat {
				step.Delta.ReasoningContent = &s.buf.reasoning
			}
		}
		step.Emit = true
		return step
	}
	s.clearStep()
	s.buf.fill(s.e, s.parser, d, &s.state, &step.Delta)
	step.Emit = !d.Empty()
	return step
}

// isFragment reports whether c is a piece of the arguments of a call whose
// id and name went out before.
func isFragment(c *parsers.ToolCallDelta) bool {
	return c.Arguments != "" && c.ID == "" && c.Name == "" && c.Type == ""
}

// The step layouts Push's steady state keeps: none (0), reasoning, or the arguments
// of call i.
const layoutReasoning = -1

func layoutArgs(i int) int { return i + 1 }

// clearStep empties the step for an answer of another shape.
func (s *ChatSession) clearStep() {
	s.step = ChatStep{}
	s.layout = 0
}

// argsLayout shapes a delta as one arguments fragment (in strs[3]) of a
// call whose id and name went out before.
func (b *deltaBuf) argsLayout(index int, state *protocol.DerenderStreamState, m *protocol.DeltaMessage) {
	state.ToolsStreamed = true
	if cap(b.strs) < 4 {
		b.strs = make([]string, 4)
	}
	b.strs = b.strs[:4]
	b.calls = append(b.calls[:0], protocol.ToolCallDelta{Index: index})
	b.calls[0].Function.Arguments = &b.strs[3]
	m.ToolCalls = b.calls
}
