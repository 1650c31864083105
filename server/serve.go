package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// ServeOptions tune the HTTP server around a handler.
type ServeOptions struct {
	// Logger receives net/http's own errors; nil means slog.Default().
	Logger *slog.Logger
	// ShutdownTimeout is how long in-flight requests may run once ctx is
	// done; 0 means 30s. Requests still running then are cut off.
	ShutdownTimeout time.Duration
	// KeepAliveTimeout closes idle keep-alive connections; 0 means 5s, the
	// value vLLM's server (uvicorn) uses.
	KeepAliveTimeout time.Duration
}

// Serve serves h on ln until ctx is done, then shuts down gracefully: it
// stops accepting at once and lets in-flight requests finish within
// ShutdownTimeout. It returns nil after a clean shutdown.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, opts ServeOptions) error {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = 30 * time.Second
	}
	if opts.KeepAliveTimeout <= 0 {
		opts.KeepAliveTimeout = 5 * time.Second
	}
	srv := &http.Server{
		Handler: h,
		// Bounds the time a client may take to send headers (slowloris);
		// bodies are bounded by size in the handlers instead, because a
		// slow client legitimately uploads a long prompt slowly.
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       opts.KeepAliveTimeout,
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err := <-served:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	opts.Logger.Info("shutting down", "addr", ln.Addr().String(), "timeout", opts.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), opts.ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-served; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", ln.Addr(), serr)
	}
	if err != nil {
		_ = srv.Close()
		return fmt.Errorf("shutdown %s: %w", ln.Addr(), err)
	}
	return nil
}
