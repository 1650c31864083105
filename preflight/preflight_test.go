package preflight

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/render"
)

const servedName = "Qwen/Qwen3-8B"

// fixture is the model, generator and derender engine shared by the tests.
type fixture struct {
	m   *model.Model
	gen *render.Generator
	der *derender.Engine
}

var (
	fixtureMu sync.Mutex
	shared    *fixture
)

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := testenv.ModelDir(t, "qwen3")
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if shared != nil {
		return shared
	}
	m, err := model.Load(context.Background(), dir, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := render.New(m, render.Config{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := render.LoadSamplingDefaults(m, render.GenerationConfigAuto, nil)
	if err != nil {
		t.Fatal(err)
	}
	der, err := derender.New(m, derender.Config{})
	if err != nil {
		t.Fatal(err)
	}
	shared = &fixture{m: m, gen: render.NewGenerator(r, m.MaxModelLen, render.GeneratorConfig{Defaults: d}), der: der}
	return shared
}

// sim starts an engine-sim; wrap, when set, filters its handler.
func (f *fixture) sim(t *testing.T, wrap func(http.Handler) http.Handler) (*enginesim.Sim, string) {
	t.Helper()
	s, err := enginesim.New(f.m, enginesim.Config{ServedModelName: servedName})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return s, srv.URL
}

func noMetrics(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func TestRun(t *testing.T) {
	f := newFixture(t)
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()

	tests := []struct {
		name string
		// setup returns the config's engines: one URL (collocated) or two (prefill, decode).
		setup func(t *testing.T) []string
		ok    bool
		// checks are the names (prefixes) of the checks run, in order; the
		// last is the failing one when !ok.
		checks []string
		// detail and fix must appear in the last check.
		detail, fix string
	}{
		{
			name: "collocated passes",
			setup: func(t *testing.T) []string {
				_, u := f.sim(t, nil)
				return []string{u}
			},
			ok:     true,
			checks: []string{"engine version", "short request", "long prompts", "KV transfer"},
			detail: "collocated engine: no KV transfer",
		},
		{
			name: "disaggregated passes",
			setup: func(t *testing.T) []string {
				_, p := f.sim(t, nil)
				_, d := f.sim(t, nil)
				return []string{p, d}
			},
			ok:     true,
			checks: []string{"prefill engine version", "decode engine version", "short request", "long prompts", "KV transfer"},
			detail: "2 transfers, average",
		},
		{
			name: "old prefill engine",
			setup: func(t *testing.T) []string {
				s, p := f.sim(t, nil)
				s.SetVersion("0.30.2")
				_, d := f.sim(t, nil)
				return []string{p, d}
			},
			checks: []string{"prefill engine version"},
			detail: "vLLM 0.30.2 is older than 0.31.0",
			fix:    "upgrade the prefill engine to vLLM >= 0.31.0",
		},
		{
			name: "pre-release of the minimum",
			setup: func(t *testing.T) []string {
				s, u := f.sim(t, nil)
				s.SetVersion("0.31.0rc1.dev12+g1a2b3c4")
				return []string{u}
			},
			checks: []string{"engine version"},
			detail: "is a pre-release of 0.31.0",
			fix:    "upgrade the engine",
		},
		{
			name:   "engine down",
			setup:  func(t *testing.T) []string { return []string{downURL} },
			checks: []string{"engine version"},
			detail: "engine unreachable",
			fix:    "start the engine or correct its URL",
		},
		{
			name: "decode engine down",
			setup: func(t *testing.T) []string {
				_, p := f.sim(t, nil)
				return []string{p, downURL}
			},
			checks: []string{"prefill engine version", "decode engine version"},
			detail: "engine unreachable",
			fix:    "start the decode engine",
		},
		{
			name: "expired leases",
			setup: func(t *testing.T) []string {
				_, p := f.sim(t, nil)
				s, d := f.sim(t, nil)
				// The short request is transfer 1, the long prompts 2 and 3.
				s.SetKVFaults(enginesim.KVFaults{ExpireEvery: 2})
				return []string{p, d}
			},
			checks: []string{"prefill engine version", "decode engine version", "short request", "long prompts", "KV transfer"},
			detail: "expired leases +1, failed transfers +0",
			fix:    "VLLM_NIXL_ABORT_REQUEST_TIMEOUT",
		},
		{
			name: "failed transfers",
			setup: func(t *testing.T) []string {
				_, p := f.sim(t, nil)
				s, d := f.sim(t, nil)
				s.SetKVFaults(enginesim.KVFaults{FailEvery: 1})
				return []string{p, d}
			},
			checks: []string{"prefill engine version", "decode engine version", "short request", "long prompts", "KV transfer"},
			detail: "0 transfers, average 0.000 ms, expired leases +0, failed transfers +2",
			fix:    "NIXL transfers failed",
		},
		{
			name: "decode engine without NIXL metrics",
			setup: func(t *testing.T) []string {
				_, p := f.sim(t, nil)
				_, d := f.sim(t, noMetrics)
				return []string{p, d}
			},
			checks: []string{"prefill engine version", "decode engine version", "short request", "KV transfer"},
			detail: "cannot read /metrics",
			fix:    "GET /metrics",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			urls := tt.setup(t)
			cfg := Config{ModelName: servedName, Generator: f.gen, Derender: f.der, LongPrompts: 2, LongPromptTokens: 1500}
			if len(urls) == 1 {
				cfg.Engine = urls[0]
			} else {
				cfg.PrefillEngine, cfg.DecodeEngine = urls[0], urls[1]
			}
			rep, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			t.Logf("report:\n%s", text.String())
			if rep.OK != tt.ok {
				t.Fatalf("OK = %v, want %v", rep.OK, tt.ok)
			}
			if len(rep.Checks) != len(tt.checks) {
				t.Fatalf("ran %d checks, want %d (%v)", len(rep.Checks), len(tt.checks), tt.checks)
			}
			for i, want := range tt.checks {
				if !strings.HasPrefix(rep.Checks[i].Name, want) {
					t.Errorf("check %d is %q, want %q…", i, rep.Checks[i].Name, want)
				}
			}
			last := rep.Checks[len(rep.Checks)-1]
			if !tt.ok {
				if rep.Failed() == nil || rep.Failed().Name != last.Name {
					t.Errorf("the failing check is not the last one run")
				}
				if !strings.Contains(text.String(), "✗ "+last.Name) {
					t.Errorf("no ✗ line for %q", last.Name)
				}
			}
			if !strings.Contains(last.Detail, tt.detail) {
				t.Errorf("detail %q does not contain %q", last.Detail, tt.detail)
			}
			if !strings.Contains(last.Fix, tt.fix) {
				t.Errorf("fix %q does not contain %q", last.Fix, tt.fix)
			}
		})
	}
}

func TestKVFiguresOnPass(t *testing.T) {
	f := newFixture(t)
	_, p := f.sim(t, nil)
	_, d := f.sim(t, nil)
	rep, err := Run(context.Background(), Config{PrefillEngine: p, DecodeEngine: d, ModelName: servedName,
		Generator: f.gen, Derender: f.der, LongPrompts: 3, LongPromptTokens: 1000})
	if err != nil || !rep.OK {
		t.Fatalf("Run: %v, %+v", err, rep)
	}
	kv := rep.Checks[len(rep.Checks)-1].Figures
	long := rep.Checks[len(rep.Checks)-2].Figures
	// 1000-token prompts at the sim's 147456 bytes per token and 20 GB/s,
	// plus 0.5 ms setup: about 7.9 ms each.
	if kv["transfers"] != 3 || kv["expired_reqs"] != 0 || kv["failed_transfers"] != 0 ||
		kv["avg_transfer_seconds"] < 0.007 || kv["avg_transfer_seconds"] > 0.009 {
		t.Errorf("KV figures %v", kv)
	}
	if pt := long["prompt_tokens"]; pt < 950 || pt > 1050 {
		t.Errorf("long prompt of %v tokens, want about 1000", pt)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"avg_transfer_seconds"`) {
		t.Errorf("JSON report: %v\n%s", err, js.String())
	}
}

func TestConfigValidate(t *testing.T) {
	f := newFixture(t)
	base := Config{Generator: f.gen, Derender: f.der}
	for _, c := range []Config{
		{},
		{Engine: "http://a", PrefillEngine: "http://b", DecodeEngine: "http://c"},
		{PrefillEngine: "http://b"},
		{Engine: "http://a", LongPrompts: -1},
		{Engine: "http://a", LongPrompts: 1, LongPromptTokens: 3},
	} {
		c.Generator, c.Derender = base.Generator, base.Derender
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("Run(%+v) accepted the config", c)
		}
	}
}
