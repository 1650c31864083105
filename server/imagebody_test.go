package server

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/media"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/render"
)

// TestImageAnswerCachedAsUncached is the differential test of answers
// whose images come from the processed-image cache (a miss that fills its
// entry, then a hit whose pixel values are made from the cached resized
// pixels) against answers with no cache (TestImageAnswerStreamedAsBuffered
// holds those to the buffered answer): over every render golden,
// on each front end's route, the cached server's miss and hit put the same
// bytes on the wire as the uncached server, status line, headers and
// Content-Length included (no chunking), only the Date and the random
// request ids masked.
func TestImageAnswerCachedAsUncached(t *testing.T) {
	dir := multimodalDir(t)
	type pair struct{ cached, plain string }
	servers := map[string]pair{}
	for _, g := range readJSONL[renderGolden](t, filepath.Join(dir, "golden", "render_requests.jsonl")) {
		p, ok := servers[g.Model]
		if !ok {
			p = pair{cached: imageHTTPServer(t, g.Model, -1), plain: imageHTTPServer(t, g.Model, 0)}
			servers[g.Model] = p
		}
		t.Run(g.Model+"/"+g.Name, func(t *testing.T) {
			body := withModel(t, g.Request, nil)
			want := rawPost(t, p.plain, g.Endpoint, body)
			if !bytes.HasPrefix(want, []byte("HTTP/1.1 200 OK\r\n")) || !bytes.Contains(want, []byte("\r\nContent-Length: ")) ||
				bytes.Contains(want, []byte("Transfer-Encoding")) {
				t.Fatalf("uncached answer %.300q", want)
			}
			for _, round := range []string{"miss", "hit"} {
				got := rawPost(t, p.cached, g.Endpoint, body)
				if !bytes.Equal(got, want) {
					i := testenv.FirstDiff(got, want)
					t.Fatalf("%s: %d bytes on the wire, uncached %d; first difference at %d: %.80q against %.80q",
						round, len(got), len(want), i, got[max(0, i-20):], want[max(0, i-20):])
				}
			}
		})
	}
}

// imageHTTPServer serves a multimodal fixture model as "m" over a real
// listener, its processed-image cache on (cacheBytes < 0: the default) or
// off (0).
func imageHTTPServer(t *testing.T, name string, cacheBytes int64) string {
	t.Helper()
	m, err := model.Load(t.Context(), filepath.Join(multimodalDir(t), "models", name), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	images, err := render.DefaultImageConfig(m, media.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if cacheBytes >= 0 {
		images.CacheBytes = cacheBytes
	}
	gen, err := generatorWithImages(m, images)
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Model: m, ServedModelNames: []string{"m"}, Logger: discardLogger(), Generator: gen})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

var (
	dateHeader      = regexp.MustCompile(`\n(Date|X-Request-Id): [^\r]*`)
	answerRequestID = regexp.MustCompile(`"request_id":"[^"]*"`)
)

// rawPost sends body to addr's path on a connection of its own and returns
// every byte of the answer, the Date and X-Request-Id headers and the
// body's request id masked with bytes of their length.
func rawPost(t *testing.T, addr, path string, body []byte) []byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		path, addr, len(body), body); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	mask := func(b []byte) []byte { return bytes.Repeat([]byte{'x'}, len(b)) }
	return answerRequestID.ReplaceAllFunc(dateHeader.ReplaceAllFunc(out, mask), mask)
}
