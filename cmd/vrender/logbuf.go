package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// logFlushInterval bounds how long a buffered log line waits; a line per
// request written straight to stderr was a write syscall per request.
const logFlushInterval = 100 * time.Millisecond

// bufferedLog batches log lines into few writes: flushed every
// logFlushInterval, when 32 KiB fill, after every warning or error (see
// flushingHandler) and on Close.
type bufferedLog struct {
	mu   sync.Mutex
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

func newBufferedLog(w io.Writer) *bufferedLog {
	b := &bufferedLog{w: bufio.NewWriterSize(w, 32<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go b.flushLoop()
	return b
}

func (b *bufferedLog) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Write(p)
}

// Flush writes out what is buffered.
func (b *bufferedLog) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Flush()
}

func (b *bufferedLog) flushLoop() {
	defer close(b.done)
	t := time.NewTicker(logFlushInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			_ = b.Flush()
		case <-b.stop:
			return
		}
	}
}

// Close stops the flusher and flushes.
func (b *bufferedLog) Close() error {
	close(b.stop)
	<-b.done
	return b.Flush()
}

// flushingHandler flushes the buffer after every record at warning level
// or above, so that problems reach the log at once (and before a crash).
type flushingHandler struct {
	slog.Handler
	buf *bufferedLog
}

func (h flushingHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		if ferr := h.buf.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (h flushingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushingHandler{h.Handler.WithAttrs(attrs), h.buf}
}

func (h flushingHandler) WithGroup(name string) slog.Handler {
	return flushingHandler{h.Handler.WithGroup(name), h.buf}
}
