package orchestrator

import "github.com/vrender/vrender/protocol"

// doneEvent ends every stream.
var doneEvent = []byte("data: [DONE]\n\n")

// sseWriter writes one response's server-sent events. An event is built
// in buf behind "data: " (begin) and sent by frame; opening the stream and
// its two endings (usage then [DONE], or an error event then [DONE]) are
// the same for chat and completions.
type sseWriter struct {
	sink    Sink
	metrics *Metrics
	started bool
	enc     *protocol.ChunkEncoder
	buf     []byte
}

// open commits the stream (status and headers) with the encoder of its
// chunks.
func (w *sseWriter) open(id, object string, created int64, model string) error {
	if err := w.sink.Start(); err != nil {
		return errClientGone
	}
	w.started = true
	w.enc = protocol.NewChunkEncoder(id, object, created, model)
	return nil
}

// begin starts a new event in buf.
func (w *sseWriter) begin() { w.buf = append(w.buf[:0], "data: "...) }

// frame terminates the event in buf and writes it.
func (w *sseWriter) frame() error {
	w.buf = append(w.buf, "\n\n"...)
	if err := w.sink.Frame(w.buf); err != nil {
		return errClientGone
	}
	w.metrics.chunks.Add(1)
	return nil
}

// end sends the usage chunk when there is one, then [DONE].
func (w *sseWriter) end(usage *protocol.UsageInfo) error {
	if usage != nil {
		w.begin()
		w.buf = w.enc.AppendUsage(w.buf, usage)
		if err := w.frame(); err != nil {
			return err
		}
	}
	return w.sink.Frame(doneEvent)
}

// fail ends a started stream as vLLM's generator does on an exception: an
// error event, then [DONE].
func (w *sseWriter) fail(e *Error) {
	w.metrics.failed.Add(1)
	w.begin()
	w.buf = protocol.AppendStreamError(w.buf, e.Info())
	w.buf = append(w.buf, "\n\n"...)
	if w.sink.Frame(w.buf) == nil {
		_ = w.sink.Frame(doneEvent)
	}
}

// idsOrEmpty is ids as a JSON list: vLLM writes [] for a choice with no
// new tokens when return_token_ids asks for them.
func idsOrEmpty(ids []int) []int {
	if ids == nil {
		return []int{}
	}
	return ids
}
