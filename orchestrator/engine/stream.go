package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/vrender/vrender/protocol"
)

// errStreamClosed is the cancellation cause of a stream the caller
// closed.
var errStreamClosed = errors.New("engine stream closed")

// Stream is one streaming generate request. Recv is not safe for
// concurrent use; Close may be called from another goroutine to interrupt
// a blocked Recv.
type Stream struct {
	client    *Client
	requestID string
	parent    context.Context
	ctx       context.Context // parent plus the watchdog and Close
	cancel    context.CancelCauseFunc
	body      io.ReadCloser
	sse       *sseReader
	dec       eventDecoder
	wd        *watchdog
	total     *time.Timer // nil: no total timeout
	events    int
	err       error // sticky: io.EOF after [DONE], or the failure
	// pending is the first event, read by Stream, for the first Recv.
	pending *protocol.GenerateResponse
	// onFirst runs once the first event arrived.
	onFirst   func()
	closeOnce sync.Once
}

// Stream POSTs a streaming generate for req under requestID (sent as
// X-Request-Id and as the body's request_id; the engine then names the
// request EngineRequestID(requestID)). It forces stream=true with
// stream_options {include_usage: true, continuous_usage_stats: false}
// and leaves req unmodified.
//
// It returns once the engine answered with its headers, retrying (up to
// Options.Retries, with backoff) while the engine is unreachable, closes
// the connection before answering, or answers 503/429; the
// first-event timeout covers all of that. A non-200 answer is an *Error
// mapped from the engine's status and body. The caller must Close the
// stream.
//
// With Options.MMCacheBytes, items the engine holds go as null kwargs and
// the engine's first event is read before Stream returns: an engine that
// answers it lacks them gets the request again with their data (items.go).
func (c *Client) Stream(ctx context.Context, req *protocol.GenerateRequest, requestID string) (*Stream, error) {
	if req == nil {
		return nil, errors.New("engine stream: nil request")
	}
	lean, sent := c.leaveCached(req)
	st, err := c.stream(ctx, lean, requestID)
	if len(sent.nulled) > 0 {
		c.nullItems.Add(int64(len(sent.nulled)))
		if err == nil {
			var first *protocol.GenerateResponse
			if first, err = st.Recv(); err == nil {
				st.pending = first
			}
		}
		var e *Error
		if err != nil && errors.As(err, &e) && e.EngineStatus != 0 && !e.Temporary && ctx.Err() == nil {
			// The engine failed the request before its first token: the
			// miss of a null item, as far as vLLM's generate route tells.
			if st != nil {
				st.Close()
			}
			c.ForgetItems() // whatever else it lost, the engine lost too
			c.itemResends.Add(1)
			c.log.LogAttrs(ctx, slog.LevelWarn, "engine lacked multimodal items sent as null, sending them with their data",
				slog.String("engine", c.base), slog.String("request_id", requestID), slog.Int("null_items", len(sent.nulled)),
				slog.String("error", e.Message))
			sent = allBrought(req)
			st, err = c.stream(ctx, req, requestID)
		} else if st != nil {
			err = nil // the first Recv's error is the stream's, sticky
		}
	}
	if err != nil {
		return nil, err
	}
	if len(sent.brought) > 0 {
		if st.pending != nil {
			c.record(sent.brought)
		} else {
			st.onFirst = func() { c.record(sent.brought) }
		}
	}
	return st, nil
}

// stream is Stream of req as it is.
func (c *Client) stream(ctx context.Context, req *protocol.GenerateRequest, requestID string) (*Stream, error) {
	body, err := c.encode(req, requestID, true)
	if err != nil {
		return nil, fmt.Errorf("engine stream %s: encoding the request: %w", requestID, err)
	}
	defer body.release() // the attempts hold it until the transport is done
	sctx, cancel := context.WithCancelCause(ctx)
	wd := newWatchdog(cancel, c.firstEventTimeout, c.idleTimeout)
	wd.arm(phaseFirstEvent)
	total := totalTimer(cancel, c.totalTimeout)
	stopTotal := func() {
		if total != nil {
			total.Stop()
		}
	}
	resp, err := c.send(sctx, body, requestID, true)
	if err != nil {
		wd.stop()
		stopTotal()
		cancel(errStreamClosed)
		return nil, err
	}
	if err := checkEventStream(resp); err != nil {
		wd.stop()
		stopTotal()
		cancel(errStreamClosed)
		resp.Body.Close()
		return nil, err
	}
	return &Stream{
		client:    c,
		requestID: requestID,
		parent:    ctx,
		ctx:       sctx,
		cancel:    cancel,
		body:      resp.Body,
		sse:       newSSEReader(resp.Body, 0),
		wd:        wd,
		total:     total,
	}, nil
}

// checkEventStream rejects a 200 that is not an event stream: an engine
// (or proxy) that ignored stream=true would otherwise look like a stream
// that ended before [DONE].
func checkEventStream(resp *http.Response) error {
	ct := resp.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "text/event-stream" {
		return badGateway(nil, "engine answered a streaming request with Content-Type %q, not text/event-stream", ct)
	}
	return nil
}

// Recv returns the next event. After "data: [DONE]" it returns io.EOF.
// An in-stream error event, a stream that ends (or breaks) before [DONE],
// a malformed event or a timeout is an *Error; cancellation of the
// Stream's ctx is an error wrapping ctx.Err(). Errors are sticky.
//
// The response is the caller's to keep.
func (s *Stream) Recv() (*protocol.GenerateResponse, error) {
	if s.err != nil {
		return nil, s.err
	}
	if ev := s.pending; ev != nil {
		s.pending = nil
		return ev, nil
	}
	if s.events > 0 {
		s.wd.arm(phaseIdle)
	}
	for {
		data, err := s.sse.next()
		if err != nil {
			s.wd.stop()
			if err == io.EOF {
				if p, ok := s.sse.pending(); ok && string(p) == "[DONE]" {
					return nil, s.done()
				}
			}
			return nil, s.fail(s.readError(err))
		}
		if len(data) == 0 {
			continue // an empty event carries nothing; tolerated like a comment
		}
		if string(data) == "[DONE]" {
			s.wd.stop()
			return nil, s.done()
		}
		resp, err := s.dec.decode(data)
		s.wd.stop()
		if err != nil {
			return nil, s.fail(err)
		}
		s.events++
		if s.onFirst != nil {
			s.onFirst()
			s.onFirst = nil
		}
		return resp, nil
	}
}

// Events is the number of events Recv has returned.
func (s *Stream) Events() int { return s.events }

// done ends a stream at [DONE]: the rest of the body (the chunked
// terminator) is read so that the connection goes back to the pool.
func (s *Stream) done() error {
	s.err = io.EOF
	s.wd.arm(phaseDrain)
	_, _ = io.CopyN(io.Discard, s.body, maxErrorBody)
	s.wd.stop()
	s.Close()
	return io.EOF
}

func (s *Stream) fail(err error) error {
	s.err = err
	s.Close()
	return err
}

// readError classifies a failure to read the next event.
func (s *Stream) readError(err error) error {
	if s.ctx.Err() != nil {
		cause := context.Cause(s.ctx)
		switch {
		case errors.Is(cause, errTimedOut):
			return gatewayTimeout("%s", cause)
		case errors.Is(cause, errStreamClosed):
			return fmt.Errorf("engine stream %s: %w", s.requestID, errStreamClosed)
		case s.parent.Err() != nil:
			return fmt.Errorf("engine stream %s: %w", s.requestID, s.parent.Err())
		}
	}
	switch {
	case errors.Is(err, errEventTooLarge):
		return badGateway(err, "engine stream %s: an event exceeds %d bytes", s.requestID, s.sse.maxEvent)
	case err == io.EOF:
		return badGateway(nil, "%s", errClosedBeforeDone)
	}
	return badGateway(err, "%s: %v", errClosedBeforeDone, err)
}

// Close releases the stream. Closing before [DONE] drops the connection,
// which a vLLM engine also takes as an abort; callers should still call
// Abort, as an engine behind a proxy may not notice. Close is idempotent
// and safe to call concurrently with Recv.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		s.wd.stop()
		if s.total != nil {
			s.total.Stop()
		}
		s.cancel(errStreamClosed)
		s.body.Close()
	})
	return nil
}
