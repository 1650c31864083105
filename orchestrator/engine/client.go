package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/protocol"
)

// Options configure a Client. Zero values take the defaults below; a
// negative timeout disables that timeout and negative Retries disables
// retrying.
type Options struct {
	// HTTPClient replaces the client built from the options (tests inject
	// dialers through it); its Transport then decides connection reuse
	// and ConnectTimeout does not apply.
	HTTPClient *http.Client
	// APIKey is sent as "Authorization: Bearer <key>" (the engine's
	// --api-key).
	APIKey string
	// ConnectTimeout bounds dialing the engine (default 5s).
	ConnectTimeout time.Duration
	// FirstEventTimeout bounds the wait from sending a request to the
	// first SSE event, or to the whole body of a non-streaming request
	// (default 60s: queueing and prefill of a long prompt take seconds; a
	// minute of silence is an engine that will not answer).
	FirstEventTimeout time.Duration
	// IdleTimeout bounds the wait between two events of a stream (default
	// 60s).
	IdleTimeout time.Duration
	// TotalTimeout bounds a whole request, first byte to last (default:
	// none, as generations may be long).
	TotalTimeout time.Duration
	// Retries is how many times a request is re-sent when the engine was
	// unreachable or answered 503/429 before sending anything (default 2).
	Retries int
	// Logger receives retries and protocol oddities (default slog.Default).
	Logger *slog.Logger
	// MMCacheBytes is the size of the engine's multimodal item cache
	// (vLLM's --mm-processor-cache-gb in bytes) when it runs one (vLLM's
	// lru processor cache): the client then sends the items the engine
	// holds as null kwargs (items.go). 0 sends every item's data.
	MMCacheBytes int64
}

const (
	defaultConnectTimeout    = 5 * time.Second
	defaultFirstEventTimeout = 60 * time.Second
	defaultIdleTimeout       = 60 * time.Second
	defaultRetries           = 2
	// defaultAbortTimeout bounds an abort call: it runs after the client went
	// away and must not hang a handler.
	defaultAbortTimeout = 5 * time.Second
	// Backoff between retries: retryBackoff doubled per attempt, capped,
	// with jitter so that many streams retrying at once spread out.
	retryBackoff    = 50 * time.Millisecond
	maxRetryBackoff = 1 * time.Second
	// maxIdleConnsPerHost keeps enough idle keep-alive connections for
	// 500+ concurrent streams to one engine to be reused, not redialled.
	maxIdleConnsPerHost = 1024
	// maxResponseBody bounds a non-streaming response and maxErrorBody an
	// error body read for its message.
	maxResponseBody = 256 << 20
	maxErrorBody    = 64 << 10
)

// Engine paths (vllm-api.md §4).
const (
	generatePath = "/inference/v1/generate"
	abortPath    = "/inference/v1/abort_requests"
)

// engineRequestIDPrefix is what the tokens-only engine puts before the
// X-Request-Id (or body request_id) to name its request.
const engineRequestIDPrefix = "generate-tokens-"

// maxRequestIDBase bounds the part of an engine request id taken from the
// client's id: enough to find the request in engine logs.
const maxRequestIDBase = 96

// NewRequestID returns a fresh id for one engine request made on behalf of
// the client-visible id base ("chatcmpl-<client id>"). Clients choose their
// ids freely (vLLM accepts any string) and may reuse them, so the engine
// never sees one as it is: bytes that are not safe in an HTTP header value
// or an engine log are replaced with '_', the result is cut to a bounded
// length, and a random suffix makes it unique, so that requests sharing a
// client id cannot abort each other.
func NewRequestID(base string) string {
	b := make([]byte, 0, min(len(base), maxRequestIDBase)+15)
	for i := 0; i < len(base) && len(b) < maxRequestIDBase; i++ {
		c := base[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			c = '_'
		}
		b = append(b, c)
	}
	b = append(b, '-')
	return string(strconv.AppendUint(b, rand.Uint64()|1<<63, 36))
}

// EngineRequestID is the id under which the engine knows the request sent
// with requestID; abort calls name requests by it.
func EngineRequestID(requestID string) string { return engineRequestIDPrefix + requestID }

// Client talks to one tokens-only engine. It is safe for concurrent use;
// create one per engine and reuse it, so that connections are reused.
type Client struct {
	base              string
	generateURL       string
	abortURL          string
	http              *http.Client
	ownTransport      *http.Transport // nil when Options.HTTPClient was given
	apiKey            string
	firstEventTimeout time.Duration
	idleTimeout       time.Duration
	totalTimeout      time.Duration
	retries           int
	abortTimeout      time.Duration
	log               *slog.Logger
	bodies            sync.Pool // *[]byte: generate bodies' buffers (requestBody)
	// items are the multimodal items the engine holds (items.go); nil
	// when its cache is unknown.
	items *features.ItemLRU[struct{}]
	// nullItems and itemResends count the items sent as null and the
	// requests sent again with their data (ItemStats).
	nullItems, itemResends atomic.Int64
}

// New returns a client for the engine at baseURL (scheme, host and an
// optional path prefix, e.g. "http://10.0.0.7:8200").
func New(baseURL string, o Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("engine URL %q: %w", baseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("engine URL %q: want http://host:port or https://host:port", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("engine URL %q: must not have a query or fragment", baseURL)
	}
	c := &Client{
		base:              u.String(),
		apiKey:            o.APIKey,
		firstEventTimeout: durationOption(o.FirstEventTimeout, defaultFirstEventTimeout),
		idleTimeout:       durationOption(o.IdleTimeout, defaultIdleTimeout),
		totalTimeout:      max(o.TotalTimeout, 0),
		retries:           o.Retries,
		abortTimeout:      defaultAbortTimeout,
		log:               o.Logger,
	}
	if o.MMCacheBytes > 0 {
		c.items = features.NewItemLRU[struct{}](o.MMCacheBytes)
	}
	c.generateURL = c.base + generatePath
	c.abortURL = c.base + abortPath
	switch {
	case o.Retries == 0:
		c.retries = defaultRetries
	case o.Retries < 0:
		c.retries = 0
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if o.HTTPClient != nil {
		hc := *o.HTTPClient
		c.http = &hc
	} else {
		c.ownTransport = newTransport(durationOption(o.ConnectTimeout, defaultConnectTimeout))
		c.http = &http.Client{Transport: c.ownTransport}
	}
	// A redirect is answered as the engine's own (non-200) answer: following
	// it would re-send the prompt to wherever the engine points.
	c.http.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c, nil
}

// durationOption applies the zero-means-default, negative-means-off rule.
func durationOption(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// newTransport is the one transport of a client: HTTP/1.1 keep-alive
// (each stream holds a connection; HTTP/2 would multiplex them but vLLM's
// uvicorn does not speak it), no compression (it would delay every SSE
// event), dialing bounded by connectTimeout, and no proxy from the
// environment (a buffering proxy would hold back events; engines are
// reached directly, as vLLM's own disaggregation proxy reaches them), and
// generate bodies written with one Write (bodyConn; WriteBufferSize would
// not do it: net/http flushes the headers and copies the body past the
// buffer, 32 KB at a time, whatever its size).
func newTransport(connectTimeout time.Duration) *http.Transport {
	dialer := &net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		DialContext:           dialBodyConn(dialer.DialContext),
		MaxIdleConns:          0, // no global cap: the per-host cap below applies
		MaxIdleConnsPerHost:   maxIdleConnsPerHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   connectTimeout,
		ExpectContinueTimeout: 0,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
	}
}

// URL is the engine's base URL.
func (c *Client) URL() string { return c.base }

// CloseIdleConnections closes the client's idle keep-alive connections
// (at shutdown, or in tests).
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// withRequestID returns a shallow copy of req naming requestID, so the
// caller's request is never modified.
func withRequestID(req *protocol.GenerateRequest, requestID string, stream bool) protocol.GenerateRequest {
	r := *req
	r.RequestID = requestID
	r.Stream = &stream
	if stream {
		yes, no := true, false
		r.StreamOptions = &protocol.StreamOptions{IncludeUsage: &yes, ContinuousUsageStats: &no}
	} else {
		r.StreamOptions = nil
	}
	if r.OutputMode == "" {
		r.OutputMode = protocol.OutputModeTokens
	}
	return r
}

// send POSTs a generate body and returns the 200 response, retrying
// while nothing has been received from the engine. The caller owns
// resp.Body. ctx governs the whole exchange including the body.
func (c *Client) send(ctx context.Context, body *requestBody, requestID string, stream bool) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := c.sendOnce(ctx, body, requestID, stream)
		if err == nil {
			return resp, nil
		}
		var e *Error
		if !errors.As(err, &e) || !e.Temporary || attempt >= c.retries || ctx.Err() != nil {
			return nil, err
		}
		wait := backoff(attempt)
		c.log.LogAttrs(ctx, slog.LevelWarn, "engine request failed, retrying",
			slog.String("engine", c.base), slog.String("request_id", requestID),
			slog.Int("attempt", attempt+1), slog.Duration("backoff", wait), slog.String("error", e.Message))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("engine request %s: %w", requestID, ctx.Err())
		case <-t.C:
		}
	}
}

func backoff(attempt int) time.Duration {
	d := retryBackoff << attempt
	if d > maxRetryBackoff || d <= 0 {
		d = maxRetryBackoff
	}
	// Full jitter in [d/2, d).
	return d/2 + rand.N(d/2)
}

func (c *Client) sendOnce(ctx context.Context, body *requestBody, requestID string, stream bool) (*http.Response, error) {
	rd := body.reader()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.generateURL, rd)
	if err != nil {
		rd.Close()
		return nil, fmt.Errorf("engine request %s: %w", requestID, err)
	}
	// What NewRequest sets for a *bytes.Reader: the length, and a fresh body
	// for the transport's own retry on a keep-alive connection the engine
	// had closed.
	hreq.ContentLength = int64(len(body.b))
	hreq.GetBody = func() (io.ReadCloser, error) { return body.reader(), nil }
	hreq.Header.Set("Content-Type", "application/json")
	if stream {
		hreq.Header.Set("Accept", "text/event-stream")
	} else {
		hreq.Header.Set("Accept", "application/json")
	}
	hreq.Header.Set("X-Request-Id", requestID)
	if c.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	// W3C trace context: the engine's spans join the caller's trace. A
	// ctx without a span context (tracing off, no incoming traceparent)
	// adds nothing.
	traceContext.Inject(ctx, propagation.HeaderCarrier(hreq.Header))
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		data, readErr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if readErr != nil && ctx.Err() != nil {
			return nil, c.transportError(ctx, readErr)
		}
		return nil, statusError(resp.StatusCode, data)
	}
	return resp, nil
}

// transportError classifies a failure to get a response: the caller's
// cancellation stays a context error; our own timer's cancellation is a
// timeout; anything else means the engine could not be reached (or went
// away before answering), which is worth retrying because no response
// byte was received.
//
// The messages reach vrender's clients, so they never name the engine's
// address (internal topology); the logs carry it beside them.
func (c *Client) transportError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		if cause := context.Cause(ctx); errors.Is(cause, errTimedOut) {
			return gatewayTimeout("%s", cause)
		}
		return fmt.Errorf("engine request: %w", ctxErr)
	}
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return unavailable(err, "engine unreachable: connection refused")
	case errors.As(err, &netErr) && netErr.Timeout():
		return unavailable(err, "engine unreachable: connect timeout")
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return unavailable(err, "engine closed the connection before answering")
	}
	return unavailable(err, "engine unreachable: %v", scrubURL(err))
}

// scrubURL is err's message without the engine's address: net/http and
// net put the URL and the dialled address in front of the cause
// ("Post \"http://10.0.0.7:8200/...\": dial tcp 10.0.0.7:8200: ..."). What
// it cannot take apart is said generically; the log has the whole error.
func scrubURL(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Op + ": " + oe.Err.Error()
	}
	return "transport error"
}
