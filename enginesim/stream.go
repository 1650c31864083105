package enginesim

import (
	"context"
	"net/http"

	"github.com/vrender/vrender/protocol"
)

// streamWriter writes SSE events through one reused buffer, flushing each.
type streamWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf *[]byte
}

func (sw *streamWriter) send(b []byte) error {
	*sw.buf = b[:0]
	if _, err := sw.w.Write(b); err != nil {
		return err
	}
	return sw.rc.Flush()
}

// stream serves a streaming request: one event per token per choice, the
// choices interleaved step by step, the finish reason and weight_versions
// on each choice's last event, then the usage event (include_usage) and
// [DONE]. An abort call ends the unfinished choices with finish_reason
// "abort" (newest vLLM always emits terminal outputs).
func (s *Sim) stream(w http.ResponseWriter, r *http.Request, g *generation) {
	ctx := r.Context()
	if g.fault.Kind == FaultError && g.fault.AfterTokens == 0 {
		writeError(w, http.StatusInternalServerError, protocol.NewErrorResponse(http.StatusInternalServerError,
			protocol.ErrorTypeInternal, engineErrorMessage, nil))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	sw := &streamWriter{w: w, rc: http.NewResponseController(w), buf: bp}
	if err := sw.rc.Flush(); err != nil {
		s.clientGone(g)
		return
	}

	sent := make([]int, len(g.plans)) // tokens sent per choice
	finished := make([]bool, len(g.plans))
	promptIDsPending := g.returnTokenIDs
	events := 0
	aborted := false
	steps := g.steps()
steps:
	for step := range steps {
		a, gone := g.wait(ctx, g.latencyBefore(step))
		if gone {
			s.clientGone(g)
			return
		}
		if a {
			aborted = true
			break
		}
		for ci, p := range g.plans {
			if finished[ci] {
				continue
			}
			if g.fault.Kind != FaultNone && events == g.fault.AfterTokens {
				s.streamFault(ctx, w, sw, g)
				return
			}
			if g.stopped() {
				aborted = true
				break steps
			}
			c := choiceFields{index: ci, pos: step, total: min(step+1, len(p.tokens))}
			if step < len(p.tokens) {
				c.tokens = p.tokens[step : step+1]
			}
			if step >= len(p.tokens)-1 {
				c.finish, c.stopReason, c.hasStop, c.final = p.finish, p.stopReason, p.hasStop, true
				finished[ci] = true
			}
			sent[ci] = c.total
			b := g.appendEvent((*bp)[:0], c, promptIDsPending)
			promptIDsPending = false
			if err := sw.send(b); err != nil {
				s.clientGone(g)
				return
			}
			events++
		}
	}
	b := (*bp)[:0]
	if aborted {
		for ci := range g.plans {
			if !finished[ci] {
				b = g.appendEvent(b, choiceFields{index: ci, finish: "abort", pos: sent[ci], total: sent[ci], final: true}, false)
			}
		}
	}
	if g.includeUsage {
		total := 0
		for _, n := range sent {
			total += n
		}
		b = g.appendFinalUsage(b, total)
	}
	b = append(b, doneEvent...)
	if err := sw.send(b); err != nil {
		s.clientGone(g)
	}
}

// streamFault strikes after fault.AfterTokens events.
func (s *Sim) streamFault(ctx context.Context, w http.ResponseWriter, sw *streamWriter, g *generation) {
	switch g.fault.Kind {
	case FaultError:
		body, _ := protocol.MarshalJSON(protocol.NewErrorResponse(http.StatusInternalServerError,
			protocol.ErrorTypeInternal, engineErrorMessage, nil))
		b := append((*sw.buf)[:0], "data: "...)
		b = append(b, body...)
		b = append(b, "\n\n"+doneEvent...)
		_ = sw.send(b)
	case FaultStall:
		<-ctx.Done()
		s.clientGone(g)
	default: // drop (refuse never reaches a stream)
		panic(http.ErrAbortHandler)
	}
}
