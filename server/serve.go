package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultShutdownTimeout is how long in-flight requests may run once
// shutdown starts, when ServeOptions.ShutdownTimeout is 0.
const DefaultShutdownTimeout = 30 * time.Second

// cancelGrace is how long handlers get, once their requests were
// cancelled at the end of the shutdown timeout, to send the engines their
// aborts and return. A healthy engine answers an abort in milliseconds;
// one that does not answer within this is not worth holding the exit for.
const cancelGrace = 2 * time.Second

// ServeOptions tune the HTTP server around a handler.
type ServeOptions struct {
	// Logger receives net/http's own errors; nil means slog.Default().
	Logger *slog.Logger
	// ShutdownTimeout is how long in-flight requests (streams included)
	// may run once ctx is done; 0 means DefaultShutdownTimeout. Requests
	// still running then are cancelled: their engine requests are aborted.
	ShutdownTimeout time.Duration
	// KeepAliveTimeout closes idle keep-alive connections; 0 means 5s, the
	// value vLLM's server (uvicorn) uses.
	KeepAliveTimeout time.Duration
	// IdleMemoryRelease is how often an idle replica (no request running,
	// only health checks and scrapes arriving) returns the heap it holds
	// free to the OS; 0 means 10s, negative never. Go keeps freed pages for reuse and gives them back
	// only slowly, so after a load spike the pod's RSS would stay at its
	// high-water mark and mislead memory-based autoscaling and alerts.
	IdleMemoryRelease time.Duration

	// releaseMemory and freeHeapBytes replace debug.FreeOSMemory and
	// retainedFreeHeap in tests.
	releaseMemory func()
	freeHeapBytes func() uint64
}

// drainer is a handler that can tell load balancers it is going away
// (*Handler: /health answers 503).
type drainer interface{ StartDraining() }

// Serve serves h on ln until ctx is done, then shuts down gracefully: it
// marks h draining, stops accepting at once and lets in-flight requests
// finish within ShutdownTimeout; then it cancels the requests still
// running (their handlers abort their engine requests) and closes their
// connections. It returns nil after a clean shutdown.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, opts ServeOptions) error {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	if opts.KeepAliveTimeout <= 0 {
		opts.KeepAliveTimeout = 5 * time.Second
	}
	// Request contexts derive from base, not from ctx: a shutdown must
	// let them run on, and cancel them only when the grace period ends.
	base, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	var handlers sync.WaitGroup
	var active, finished atomic.Int64
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			handlers.Add(1)
			active.Add(1)
			defer func() {
				active.Add(-1)
				finished.Add(1)
				handlers.Done()
			}()
			h.ServeHTTP(w, r)
		}),
		BaseContext: func(net.Listener) context.Context { return base },
		ConnContext: LargeAnswerConnContext(),
		// Bounds the time a client may take to send headers (slowloris);
		// bodies are bounded by size in the handlers instead, because a
		// slow client legitimately uploads a long prompt slowly.
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       opts.KeepAliveTimeout,
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	stopRelease := releaseWhenIdle(opts, &active, &finished)
	defer stopRelease()

	select {
	case err := <-served:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	if d, ok := h.(drainer); ok {
		d.StartDraining()
	}
	opts.Logger.Info("shutting down: draining in-flight requests", "addr", ln.Addr().String(), "timeout", opts.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), opts.ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-served; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", ln.Addr(), serr)
	}
	if err == nil {
		return nil
	}
	// The grace period is over: cancel what is left, give the handlers a
	// moment to abort their engine requests, then cut the connections.
	opts.Logger.Warn("shutdown timeout reached: cancelling in-flight requests", "addr", ln.Addr().String())
	cancelRequests()
	done := make(chan struct{})
	go func() { handlers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(cancelGrace):
	}
	_ = srv.Close()
	return fmt.Errorf("shutdown %s: %w", ln.Addr(), err)
}

// Idle memory release: at a tick with no request running and at most
// idleRequests finished since the previous tick (health checks and metric
// scrapes keep arriving at an idle replica), the heap is collected and
// returned to the OS when the runtime holds idleFreeBytes free, or when
// releaseAfter requests were served since the last release: right after a
// burst the garbage is not collected yet, so it does not count as free.
const (
	idleRequests  = 100
	idleFreeBytes = 16 << 20
	releaseAfter  = 1000
)

// releaseWhenIdle starts the idle memory release of opts and returns the
// function that stops it.
func releaseWhenIdle(opts ServeOptions, active, finished *atomic.Int64) (stop func()) {
	every := opts.IdleMemoryRelease
	if every == 0 {
		every = 10 * time.Second
	}
	if every < 0 {
		return func() {}
	}
	release := opts.releaseMemory
	if release == nil {
		release = debug.FreeOSMemory
	}
	freeBytes := opts.freeHeapBytes
	if freeBytes == nil {
		freeBytes = retainedFreeHeap
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(every)
		defer t.Stop()
		seen := finished.Load()
		released := seen
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			n := finished.Load()
			if idleEnough(active.Load(), n-seen, n-released, freeBytes) {
				release()
				released = n
			}
			seen = n
		}
	}()
	return func() { close(done); <-exited }
}

// idleEnough decides a release: nothing running, little finishing, and
// enough traffic since the last release or enough free heap to be worth a
// forced collection.
func idleEnough(active, sinceTick, sinceRelease int64, freeBytes func() uint64) bool {
	if active != 0 || sinceTick > idleRequests {
		return false
	}
	return sinceRelease >= releaseAfter || freeBytes() >= idleFreeBytes
}

// retainedFreeHeap is the heap the runtime keeps free but has not given
// back to the OS.
func retainedFreeHeap() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
