package server

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/membudget"
	"github.com/vrender/vrender/media"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/render"
)

// budgetServer serves the Qwen2.5-VL fixture over a real listener with an
// image memory budget of capacity bytes, fetching images from mediaURL's
// host only (a loopback address, so private addresses are allowed).
func budgetServer(t *testing.T, mediaURL string, capacity int64) (*httptest.Server, *membudget.Budget) {
	t.Helper()
	m, err := model.Load(context.Background(), filepath.Join(multimodalDir(t), "models", "qwen2_5_vl"), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(mediaURL)
	if err != nil {
		t.Fatal(err)
	}
	images, err := render.DefaultImageConfig(m, media.Config{AllowedMediaDomains: []string{u.Hostname()},
		AllowPrivateMediaURLs: true, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := membudget.New(capacity)
	images.Budget = b
	r, err := render.New(m, render.Config{Images: images})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Model: m, ServedModelNames: []string{"m"}, Logger: discardLogger(),
		Generator: render.NewGenerator(r, m.MaxModelLen, render.GeneratorConfig{})})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, b
}

// imageRenderBody is a render request for the image at url.
func imageRenderBody(url string) []byte {
	return []byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"` + url +
		`"}},{"type":"text","text":"What is this?"}]}]}`)
}

// postAsync posts body to srv's render route with ctx, on a connection of
// its own, and reports the status (0 for a transport error).
func postAsync(ctx context.Context, srv *httptest.Server, body []byte) <-chan int {
	done := make(chan int, 1)
	go func() {
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions/render", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	return done
}

// srvMetric reads one unlabelled sample of srv's /metrics.
func srvMetric(t *testing.T, srv *httptest.Server, name string) float64 {
	t.Helper()
	return metric(scrape(t, srv.Config.Handler), name)
}

// within polls ok until it holds or d has passed, and says which.
func within(d time.Duration, ok func() bool) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(5 * time.Millisecond) {
		if ok() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// TestImageDisconnectFreesWork: a client that goes away while its image is
// being fetched (a media server that sends the headers and a few bytes,
// then nothing) or while its request waits for the image memory budget has
// its work stopped within a second: the fetch's connection closed, the
// queue left, the budget and the goroutines back where they were.
func TestImageDisconnectFreesWork(t *testing.T) {
	jpeg, err := os.ReadFile(filepath.Join(multimodalDir(t), "images", "jpeg_444_1280x720.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	fetching := make(chan struct{}, 1)
	fetchGone := make(chan struct{}, 1)
	media := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// No idle connections in the fetcher's pool: the goroutines
		// counted are the requests' own.
		w.Header().Set("Connection", "close")
		if strings.HasSuffix(r.URL.Path, "/slow.jpg") {
			w.Header().Set("Content-Length", "1000000")
			_, _ = w.Write(jpeg[:100])
			w.(http.Flusher).Flush()
			fetching <- struct{}{}
			<-r.Context().Done()
			fetchGone <- struct{}{}
			return
		}
		_, _ = w.Write(jpeg)
	}))
	defer media.Close()
	srv, b := budgetServer(t, media.URL, 256<<20)

	// One full request first: connection pools and lazily started
	// goroutines are in place before the baseline is counted.
	if status := <-postAsync(context.Background(), srv, imageRenderBody(media.URL+"/full.jpg")); status != http.StatusOK {
		t.Fatalf("warm-up request: status %d", status)
	}
	if !within(2*time.Second, func() bool { return srvMetric(t, srv, "vrender_inflight_requests") <= 1 }) {
		t.Fatal("the warm-up request never finished")
	}

	// gone checks, within a second, that the goroutines are back to
	// baseline (counted in the same subtest) and the budget is empty.
	gone := func(t *testing.T, what string, baseline int) {
		t.Helper()
		if !within(time.Second, func() bool { return runtime.NumGoroutine() <= baseline }) {
			buf := make([]byte, 1<<20)
			t.Errorf("%s: %d goroutines a second after the disconnect, %d before the request:\n%s", what, runtime.NumGoroutine(), baseline,
				buf[:runtime.Stack(buf, true)])
		}
		if s := b.Stats(); s.InUse != 0 || s.Waiting != 0 {
			t.Errorf("%s: budget %+v after the disconnect", what, s)
		}
	}

	t.Run("mid-fetch", func(t *testing.T) {
		baseline := runtime.NumGoroutine()
		ctx, cancel := context.WithCancel(context.Background())
		done := postAsync(ctx, srv, imageRenderBody(media.URL+"/slow.jpg"))
		<-fetching
		cancel()
		start := time.Now()
		select {
		case <-fetchGone:
			t.Logf("media fetch closed %v after the client left", time.Since(start))
		case <-time.After(time.Second):
			t.Fatal("the media fetch still runs a second after the client left")
		}
		<-done
		gone(t, "mid-fetch", baseline)
	})

	t.Run("queued for the budget", func(t *testing.T) {
		baseline := runtime.NumGoroutine()
		hold, err := b.Acquire(context.Background(), 256<<20)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := postAsync(ctx, srv, imageRenderBody(media.URL+"/full.jpg"))
		if !within(5*time.Second, func() bool { return srvMetric(t, srv, "vrender_image_budget_waiting_requests") == 1 }) {
			t.Fatal("the request never queued for the budget")
		}
		cancel()
		if !within(time.Second, func() bool { return srvMetric(t, srv, "vrender_image_budget_waiting_requests") == 0 }) {
			t.Fatal("the request still waits for the budget a second after the client left")
		}
		<-done
		hold()
		gone(t, "queued", baseline)
	})

	// The server still renders.
	if status := <-postAsync(context.Background(), srv, imageRenderBody(media.URL+"/full.jpg")); status != http.StatusOK {
		t.Fatalf("request after the disconnects: status %d", status)
	}
	// The reservation ends as the handler returns, just after the client
	// has read the answer.
	if !within(time.Second, func() bool { return srvMetric(t, srv, "vrender_image_budget_in_use_bytes") == 0 }) {
		t.Fatalf("in use %g after every request finished", srvMetric(t, srv, "vrender_image_budget_in_use_bytes"))
	}
}

// TestImageBudgetTooLargeStatus: images that need more than the whole
// budget are a 413 with an OpenAI error body, counted on /metrics.
func TestImageBudgetTooLargeStatus(t *testing.T) {
	jpeg, err := os.ReadFile(filepath.Join(multimodalDir(t), "images", "jpeg_444_1280x720.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	media := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(jpeg) }))
	defer media.Close()
	srv, _ := budgetServer(t, media.URL, 1<<20)
	resp, err := http.Post(srv.URL+"/v1/chat/completions/render", "application/json", bytes.NewReader(imageRenderBody(media.URL+"/a.jpg")))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body.String(), `"type":"Request Entity Too Large"`) ||
		!strings.Contains(body.String(), "--image-memory-budget of 1048576 bytes") {
		t.Fatalf("status %d, body %s", resp.StatusCode, body.String())
	}
	if got := srvMetric(t, srv, "vrender_image_budget_refused_total"); got != 1 {
		t.Fatalf("refused_total = %g, want 1", got)
	}
}
