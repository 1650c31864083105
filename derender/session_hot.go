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
// string argument, where the parser answers without its general path.
// Those are nearly all tokens of a long output, and the general path's
// layers (a Delta, the engine-side stop checks, the delta fill) would cost
// several times the work itself; the rest goes to push. A token the
// detokenizer took but the parser's hot path did not is parsed here the
// general way.
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
	kind, index, plain := s.parser.PushPlain(text) // inlined: most tokens end here
	out := text
	if !plain {
		if kind, index, out = s.parser.PushHot(text); kind == parsers.HotNone {
			s.clearStep()
			s.parse(st, start, step, text, ids, false)
			return step
		}
	}
	if st != nil {
		st.Since(telemetry.StageParse, start)
	}
	if out == "" {
		step.Emit = false // nothing to send for this token
		return step
	}
	// Consecutive steps of one kind keep the delta's shape: only the
	// text changes, so a step writes one string, not a cleared struct
	// and its pointers.
	if kind == parsers.HotReasoning {
		s.buf.reasoning = out
		if s.layout != layoutReasoning {
			s.clearStep()
			s.layout = layoutReasoning
			step.Delta.Reasoning = &s.buf.reasoning
			if s.e.cfg.ReasoningFieldCompat {
				step.Delta.ReasoningContent = &s.buf.reasoning
			}
		}
	} else {
		if s.layout != layoutArgs(index) {
			s.clearStep()
			s.layout = layoutArgs(index)
			s.buf.argsLayout(index, &s.state, &step.Delta)
		}
		s.buf.strs[3] = out
	}
	step.Emit = true
	return step
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
