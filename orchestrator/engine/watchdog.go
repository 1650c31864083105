package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// errTimedOut is the cancellation cause of a request whose watchdog
// fired; context.Cause tells it from the caller's own cancellation.
var errTimedOut = errors.New("engine timeout")

// phase says which wait a watchdog is timing; it picks the message.
type phase int32

const (
	phaseFirstEvent phase = iota // request sent, no event yet
	phaseIdle                    // between two events
	phaseBody                    // non-streaming request, whole answer
	phaseDrain                   // reading the end of a body after [DONE]
)

// watchdog cancels a request's context when the engine is silent for too
// long. One timer is reused for every wait of a stream, so arming it per
// event costs no allocation.
type watchdog struct {
	cancel context.CancelCauseFunc
	timer  *time.Timer
	phase  atomic.Int32
	limits [4]time.Duration
}

func newWatchdog(cancel context.CancelCauseFunc, firstEvent, idle time.Duration) *watchdog {
	w := &watchdog{cancel: cancel, limits: [4]time.Duration{
		phaseFirstEvent: firstEvent,
		phaseIdle:       idle,
		phaseBody:       firstEvent,
		phaseDrain:      drainTimeout,
	}}
	// Created stopped, so that arm and stop (which Stream.Close may call
	// from another goroutine) only ever Reset and Stop it.
	w.timer = time.AfterFunc(time.Hour, w.fire)
	w.timer.Stop()
	return w
}

// drainTimeout bounds reading the end of a finished stream's body; a
// server that keeps the body open past [DONE] only costs its connection.
const drainTimeout = 100 * time.Millisecond

// arm starts timing a wait; a zero limit means no timeout.
func (w *watchdog) arm(p phase) {
	d := w.limits[p]
	if d <= 0 {
		w.stop()
		return
	}
	w.phase.Store(int32(p))
	w.timer.Reset(d)
}

func (w *watchdog) stop() { w.timer.Stop() }

// totalTimer cancels a request that runs longer than d in all (nil for
// d <= 0: no bound); the caller stops it when the request ends.
func totalTimer(cancel context.CancelCauseFunc, d time.Duration) *time.Timer {
	if d <= 0 {
		return nil
	}
	return time.AfterFunc(d, func() {
		cancel(timeoutError{fmt.Sprintf("engine request took longer than %v (total timeout)", d)})
	})
}

func (w *watchdog) fire() {
	p := phase(w.phase.Load())
	d := w.limits[p]
	var msg string
	switch p {
	case phaseFirstEvent:
		msg = fmt.Sprintf("engine sent no event within %v of the request (first-event timeout)", d)
	case phaseIdle:
		msg = fmt.Sprintf("engine stalled: no event for %v (idle timeout)", d)
	case phaseBody:
		msg = fmt.Sprintf("engine did not answer within %v (first-event timeout)", d)
	default:
		msg = fmt.Sprintf("engine kept the stream open %v after [DONE]", d)
	}
	w.cancel(timeoutError{msg})
}

// timeoutError is a watchdog's cancellation cause; its message is the one
// the client sees.
type timeoutError struct{ msg string }

func (e timeoutError) Error() string        { return e.msg }
func (e timeoutError) Is(target error) bool { return target == errTimedOut }
