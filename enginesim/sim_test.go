package enginesim

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testmodel"
)

// newServer starts a sim on an httptest server.
func newServer(t *testing.T, cfg Config) (*Sim, *httptest.Server) {
	t.Helper()
	m := testmodel.Load(t, "qwen3")
	if cfg.ServedModelName == "" {
		cfg.ServedModelName = "qwen3"
	}
	sim, err := New(m, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	return sim, srv
}

// post sends body and returns status, content type and the whole body.
func post(t *testing.T, url, body string, header ...string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = io.Copy(&buf, resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), buf.String()
}

func newBenchServer(tb testing.TB, sim *Sim) string {
	srv := httptest.NewServer(sim.Handler())
	tb.Cleanup(srv.Close)
	return srv.URL
}
