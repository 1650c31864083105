package enginesim

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/model"
)

func loadQwen3(t *testing.T) *model.Model {
	t.Helper()
	dir := testenv.ModelDir(t, "qwen3")
	m, err := loadModelOnce(dir)
	if err != nil {
		t.Fatalf("load qwen3: %v", err)
	}
	return m
}

var (
	modelMu    sync.Mutex
	modelCache = map[string]*model.Model{}
)

func loadModelOnce(dir string) (*model.Model, error) {
	modelMu.Lock()
	defer modelMu.Unlock()
	if m, ok := modelCache[dir]; ok {
		return m, nil
	}
	m, err := model.Load(context.Background(), dir, model.Options{})
	if err != nil {
		return nil, err
	}
	modelCache[dir] = m
	return m, nil
}

// newServer starts a sim on an httptest server.
func newServer(t *testing.T, cfg Config) (*Sim, *httptest.Server) {
	t.Helper()
	m := loadQwen3(t)
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

func testModelDir(tb testing.TB) string { return testenv.ModelDir(tb, "qwen3") }

func newBenchServer(tb testing.TB, sim *Sim) string {
	srv := httptest.NewServer(sim.Handler())
	tb.Cleanup(srv.Close)
	return srv.URL
}
