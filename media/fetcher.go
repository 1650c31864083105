package media

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vrender/vrender/internal/pyfmt"
)

// userAgent stands where vLLM sends "vLLM/<version>".
const userAgent = "vrender"

// Fetcher gets media bytes from URLs under one Config. It is safe for
// concurrent use and keeps one connection pool.
type Fetcher struct {
	cfg      Config
	localDir string // AllowedLocalMediaPath with symlinks resolved; "" refuses file: URLs
	client   *http.Client
	// allowAddr decides whether a resolved address may be dialled; tests
	// narrow it to one loopback port to prove redirects are checked.
	allowAddr func(netip.AddrPort) bool
}

// New checks cfg (the local media directory must exist and be a directory,
// as vLLM checks at startup) and returns a Fetcher.
func New(cfg Config) (*Fetcher, error) {
	cfg = cfg.withDefaults()
	f := &Fetcher{cfg: cfg}
	if cfg.AllowedLocalMediaPath != "" {
		dir, err := resolveLocalDir(cfg.AllowedLocalMediaPath)
		if err != nil {
			return nil, err
		}
		f.localDir = dir
	}
	f.allowAddr = func(ap netip.AddrPort) bool {
		return f.cfg.AllowPrivateMediaURLs || isPublic(ap.Addr())
	}
	dialer := &net.Dialer{
		Timeout:   cfg.Timeout,
		KeepAlive: 30 * time.Second,
		// Control sees the address actually dialled, after DNS: a name that
		// resolves (or re-resolves, or redirects) to a private address is
		// refused here, whatever the URL said.
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !f.allowAddr(ap) {
				return errPrivate()
			}
			return nil
		},
	}
	f.client = &http.Client{
		Transport: &http.Transport{
			// No proxy: a proxy would dial the target for us, out of reach
			// of the address check (vLLM's aiohttp session trusts the
			// environment's proxy settings).
			Proxy:                  nil,
			DialContext:            dialer.DialContext,
			ForceAttemptHTTP2:      true,
			MaxIdleConns:           64,
			IdleConnTimeout:        90 * time.Second,
			TLSHandshakeTimeout:    cfg.Timeout,
			MaxResponseHeaderBytes: 64 << 10,
		},
		CheckRedirect: f.checkRedirect,
	}
	return f, nil
}

// Close releases idle connections.
func (f *Fetcher) Close() { f.client.CloseIdleConnections() }

// Fetch returns the bytes rawURL names: decoded for a data: URL, the
// response body for http(s), the file's bytes for file:. Errors are *Error.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) ([]byte, error) {
	return f.FetchInto(ctx, rawURL, nil)
}

// FetchInto is Fetch decoding a data URL into buf's storage when it is
// large enough (the bytes returned then alias buf); other URLs, and data
// URLs buf cannot hold, get new storage. A caller that reuses buf for
// request after request keeps it in the CPU's cache.
func (f *Fetcher) FetchInto(ctx context.Context, rawURL string, buf []byte) ([]byte, error) {
	c, err := classify(rawURL)
	if err != nil {
		return nil, err
	}
	switch c.kind {
	case urlData:
		d, err := parseDataURL(rawURL, f.cfg.MaxMediaBytes, buf)
		return d.Data, err
	case urlHTTP:
		if err := f.checkDomain(c.host); err != nil {
			return nil, err
		}
		if c.u.Scheme != "http" && c.u.Scheme != "https" || c.host == "" {
			// vLLM's parse accepts any scheme starting with "http"; its HTTP
			// client then refuses the URL.
			return nil, unprocessable(KindInvalidURL, msgInvalidURL, rawURL)
		}
		return f.fetchHTTP(ctx, rawURL, c.u)
	case urlFile:
		return f.readFile(c.u)
	}
	return nil, badRequest(KindScheme, msgScheme)
}

const msgInvalidURL = "Failed to fetch media from URL: Invalid URL"

func errPrivate() *Error {
	return badRequest(KindPrivateAddress, "The URL must not lead to a loopback, private or link-local address "+
		"(allowed only with --allow-private-media-urls).")
}

func (f *Fetcher) checkDomain(host string) *Error {
	if len(f.cfg.AllowedMediaDomains) == 0 || slices.Contains(f.cfg.AllowedMediaDomains, host) {
		return nil
	}
	shown := host
	if shown == "" {
		shown = "None"
	}
	return badRequest(KindDomain, "The URL must be from one of the allowed domains: "+
		string(pyfmt.AppendStrListRepr(nil, f.cfg.AllowedMediaDomains, `\ufffd`))+". Input URL domain: "+shown)
}

// checkRedirect follows aiohttp's rules (at most 10 redirects, http(s)
// only) and, beyond vLLM, keeps redirects inside the allowed domains.
func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if f.cfg.NoRedirects {
		return http.ErrUseLastResponse
	}
	orig := via[0].URL.String()
	if len(via) >= maxRedirects {
		return unprocessable(KindTooManyRedirects, "Failed to fetch media from URL: too many redirects", orig)
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return unprocessable(KindInvalidURL, msgInvalidURL, orig)
	}
	if err := f.checkDomain(strings.ToLower(req.URL.Hostname())); err != nil {
		return err
	}
	return nil
}

// fetchHTTP makes up to Attempts tries, as vllm/connections.py's
// _async_retry: attempt n (from 0) has Timeout·4^n for the whole exchange
// and follows a sleep of RetryBackoff·4^(n-1); only timeouts, connection
// failures and 5xx answers are retried.
func (f *Fetcher) fetchHTTP(ctx context.Context, rawURL string, u *url.URL) ([]byte, error) {
	timeout, backoff := f.cfg.Timeout, f.cfg.RetryBackoff
	for attempt := 1; ; attempt++ {
		body, err := f.get(ctx, rawURL, u, timeout)
		if err == nil {
			return body, nil
		}
		if ctx.Err() != nil {
			return nil, canceled(ctx)
		}
		if !err.retry || attempt >= f.cfg.Attempts {
			return nil, err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, canceled(ctx)
		case <-t.C:
		}
		timeout *= backoffFactor
		backoff *= backoffFactor
	}
}

func canceled(ctx context.Context) *Error {
	return internal(KindCanceled, "Failed to fetch media from URL: the request ended first", ctx.Err())
}

// get is one attempt; its error's retry says whether vLLM would try again.
func (f *Fetcher) get(ctx context.Context, rawURL string, u *url.URL, timeout time.Duration) ([]byte, *Error) {
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, unprocessable(KindInvalidURL, msgInvalidURL, rawURL)
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := f.client.Do(req)
	if err != nil {
		return transportError(err, actx, rawURL)
	}
	defer resp.Body.Close()
	switch code := resp.StatusCode; {
	case code >= 500:
		return nil, retryable(internal(KindHTTPStatus, msgStatus(code), nil))
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests:
		// vLLM leaves these unwrapped and does not retry them: a 500.
		return nil, internal(KindHTTPStatus, msgStatus(code), nil)
	case code >= 400:
		return nil, unprocessable(KindHTTPStatus, msgStatus(code), rawURL)
	}
	max := f.cfg.MaxMediaBytes
	if resp.ContentLength > max {
		return nil, unprocessable(KindTooLarge, msgFetchedTooLarge(max), rawURL)
	}
	body, over, err := readCapped(resp.Body, max, resp.ContentLength)
	if over {
		return nil, unprocessable(KindTooLarge, msgFetchedTooLarge(max), rawURL)
	}
	if err != nil {
		return transportError(err, actx, rawURL)
	}
	return body, nil
}

func msgStatus(code int) string {
	return "Failed to fetch media from URL: HTTP " + strconv.Itoa(code) + " error"
}

func msgFetchedTooLarge(max int64) string {
	return "Failed to fetch media from URL: the media is larger than --max-media-bytes (" +
		strconv.FormatInt(max, 10) + " bytes)"
}

// transportError sorts a failed exchange: our own refusals (private
// address, redirect rules) as they are, a timeout or connection failure as
// vLLM's retryable 500.
func transportError(err error, actx context.Context, rawURL string) ([]byte, *Error) {
	if e, ok := AsError(err); ok {
		return nil, e
	}
	if errors.Is(actx.Err(), context.DeadlineExceeded) {
		return nil, retryable(internal(KindTimeout, "Failed to fetch media from URL: timed out", err))
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	if errors.As(err, &opErr) || errors.As(err, &dnsErr) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
		return nil, retryable(internal(KindConnection, msgConnection, err))
	}
	var uerr *url.Error
	if errors.As(err, &uerr) && strings.Contains(uerr.Err.Error(), "no Host") {
		return nil, unprocessable(KindInvalidURL, msgInvalidURL, rawURL)
	}
	return nil, retryable(internal(KindConnection, msgConnection, err))
}

const msgConnection = "Failed to fetch media from URL: connection failed"

func retryable(e *Error) *Error {
	e.retry = true
	return e
}

// readCapped reads r whole unless it holds more than max bytes (over).
// hint (a Content-Length, or -1) sizes the buffer once.
func readCapped(r io.Reader, max, hint int64) (_ []byte, over bool, _ error) {
	var buf bytes.Buffer
	if hint > 0 {
		buf.Grow(int(min(hint, max) + 1))
	}
	_, err := buf.ReadFrom(io.LimitReader(r, max+1))
	if int64(buf.Len()) > max {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	return buf.Bytes(), false, nil
}

// pyRepr is Python's repr(str); a Go string's invalid bytes cannot come
// from a Python str, so they print as the replacement character.
func pyRepr(s string) string {
	return string(pyfmt.AppendStrRepr(nil, s, `\ufffd`))
}
