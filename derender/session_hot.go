package derender

import (
	"time"

	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
)

// hotStep is Push for the steady state of a one-token stream: a token the
// detokenizer decodes by table lookup, inside reasoning or a tool call's
// string argument, where the parser answers without its general path.
// Those are nearly all tokens of a long output, and the general path's
// layers (a Delta, the engine-side stop checks, the delta fill) would cost
// several times the work itself. ok is false, with nothing consumed, when
// the token needs the general path; a token the detokenizer took but the
// parser's hot path did not is parsed here the general way.
func (s *ChatSession) hotStep(st *telemetry.Stages, step *ChatStep, id int) bool {
	// The stage clock is read only when metrics are on: Start and Since
	// are calls even on a nil Stages, a fifth of this step's cost.
	var start time.Time
	if st != nil {
		start = st.Start()
	}
	text, ok := s.detok.FastStep(id)
	if !ok {
		return false
	}
	s.tokens++
	if st != nil {
		start = st.Since(telemetry.StageDetokenize, start)
	}
	kind, index, out := s.parser.PushHot(text)
	if kind == parsers.HotNone {
		s.parse(st, start, step, text, []int{id}, false)
		return true
	}
	if st != nil {
		st.Since(telemetry.StageParse, start)
	}
	if out == "" {
		return true // nothing to send for this token
	}
	step.Emit = true
	if kind == parsers.HotReasoning {
		s.buf.reasoning = out
		step.Delta.Reasoning = &s.buf.reasoning
		if s.e.cfg.ReasoningFieldCompat {
			step.Delta.ReasoningContent = &s.buf.reasoning
		}
		return true
	}
	s.buf.args(index, out, &s.state, &step.Delta)
	return true
}

// args is fill for a delta that is one arguments fragment of a call
// whose id and name went out before. Consecutive fragments of one call
// share the delta's layout, so only the text is replaced.
func (b *deltaBuf) args(index int, frag string, state *protocol.DerenderStreamState, m *protocol.DeltaMessage) {
	if b.argsOf != index+1 {
		state.ToolsStreamed = true
		if cap(b.strs) < 4 {
			b.strs = make([]string, 4)
		}
		b.strs = b.strs[:4]
		b.calls = append(b.calls[:0], protocol.ToolCallDelta{Index: index})
		b.calls[0].Function.Arguments = &b.strs[3]
		b.argsOf = index + 1
	}
	b.strs[3] = frag
	m.ToolCalls = b.calls
}
