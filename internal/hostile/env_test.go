package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/fleet"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/orchestrator"
	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/render"
	"github.com/vrender/vrender/server"
)

// maxModelLen is small so that "prompt over max_model_len" cases stay
// cheap to send.
const maxModelLen = 4096

// servedName is the "model" the servers accept.
const servedName = "qwen"

// env is the system under test: one simulated engine and two vrender
// servers in front of it, with and without --trust-request-chat-template.
type env struct {
	sim     *enginesim.Sim
	urls    map[string]string // by Case.Server
	clients []*engine.Client
	http    *http.Client
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := testenv.ModelDir(t, "qwen3")
	m, err := model.Load(context.Background(), dir, model.Options{MaxModelLen: maxModelLen})
	if err != nil {
		t.Fatalf("load qwen3: %v", err)
	}
	sim, err := enginesim.New(m, enginesim.Config{ServedModelName: servedName, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	es := httptest.NewServer(sim.Handler())
	t.Cleanup(es.Close)
	e := &env{sim: sim, urls: map[string]string{},
		// No keep-alive: every request's server goroutines end with it,
		// so the goroutine count can return to its baseline.
		http: &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}}
	for _, name := range []string{ServerDefault, ServerTrusted} {
		h, client := newServer(t, m, es.URL, name == ServerTrusted)
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		e.urls[name] = srv.URL
		e.clients = append(e.clients, client)
	}
	t.Cleanup(func() {
		for _, c := range e.clients {
			c.CloseIdleConnections()
		}
	})
	return e
}

// newServer builds vrender as `vrender serve --reasoning-parser qwen3
// --tool-call-parser hermes --enable-auto-tool-choice` does.
func newServer(t *testing.T, m *model.Model, engineURL string, trusted bool) (http.Handler, *engine.Client) {
	t.Helper()
	pc := parsers.Config{ReasoningParser: "qwen3", ToolParser: "hermes", EnableAutoToolChoice: true}
	r, err := render.New(m, render.Config{TrustRequestChatTemplate: trusted})
	if err != nil {
		t.Fatal(err)
	}
	d, err := render.LoadSamplingDefaults(m, render.GenerationConfigAuto, nil)
	if err != nil {
		t.Fatal(err)
	}
	gen := render.NewGenerator(r, m.MaxModelLen, render.GeneratorConfig{EnableAutoToolChoice: true,
		ToolCallParser: "hermes", TrustRequestChatTemplate: trusted, Defaults: d,
		MaxPromptBytes: render.DefaultMaxPromptBytes(m.MaxModelLen)})
	der, err := derender.New(m, derender.Config{Parsers: pc, MaxLogprobs: 20, CacheSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	client, err := engine.New(engineURL, engine.Options{Retries: -1, IdleTimeout: 5 * time.Second,
		FirstEventTimeout: 10 * time.Second, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	pool, err := fleet.NewPool(fleet.PoolConfig{Role: fleet.RoleCollocated, Health: fleet.HealthConfig{Interval: -1, EjectAfter: -1}}, client)
	if err != nil {
		t.Fatal(err)
	}
	orch, err := orchestrator.New(orchestrator.Config{Model: m, Generator: gen, Derender: der, Parsers: pc,
		Engines: pool, ModelName: servedName, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	h, err := server.New(server.Config{Model: m, ServedModelNames: []string{servedName}, Generator: gen,
		Derender: der, Orchestrator: orch, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	return h, client
}

// answer is what a request got.
type answer struct {
	status      int
	contentType string
	body        []byte
}

func (e *env) do(ctx context.Context, server, method, path, contentType string, body io.Reader) (*answer, error) {
	req, err := http.NewRequestWithContext(ctx, method, e.urls[server]+path, body)
	if err != nil {
		return nil, err
	}
	if contentType != "-" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := e.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	// Answers to refused requests are small; a huge one is itself a bug.
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	return &answer{status: res.StatusCode, contentType: res.Header.Get("Content-Type"), body: b}, nil
}

// alive reports whether the server still answers GET /health.
func (e *env) alive(ctx context.Context, server string) error {
	a, err := e.do(ctx, server, http.MethodGet, "/health", "-", http.NoBody)
	if err != nil {
		return err
	}
	if a.status != http.StatusOK {
		return fmt.Errorf("GET /health: %d %s", a.status, a.body)
	}
	return nil
}

// streamState posts a valid streaming chat derender call to server and
// returns the stream_state it answered with; its vrender_checkpoint is
// signed by that server.
func (e *env) streamState(ctx context.Context, server string) (map[string]any, error) {
	const body = `{"stream":true,"model":"qwen","prompt_token_ids":[1,2,3],` +
		`"chat_request":{"messages":[{"role":"user","content":"hi"}]},` +
		`"generate_chunk":{"request_id":"r","choices":[{"index":0,"token_ids":[151667,198,9707]}]}}`
	a, err := e.do(ctx, server, http.MethodPost, "/v1/chat/completions/derender", "application/json", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	if a.status != http.StatusOK {
		return nil, fmt.Errorf("stream derender: %d %s", a.status, a.body)
	}
	var res struct {
		StreamState map[string]any `json:"stream_state"`
	}
	if err := json.Unmarshal(a.body, &res); err != nil {
		return nil, err
	}
	if cp, _ := res.StreamState["vrender_checkpoint"].(string); cp == "" {
		return nil, fmt.Errorf("stream derender answered no vrender_checkpoint: %s", a.body)
	}
	return res.StreamState, nil
}

// checkpoints returns the server-backed generators: signed checkpoints
// damaged in various ways, as JSON strings.
//
//	checkpoint:valid      a good checkpoint signed by the default server
//	checkpoint:foreign    a good checkpoint signed by the trusted server
//	checkpoint:tampered   one byte of the signed part changed
//	checkpoint:truncated  the first half only
//	checkpoint:badtail    a tail that is not base64url
//	checkpoint:longtail   a tail of more ids than a checkpoint may carry
func (e *env) checkpoints(ctx context.Context) (map[string]Generator, error) {
	own, err := e.streamState(ctx, ServerDefault)
	if err != nil {
		return nil, err
	}
	foreign, err := e.streamState(ctx, ServerTrusted)
	if err != nil {
		return nil, err
	}
	cp := own["vrender_checkpoint"].(string)
	sealed, _, _ := strings.Cut(cp, ".")
	tampered := []byte(sealed)
	mid := len(tampered) / 2
	if tampered[mid] == 'A' {
		tampered[mid] = 'B'
	} else {
		tampered[mid] = 'A'
	}
	variants := map[string]string{
		"valid":     cp,
		"foreign":   foreign["vrender_checkpoint"].(string),
		"tampered":  string(tampered),
		"truncated": sealed[:len(sealed)/2],
		"badtail":   sealed + ".!!!!",
		"longtail":  sealed + "." + strings.Repeat("AAAB", 33),
	}
	return map[string]Generator{"checkpoint": func(arg string) (io.Reader, error) {
		v, ok := variants[arg]
		if !ok {
			return nil, fmt.Errorf("unknown checkpoint variant %q", arg)
		}
		b, err := json.Marshal(v)
		return bytes.NewReader(b), err
	}}, nil
}
