package media

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fastConfig allows loopback (the test servers) and keeps retries quick.
func fastConfig() Config {
	return Config{AllowPrivateMediaURLs: true, Timeout: 2 * time.Second, RetryBackoff: time.Millisecond}
}

func newFetcher(t *testing.T, cfg Config) *Fetcher {
	t.Helper()
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// server counts the requests it gets.
func server(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s, &hits
}

func wantError(t *testing.T, err error, status int, kind Kind, msg string) *Error {
	t.Helper()
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("err = %v, want *Error", err)
	}
	if e.Status != status || e.Kind != kind || (msg != "" && e.Message != msg) {
		t.Fatalf("got %d %v %q, want %d %v %q", e.Status, e.Kind, e.Message, status, kind, msg)
	}
	return e
}

func TestFetchHTTP(t *testing.T) {
	s, hits := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("User-Agent") != userAgent {
			w.WriteHeader(400)
		}
		fmt.Fprint(w, "image bytes")
	})
	got, err := newFetcher(t, fastConfig()).Fetch(t.Context(), s.URL+"/a.png")
	if err != nil || string(got) != "image bytes" || hits.Load() != 1 {
		t.Fatalf("got %q %v after %d requests", got, err, hits.Load())
	}
}

func TestFetchRefusesPrivateAddresses(t *testing.T) {
	s, hits := server(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secret") })
	port := addrPort(t, s).Port()
	f := newFetcher(t, Config{Timeout: time.Second, RetryBackoff: time.Millisecond})
	for _, u := range []string{
		s.URL + "/x",
		fmt.Sprintf("http://localhost:%d/x", port), // a name resolving to loopback
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/x", port),
		fmt.Sprintf("http://0.0.0.0:%d/x", port),
		fmt.Sprintf("http://2130706433:%d/x", port), // 127.0.0.1 as one number: refused by the resolver or the check
	} {
		_, err := f.Fetch(t.Context(), u)
		e, ok := AsError(err)
		if !ok || e.Status/100 != 4 && e.Kind != KindConnection {
			t.Errorf("%s: %v", u, err)
		}
	}
	_, err := f.Fetch(t.Context(), s.URL+"/x")
	wantError(t, err, 400, KindPrivateAddress, "")
	if hits.Load() != 0 {
		t.Fatalf("the server got %d requests", hits.Load())
	}
}

func TestFetchChecksEveryRedirect(t *testing.T) {
	inner, innerHits := server(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "metadata") })
	outer, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inner.URL+"/latest/meta-data", http.StatusFound)
	})
	outerPort := addrPort(t, outer).Port()

	// Only the outer server's port counts as public: the redirect target
	// is refused at dial time.
	f := newFetcher(t, Config{Timeout: time.Second, RetryBackoff: time.Millisecond})
	f.allowAddr = func(ap netip.AddrPort) bool { return ap.Port() == outerPort }
	_, err := f.Fetch(t.Context(), outer.URL+"/img.png")
	wantError(t, err, 400, KindPrivateAddress, "")
	if innerHits.Load() != 0 {
		t.Fatalf("the redirect target got %d requests", innerHits.Load())
	}

	// With private addresses allowed, the same redirect is followed.
	got, err := newFetcher(t, fastConfig()).Fetch(t.Context(), outer.URL+"/img.png")
	if err != nil || string(got) != "metadata" {
		t.Fatalf("got %q %v", got, err)
	}
}

func addrPort(t *testing.T, s *httptest.Server) netip.AddrPort {
	t.Helper()
	ap, err := netip.ParseAddrPort(s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return ap
}

func TestFetchRedirects(t *testing.T) {
	// /r/N redirects N more times, then answers "done".
	var s *httptest.Server
	s, _ = server(t, func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Path, "/r/%d", &n)
		if n == 0 {
			fmt.Fprint(w, "done")
			return
		}
		http.Redirect(w, r, fmt.Sprintf("%s/r/%d", s.URL, n-1), http.StatusMovedPermanently)
	})
	f := newFetcher(t, fastConfig())
	if got, err := f.Fetch(t.Context(), s.URL+"/r/9"); err != nil || string(got) != "done" {
		t.Fatalf("9 redirects: %q %v", got, err)
	}
	_, err := f.Fetch(t.Context(), s.URL+"/r/10")
	wantError(t, err, 422, KindTooManyRedirects, "")

	// VLLM_MEDIA_URL_ALLOW_REDIRECTS=0: the redirect's own body comes back.
	cfg := fastConfig()
	cfg.NoRedirects = true
	got, err := newFetcher(t, cfg).Fetch(t.Context(), s.URL+"/r/1")
	if err != nil || !strings.Contains(string(got), "Moved Permanently") {
		t.Fatalf("no redirects: %q %v", got, err)
	}
}

func TestFetchDomains(t *testing.T) {
	other, otherHits := server(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "x") })
	s, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		u, _ := url.Parse(other.URL)
		http.Redirect(w, r, "http://localhost:"+u.Port()+"/x", http.StatusFound)
	})
	cfg := fastConfig()
	cfg.AllowedMediaDomains = []string{"127.0.0.1", "images.example"}
	f := newFetcher(t, cfg)
	_, err := f.Fetch(t.Context(), "https://Evil.Example/a.png")
	wantError(t, err, 400, KindDomain,
		"The URL must be from one of the allowed domains: ['127.0.0.1', 'images.example']. Input URL domain: evil.example")
	// The redirect leaves the allowed domains (vLLM checks only the first URL).
	_, err = f.Fetch(t.Context(), s.URL+"/a.png")
	wantError(t, err, 400, KindDomain, "")
	if otherHits.Load() != 0 {
		t.Fatal("the redirect was followed")
	}
}

func TestFetchStatus(t *testing.T) {
	for _, tc := range []struct {
		code     int
		status   int
		typ      string
		attempts int64
	}{
		{404, 422, "UnprocessableEntityError", 1},
		{403, 422, "UnprocessableEntityError", 1},
		{429, 500, "InternalServerError", 1},
		{408, 500, "InternalServerError", 1},
		{503, 500, "InternalServerError", 3},
		{500, 500, "InternalServerError", 3},
	} {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			s, hits := server(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(tc.code) })
			_, err := newFetcher(t, fastConfig()).Fetch(t.Context(), s.URL+"/a")
			e := wantError(t, err, tc.status, KindHTTPStatus, "")
			msg := fmt.Sprintf("Failed to fetch media from URL: HTTP %d error", tc.code)
			if tc.status == 422 {
				msg += " (parameter=image_url, value=" + s.URL + "/a)"
				if e.Param != "image_url" {
					t.Fatalf("param %q", e.Param)
				}
			}
			if e.Message != msg || e.Type != tc.typ || hits.Load() != tc.attempts {
				t.Fatalf("got %q %s after %d attempts", e.Message, e.Type, hits.Load())
			}
		})
	}
}

func TestFetchRetriesThenSucceeds(t *testing.T) {
	var calls atomic.Int64
	s, hits := server(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	})
	got, err := newFetcher(t, fastConfig()).Fetch(t.Context(), s.URL)
	if err != nil || string(got) != "ok" || hits.Load() != 3 {
		t.Fatalf("got %q %v after %d", got, err, hits.Load())
	}
	cfg := fastConfig()
	cfg.Attempts = 1
	hits.Store(0)
	calls.Store(0)
	if _, err := newFetcher(t, cfg).Fetch(t.Context(), s.URL); err == nil || hits.Load() != 1 {
		t.Fatalf("one attempt: %v after %d", err, hits.Load())
	}
}

func TestFetchSlowServer(t *testing.T) {
	// A server that never answers, and one that trickles bytes: each
	// attempt ends at its timeout (50 ms, then 200 ms), then the fetch.
	var mu sync.Mutex
	var waited []time.Duration
	never, neverHits := server(t, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		<-r.Context().Done()
		mu.Lock()
		waited = append(waited, time.Since(start))
		mu.Unlock()
	})
	trickle, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000000")
		for r.Context().Err() == nil {
			w.Write([]byte{0})
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
		}
	})
	cfg := fastConfig()
	cfg.Timeout = 50 * time.Millisecond
	cfg.Attempts = 2
	f := newFetcher(t, cfg)
	for _, u := range []string{never.URL, trickle.URL} {
		start := time.Now()
		_, err := f.Fetch(t.Context(), u)
		wantError(t, err, 500, KindTimeout, "Failed to fetch media from URL: timed out")
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("%s took %v", u, d)
		}
	}
	if neverHits.Load() != 2 {
		t.Fatalf("%d attempts", neverHits.Load())
	}
	// The second attempt had four times the first one's time (a timeout
	// never fires early, so lower bounds are safe on a busy machine).
	mu.Lock()
	if len(waited) != 2 || waited[0] < 40*time.Millisecond || waited[1] < 160*time.Millisecond {
		t.Fatalf("attempts lasted %v, want about 50ms and 200ms", waited)
	}
	mu.Unlock()

	// The caller's context ends the wait and the backoff.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	cfg.Timeout = time.Minute
	_, err := newFetcher(t, cfg).Fetch(ctx, never.URL)
	e := wantError(t, err, 500, KindCanceled, "")
	if !errors.Is(e, context.DeadlineExceeded) {
		t.Fatalf("cause %v", e.Unwrap())
	}
}

func TestFetchHugeServer(t *testing.T) {
	declared, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "2000")
		w.Write(make([]byte, 2000))
	})
	var wrote atomic.Int64
	endless, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 4096)
		for r.Context().Err() == nil {
			n, err := w.Write(buf)
			wrote.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	exact, _ := server(t, func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 1000)) })
	cfg := fastConfig()
	cfg.MaxMediaBytes = 1000
	f := newFetcher(t, cfg)
	for _, u := range []string{declared.URL, endless.URL} {
		_, err := f.Fetch(t.Context(), u)
		wantError(t, err, 422, KindTooLarge, "")
	}
	if got, err := f.Fetch(t.Context(), exact.URL); err != nil || len(got) != 1000 {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
}

func TestFetchSchemes(t *testing.T) {
	f := newFetcher(t, fastConfig())
	for _, tc := range []struct {
		url    string
		status int
		kind   Kind
		msg    string
	}{
		{"ftp://example.com/a.png", 400, KindScheme, "The URL must be either a HTTP, data or file URL."},
		{"/just/a/path", 400, KindScheme, "The URL must be either a HTTP, data or file URL."},
		{"httpx://example.com/a", 422, KindInvalidURL,
			"Failed to fetch media from URL: Invalid URL (parameter=image_url, value=httpx://example.com/a)"},
		{"http:///a", 422, KindInvalidURL, ""},
		{"http://a b/", 400, KindScheme, "Failed to parse: http://a b/"},
		{"file:///etc/passwd", 500, KindLocalDisabled, "Cannot load local files without `--allowed-local-media-path`."},
	} {
		_, err := f.Fetch(t.Context(), tc.url)
		wantError(t, err, tc.status, tc.kind, tc.msg)
	}
}

func TestFetchFile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "media")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "a.png"), []byte("png"), 0o644)
	os.WriteFile(filepath.Join(dir, "big.png"), make([]byte, 2000), 0o644)
	os.WriteFile(filepath.Join(root, "secret"), []byte("secret"), 0o644)
	os.Symlink(filepath.Join(root, "secret"), filepath.Join(dir, "escape.png"))
	os.Symlink(filepath.Join(dir, "a.png"), filepath.Join(dir, "inside.png"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fastConfig()
	cfg.AllowedLocalMediaPath = dir
	cfg.MaxMediaBytes = 1000
	f := newFetcher(t, cfg)
	for _, name := range []string{"a.png", "inside.png", "sub/../a.png"} {
		got, err := f.Fetch(t.Context(), "file://"+dir+"/"+name)
		if err != nil || string(got) != "png" {
			t.Fatalf("%s: %q %v", name, got, err)
		}
	}
	for _, tc := range []struct {
		url    string
		status int
		kind   Kind
		msg    string
	}{
		{"file://" + dir + "/escape.png", 400, KindLocalPath, "The file path " + dir + "/escape.png must be a subpath of `--allowed-local-media-path " + dir + "`."},
		{"file://" + root + "/secret", 400, KindLocalPath, ""},
		{"file://" + dir, 400, KindLocalPath, ""},
		{"file://" + dir + "/../secret", 400, KindLocalPath, ""},
		{"file://" + dir + "/missing.png", 500, KindLocalRead, "[Errno 2] No such file or directory: '" + dir + "/missing.png'"},
		{"file://" + dir + "/sub", 500, KindLocalRead, "[Errno 21] Is a directory: '" + dir + "/sub'"},
		{"file://" + dir + "/fifo", 400, KindLocalRead, ""},
		{"file://" + dir + "/big.png", 400, KindTooLarge, ""},
	} {
		_, err := f.Fetch(t.Context(), tc.url)
		wantError(t, err, tc.status, tc.kind, tc.msg)
	}

	if _, err := New(Config{AllowedLocalMediaPath: filepath.Join(root, "nope")}); err == nil {
		t.Fatal("a missing directory was accepted")
	}
	if _, err := New(Config{AllowedLocalMediaPath: filepath.Join(root, "secret")}); err == nil {
		t.Fatal("a file was accepted as the directory")
	}
}

func TestIsPublic(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		public bool
	}{
		{"8.8.8.8", true}, {"1.1.1.1", true}, {"2606:4700:4700::1111", true}, {"93.184.216.34", true},
		{"127.0.0.1", false}, {"127.255.0.9", false}, {"::1", false}, {"0.0.0.0", false}, {"::", false},
		{"10.1.2.3", false}, {"172.16.0.1", false}, {"172.31.255.255", false}, {"172.32.0.1", true},
		{"192.168.1.1", false}, {"169.254.169.254", false}, {"fd00:ec2::254", false}, {"fe80::1", false},
		{"100.64.0.1", false}, {"224.0.0.1", false}, {"255.255.255.255", false},
		{"::ffff:127.0.0.1", false}, {"::ffff:8.8.8.8", true},
		{"64:ff9b::a9fe:a9fe", false}, {"64:ff9b::808:808", true}, // NAT64 of 169.254.169.254 / 8.8.8.8
		{"2002:a9fe:a9fe::1", false}, {"2002:808:808::1", true}, // 6to4
		{"fe80::1%eth0", false},
	} {
		if got := isPublic(netip.MustParseAddr(tc.addr)); got != tc.public {
			t.Errorf("%s: public = %v", tc.addr, got)
		}
	}
}

func TestApplyEnv(t *testing.T) {
	env := map[string]string{"VLLM_IMAGE_FETCH_TIMEOUT": "12", "VLLM_MEDIA_FETCH_MAX_RETRIES": "0",
		"VLLM_MEDIA_URL_ALLOW_REDIRECTS": "0"}
	var c Config
	if err := c.ApplyEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if c.Timeout != 12*time.Second || c.Attempts != 1 || !c.NoRedirects {
		t.Fatalf("%+v", c)
	}
	env["VLLM_IMAGE_FETCH_TIMEOUT"] = "5s"
	if err := c.ApplyEnv(func(k string) string { return env[k] }); err == nil {
		t.Fatal("5s accepted")
	}
	d := Config{}.withDefaults()
	if d.Timeout != 5*time.Second || d.Attempts != 3 || d.MaxMediaBytes != 20<<20 || d.RetryBackoff != time.Second {
		t.Fatalf("defaults %+v", d)
	}
}
