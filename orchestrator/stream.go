package orchestrator

// Stream is a streamed chat run as a front end's StreamWriter sees it:
// the client's sink and what every event of the answer repeats.
type Stream struct{ run *chatRun }

// Open commits the response (status and headers) before the first frame.
func (s *Stream) Open() error {
	if err := s.run.sink.Start(); err != nil {
		return errClientGone
	}
	s.run.started = true
	return nil
}

// Started reports whether Open committed the response.
func (s *Stream) Started() bool { return s.run.started }

// Frame writes one complete event and flushes it.
func (s *Stream) Frame(frame []byte) error {
	if err := s.run.sink.Frame(frame); err != nil {
		return errClientGone
	}
	s.run.metrics.chunks.Add(1)
	return nil
}

// Failed records a stream that a writer ended with its error event.
func (s *Stream) Failed(e *Error) {
	r := s.run
	r.o.log.Warn(apiNames[r.api]+" stream failed", "request_id", r.id, "status", e.Status, "err", e.Message)
	r.metrics.failed.Add(1)
}

// ID is the answer's id.
func (s *Stream) ID() string { return s.run.id }

// Model is the answer's "model".
func (s *Stream) Model() string { return s.run.model }

// Created is the answer's creation time (Unix seconds).
func (s *Stream) Created() int64 { return s.run.created }

// PromptTokens is the prompt's length in tokens.
func (s *Stream) PromptTokens() int { return len(s.run.prompt) }
