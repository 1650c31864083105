package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"go.opentelemetry.io/otel/propagation"

	"github.com/vrender/vrender/internal/wire"
)

// legacyAbortPath is the unauthenticated abort route older tokens-only
// engines have instead of abortPath.
const legacyAbortPath = "/abort_requests"

// Abort asks the engine to stop the named requests (engine request ids,
// see EngineRequestID). The engine answers at once and aborts in the
// background.
//
// Abort runs when the request it stops is over for the caller (client
// gone, stop string matched), so the request's ctx is usually already
// cancelled: pass a ctx derived with context.WithoutCancel from it (to
// keep its values for logging). Abort bounds the call by its own timeout
// (5s) and does not retry.
func (c *Client) Abort(ctx context.Context, engineRequestIDs ...string) error {
	if len(engineRequestIDs) == 0 {
		return nil
	}
	// vLLM's AbortRequest body, as json.dumps writes it.
	body := append(wire.AppendStrings([]byte(`{"request_ids":`), engineRequestIDs), '}')
	ctx, cancel := context.WithTimeout(ctx, c.abortTimeout)
	defer cancel()
	err := c.postAbort(ctx, c.abortURL, body)
	if e, ok := err.(*Error); ok && e.EngineStatus == http.StatusNotFound {
		err = c.postAbort(ctx, c.base+legacyAbortPath, body)
	}
	return err
}

func (c *Client) postAbort(ctx context.Context, url string, body []byte) error {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("engine abort: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if c.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	// W3C trace context: the engine's spans join the caller's trace. A
	// ctx without a span context (tracing off, no incoming traceparent)
	// adds nothing.
	traceContext.Inject(ctx, propagation.HeaderCarrier(hreq.Header))
	resp, err := c.http.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("engine abort at %s: %w", c.base, ctx.Err())
		}
		return c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if resp.StatusCode != http.StatusOK {
		return statusError(resp.StatusCode, data)
	}
	return nil
}
