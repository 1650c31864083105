package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/fleet"
	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/orchestrator"
	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/render"
)

// promptLimitEnv is a server over qwen3 whose prompts are limited to limit
// bytes (0: none), with an in-process engine behind /v1/chat/completions.
type promptLimitEnv struct {
	url string
	sim *enginesim.Sim
	h   *Handler
}

// promptLimitFixture holds what the envs of one test share: the model, a
// renderer, a derender engine, and the simulated engine.
type promptLimitFixture struct {
	r   *render.Renderer
	der *derender.Engine
}

func newPromptLimitFixture(t *testing.T) *promptLimitFixture {
	t.Helper()
	m := testmodel.Load(t, "qwen3")
	r, err := render.New(m, render.Config{})
	if err != nil {
		t.Fatal(err)
	}
	der, err := derender.New(m, derender.Config{MaxLogprobs: 20})
	if err != nil {
		t.Fatal(err)
	}
	return &promptLimitFixture{r: r, der: der}
}

func (f *promptLimitFixture) env(t *testing.T, limit int) *promptLimitEnv {
	t.Helper()
	m := testmodel.Load(t, "qwen3")
	sim, err := enginesim.New(m, enginesim.Config{ServedModelName: "qwen", Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	es := httptest.NewServer(sim.Handler())
	t.Cleanup(es.Close)
	gen := render.NewGenerator(f.r, m.MaxModelLen, render.GeneratorConfig{MaxPromptBytes: limit})
	client, err := engine.New(es.URL, engine.Options{Retries: -1, IdleTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	picker, err := fleet.NewPool(fleet.PoolConfig{Role: fleet.RoleCollocated, Health: fleet.HealthConfig{Interval: -1, EjectAfter: -1}}, client)
	if err != nil {
		t.Fatal(err)
	}
	orch, err := orchestrator.New(orchestrator.Config{Model: m, Generator: gen, Derender: f.der, Parsers: parsers.Config{},
		Engines: picker, ModelName: "qwen", Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Model: m, ServedModelNames: []string{"qwen"}, Generator: gen, Derender: f.der,
		Orchestrator: orch, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &promptLimitEnv{url: srv.URL, sim: sim, h: h}
}

func (env *promptLimitEnv) tokenized() int64 {
	return env.h.s.stages.Histogram(telemetry.StageTokenize).Count()
}

// promptRoutes are the routes that tokenize client text, each with a body
// carrying the prompt p and a function returning the token ids of its
// answer's prompt (nil for the routes that answer with generated text).
type promptRoute struct {
	path string
	body func(p string) string
	ids  func(t *testing.T, body []byte) []int
	// serving is the route serving the same body over the engine, if any.
	serving string
}

func promptRoutes() []promptRoute {
	tokens := func(t *testing.T, b []byte) []int {
		var v struct{ Tokens []int }
		mustUnmarshal(t, b, &v)
		return v.Tokens
	}
	generate := func(t *testing.T, b []byte) []int {
		var v struct {
			TokenIDs []int `json:"token_ids"`
		}
		mustUnmarshal(t, b, &v)
		return v.TokenIDs
	}
	messages := func(p string) string {
		return fmt.Sprintf(`{"model":"qwen","messages":[{"role":"user","content":%s}],"max_tokens":4}`, jsonString(p))
	}
	return []promptRoute{
		{"/tokenize", func(p string) string { return fmt.Sprintf(`{"prompt":%s}`, jsonString(p)) }, tokens, ""},
		{"/tokenize", func(p string) string {
			return fmt.Sprintf(`{"messages":[{"role":"user","content":%s}]}`, jsonString(p))
		}, tokens, ""},
		{"/v1/chat/completions/render", messages, generate, "/v1/chat/completions"},
		{"/v1/completions/render", func(p string) string {
			return fmt.Sprintf(`{"model":"qwen","prompt":%s,"max_tokens":4}`, jsonString(p))
		}, func(t *testing.T, b []byte) []int {
			var v []struct {
				TokenIDs []int `json:"token_ids"`
			}
			mustUnmarshal(t, b, &v)
			if len(v) != 1 {
				t.Fatalf("%d generate requests, want 1", len(v))
			}
			return v[0].TokenIDs
		}, "/v1/completions"},
		{"/v1/messages/render", messages, generate, ""},
		{"/v1/responses/render", func(p string) string {
			return fmt.Sprintf(`{"model":"qwen","input":%s,"max_output_tokens":4}`, jsonString(p))
		}, generate, ""},
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

func postPrompt(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	status, b := postWithID(t, url, body, "")
	return status, []byte(b)
}

// promptTooLarge is the body of the 400 for a prompt of n bytes over limit.
func promptTooLarge(n, limit int) string {
	return fmt.Sprintf(`{"error":{"message":"The prompt is %d bytes long, more than this server's limit of %d bytes `+
		`(--max-prompt-bytes). Please reduce the length of the input prompt.","type":"BadRequestError","param":"input_text","code":400}}`, n, limit)
}

// TestMaxPromptBytes checks every route that tokenizes client text: a
// prompt exactly at the limit is served, one byte more is refused with the
// 400 before anything is tokenized (the tokenize stage never runs, no
// engine request is made). The serving routes render the prompt their
// render route does, so that route tells its length.
func TestMaxPromptBytes(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	text := strings.Repeat("héllo wörld 你好 ", 40)
	fix := newPromptLimitFixture(t)
	open := fix.env(t, 0)
	for _, rt := range promptRoutes() {
		body := rt.body(text)
		t.Run(rt.path+" "+body[:12], func(t *testing.T) {
			status, b := postPrompt(t, open.url+rt.path, body)
			if status != http.StatusOK {
				t.Fatalf("without a limit: %d %s", status, b)
			}
			prompt := m.Tokenizer.Decode(rt.ids(t, b), false)
			n := len(prompt)
			if !strings.Contains(prompt, text) {
				t.Fatalf("the prompt does not hold the text: %q", prompt)
			}
			for _, path := range []string{rt.path, rt.serving} {
				if path == "" {
					continue
				}
				at := fix.env(t, n)
				if status, b := postPrompt(t, at.url+path, body); status != http.StatusOK {
					t.Errorf("%s at the limit (%d bytes): %d %s", path, n, status, b)
				}
				over := fix.env(t, n-1)
				before := over.tokenized()
				status, b = postPrompt(t, over.url+path, body)
				if want := promptTooLarge(n, n-1); status != http.StatusBadRequest || string(b) != want {
					t.Errorf("%s over the limit: %d %s\nwant 400 %s", path, status, b, want)
				}
				if got := over.tokenized(); got != before {
					t.Errorf("%s: the over-limit prompt was tokenized (%d tokenize stages)", path, got-before)
				}
				if got := len(over.sim.Requests()); got != 0 {
					t.Errorf("%s: the engine got %d requests", path, got)
				}
				if path == rt.path {
					if got := over.h.s.metrics.limited.Load(); got != 1 {
						t.Errorf("%s: vrender_limited_requests_total = %d, want 1", path, got)
					}
				}
			}
		})
	}
}

// Where the prompt is also longer than vLLM's own character bound (the
// context times the longest token), vLLM's error wins over the byte limit.
func TestMaxPromptBytesVLLMErrorFirst(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	env := newPromptLimitFixture(t).env(t, 1<<10)
	maxChars := m.MaxModelLen * 128 // Qwen3's longest token is 128 characters
	text := strings.Repeat("a", maxChars+1)
	status, b := postPrompt(t, env.url+"/v1/completions/render", fmt.Sprintf(`{"model":"qwen","prompt":%q}`, text))
	if status != http.StatusBadRequest || !strings.Contains(string(b), "This model's maximum context length is") {
		t.Errorf("%d %.300s", status, b)
	}
}
