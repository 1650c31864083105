package engine

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestAbort(t *testing.T) {
	es := newEngineServer(t, sseEvents("[DONE]"))
	c := newTestClient(t, es.URL, Options{APIKey: "k"})
	// The request's ctx is cancelled by the time the caller aborts.
	reqCtx, cancel := context.WithCancel(context.Background())
	cancel()
	// Ids carry what a client put in X-Request-Id: the engine must read
	// back the same strings json.Marshal's body gave it.
	odd := "<&>\u2028\"\\\n\xff"
	ids := []string{EngineRequestID("a"), EngineRequestID("b"), EngineRequestID(odd)}
	if err := c.Abort(context.WithoutCancel(reqCtx), ids...); err != nil {
		t.Fatal(err)
	}
	if es.requests() != 1 || es.paths[0] != abortPath {
		t.Fatalf("requests %d paths %v", es.requests(), es.paths)
	}
	var got, want []string
	ref, _ := json.Marshal(ids)
	if err := json.Unmarshal(ref, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(es.body(0)["request_ids"], &got); err != nil || len(got) != 3 ||
		got[0] != "generate-tokens-a" || got[1] != "generate-tokens-b" || got[2] != want[2] {
		t.Errorf("request_ids = %s", es.body(0)["request_ids"])
	}
	if h := es.header(0); h.Get("Authorization") != "Bearer k" || h.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", h)
	}
	if err := c.Abort(context.Background()); err != nil || es.requests() != 1 {
		t.Errorf("empty abort: err %v, requests %d", err, es.requests())
	}
}

func TestAbortFallsBackToLegacyPath(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		io.Copy(io.Discard, r.Body)
		if r.URL.Path != legacyAbortPath {
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, Options{})
	if err := c.Abort(context.Background(), "generate-tokens-x"); err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || paths[0] != abortPath || paths[1] != legacyAbortPath {
		t.Errorf("paths %v", paths)
	}
}

func TestAbortErrors(t *testing.T) {
	t.Run("bounded", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // the server notices a closed connection only once the body is read
			<-r.Context().Done()
		}))
		defer srv.Close()
		c := newTestClient(t, srv.URL, Options{})
		c.abortTimeout = 100 * time.Millisecond
		var err error
		within(t, 3*time.Second, "abort of a stalled engine", func() { err = c.Abort(context.Background(), "generate-tokens-x") })
		if err == nil {
			t.Error("abort of a stalled engine succeeded")
		}
	})
	t.Run("missing key", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			jsonError(w, 400, `{"error":{"message":"missing request_ids","type":"BadRequestError","code":400}}`)
		}))
		defer srv.Close()
		c := newTestClient(t, srv.URL, Options{})
		if e := asError(t, c.Abort(context.Background(), "x")); e.Status != 400 || e.Message != "missing request_ids" {
			t.Errorf("error = %+v", e)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		c := newTestClient(t, "http://"+closedAddr(t), Options{})
		if e := asError(t, c.Abort(context.Background(), "x")); e.Status != 503 {
			t.Errorf("error = %+v", e)
		}
	})
}
