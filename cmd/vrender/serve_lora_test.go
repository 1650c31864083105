package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/kvevents"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
)

// loraSim is an engine-sim serving the sql-lora adapter, with a prefix
// cache publishing KV events on a loopback port when events is set.
type loraSim struct {
	sim    *enginesim.Sim
	url    string
	events string // the ZMQ PUB endpoint; "" without events
}

func startLoRASim(t *testing.T, m *model.Model, role string, reg *enginesim.KVRegistry, events bool) *loraSim {
	t.Helper()
	cfg := enginesim.Config{ServedModelName: "qwen", KVRole: role, KVRegistry: reg, Logger: quietTestLog(),
		LoRAModules:       []protocol.LoRAModulePath{{Name: "sql-lora", Path: "/adapters/sql"}},
		PrefixCacheBlocks: 1024}
	s := &loraSim{}
	if events {
		ep, err := freeLoopbackEndpoint()
		if err != nil {
			t.Fatal(err)
		}
		pub, err := kvevents.NewPublisher(kvevents.PublisherConfig{Endpoint: ep, Logger: quietTestLog()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = pub.Close() })
		cfg.KVEvents, s.events = pub, ep
	}
	sim, err := enginesim.New(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	s.sim, s.url = sim, srv.URL
	return s
}

// models is the "model" of every generate request the sim received.
func (s *loraSim) models() []string {
	var out []string
	for _, r := range s.sim.Requests() {
		m := "<none>"
		if r.Model != nil {
			m = *r.Model
		}
		out = append(out, m)
	}
	return out
}

// prefixHits is the sim's vllm:prefix_cache_hits (tokens).
func (s *loraSim) prefixHits(t *testing.T) int {
	t.Helper()
	resp, err := http.Get(s.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(out), "\n") {
		if strings.HasPrefix(line, enginesim.MetricPrefixCacheHits) {
			n, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return int(n)
		}
	}
	t.Fatalf("no %s in the sim's /metrics:\n%s", enginesim.MetricPrefixCacheHits, out)
	return 0
}

// chatModel posts a chat request for model and returns the answer's
// model.
func chatModel(t *testing.T, addr, model, content string) string {
	t.Helper()
	body := `{"model":"` + model + `","max_tokens":4,"messages":[{"role":"user","content":"` + content + `"}]}`
	resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("chat as %s: %d %s", model, resp.StatusCode, out)
	}
	var r struct {
		Model string `json:"model"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return r.Model
}

// metricValue reads one unlabelled counter or gauge from /metrics.
func metricValue(t *testing.T, addr, name string) int {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return int(n)
		}
	}
	t.Fatalf("no %s in /metrics", name)
	return 0
}

// TestServeLoRAEndToEnd: vrender serve with --lora-modules in front of two
// engine-sims serving the adapter, routing by prefix from their KV events.
// A request naming the adapter is answered with the adapter as its model,
// reaches the engine with model set to the adapter's name (the engine
// resolves the adapter by it) and is keyed under the adapter: the base
// model's blocks of the same prompt never match it, while the adapter's
// own blocks, learnt from the engine's events carrying lora_name, do.
// Predictions live 1ms, so every match comes from an event. A base
// request still reaches the engine exactly as before (model as the client
// sent it), and an unknown model is vLLM's 404.
func TestServeLoRAEndToEnd(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	a := startLoRASim(t, m, enginesim.KVRoleBoth, nil, true)
	b := startLoRASim(t, m, enginesim.KVRoleBoth, nil, true)
	addr, logs, stop := startServe(t, m.Dir, "--host", "127.0.0.1", "--port", "0", "--served-model-name", "qwen",
		"--enable-lora", "--lora-modules", "sql-lora=/adapters/sql",
		"--engine", a.url, "--engine", b.url, "--routing", "prefix", "--prefix-predict-ttl", "1ms",
		"--kv-events-endpoint", a.url+"="+a.events, "--kv-events-endpoint", b.url+"="+b.events)
	defer stop()

	// /v1/models lists the adapter after the base model.
	resp, err := http.Get("http://" + addr + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var list protocol.ModelList
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if err != nil || len(list.Data) != 2 || list.Data[1].ID != "sql-lora" || *list.Data[1].Root != "/adapters/sql" ||
		*list.Data[1].Parent != "qwen" || list.Data[1].MaxModelLen != nil {
		t.Fatalf("/v1/models %+v (%v), want qwen then sql-lora", list.Data, err)
	}

	prompt := strings.Repeat("Tell me about Lyon. ", 40)
	waitEvents := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); metricValue(t, addr, "vrender_routing_kv_event_batches_total") < n; {
			if time.Now().After(deadline) {
				t.Fatalf("fewer than %d KV event batches applied; logs:\n%s", n, logs)
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(5 * time.Millisecond) // past the 1ms prediction life
	}
	matched := func() int { return metricValue(t, addr, "vrender_routing_matched_blocks_total") }
	hits := func() int { return a.prefixHits(t) + b.prefixHits(t) }

	// The base model stores the prompt's blocks on one engine.
	if model := chatModel(t, addr, "qwen", prompt); model != "qwen" {
		t.Fatalf("base answer's model %q", model)
	}
	waitEvents(1)
	// The same prompt under the adapter matches none of them, and the
	// engine that gets it computes it afresh.
	if model := chatModel(t, addr, "sql-lora", prompt); model != "sql-lora" {
		t.Fatalf("adapter answer's model %q, want sql-lora", model)
	}
	if m, h := matched(), hits(); m != 0 || h != 0 {
		t.Fatalf("the adapter's request matched %d blocks in the router and hit %d tokens in an engine, want none", m, h)
	}
	waitEvents(2)
	// Now its own blocks, known from the engine's lora_name events, match,
	// and the engine they came from gets it and hits its cache.
	if model := chatModel(t, addr, "sql-lora", prompt); model != "sql-lora" {
		t.Fatalf("adapter answer's model %q, want sql-lora", model)
	}
	if m, h := matched(), hits(); m == 0 || h == 0 {
		t.Fatalf("the adapter's repeated request matched %d blocks and hit %d tokens, want its whole prompt", m, h)
	}
	if unindexed := metricValue(t, addr, "vrender_routing_kv_event_blocks_unindexed_total"); unindexed != 0 {
		t.Errorf("%d event blocks unindexed", unindexed)
	}

	got := strings.Join(append(a.models(), b.models()...), " ")
	if strings.Count(got, "sql-lora") != 2 || strings.Count(got, "qwen") != 1 {
		t.Errorf("engines received models %q, want qwen once and sql-lora twice", got)
	}
	// An unknown model is still vLLM's 404, before any engine.
	resp, err = http.Post("http://"+addr+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"nope-lora","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `{"error":{"message":"The model ` + "`nope-lora`" + ` does not exist.","type":"NotFoundError","param":"model","code":404}}`; resp.StatusCode != 404 || string(out) != want {
		t.Errorf("unknown model: %d %s, want 404 %s", resp.StatusCode, out, want)
	}
}

// TestServeLoRAPrefillDecode: in a prefill/decode pool both legs carry the
// adapter's name.
func TestServeLoRAPrefillDecode(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	reg := enginesim.NewKVRegistry()
	p := startLoRASim(t, m, enginesim.KVRoleProducer, reg, false)
	d := startLoRASim(t, m, enginesim.KVRoleConsumer, reg, false)
	addr, _, stop := startServe(t, m.Dir, "--host", "127.0.0.1", "--port", "0", "--served-model-name", "qwen",
		"--enable-lora", "--lora-modules", `{"name": "sql-lora", "path": "/adapters/sql", "base_model_name": "qwen"}`,
		"--prefill-engine", p.url, "--decode-engine", d.url)
	defer stop()
	if model := chatModel(t, addr, "sql-lora", "Say hi"); model != "sql-lora" {
		t.Fatalf("answer's model %q, want sql-lora", model)
	}
	if got, want := strings.Join(p.models(), " ")+" | "+strings.Join(d.models(), " "), "sql-lora | sql-lora"; got != want {
		t.Errorf("prefill | decode engines received models %q, want %q", got, want)
	}
}

// TestServeSimLoRA: the in-process --engine sim serves serve's adapters
// and every served name.
func TestServeSimLoRA(t *testing.T) {
	qwen := testenv.ModelDir(t, "qwen3")
	addr, _, stop := startServe(t, qwen, "--host", "127.0.0.1", "--port", "0", "--served-model-name", "qwen", "qwen-alias",
		"--enable-lora", "--lora-modules", "sql-lora=/adapters/sql", "chat-lora=/adapters/chat", "--engine", "sim")
	defer stop()
	// The in-process engine knows every served name, as a vLLM engine
	// started with the same --served-model-name does; the answer reports
	// the first.
	for name, want := range map[string]string{"qwen": "qwen", "qwen-alias": "qwen", "sql-lora": "sql-lora", "chat-lora": "chat-lora"} {
		if model := chatModel(t, addr, name, "Say hi"); model != want {
			t.Errorf("%s: answer's model %q, want %q", name, model, want)
		}
	}
	// Every served API reports the adapter as model, streamed or not
	// (vLLM's model_name(lora_request); Messages and Responses take the
	// chat answer's).
	for _, tc := range []struct{ path, body, want string }{
		{"/v1/chat/completions", `{"model":"sql-lora","stream":true,"max_tokens":3,"messages":[{"role":"user","content":"hi"}]}`, `"model":"sql-lora"`},
		{"/v1/completions", `{"model":"sql-lora","max_tokens":3,"prompt":"hi"}`, `"model":"sql-lora"`},
		{"/v1/completions", `{"model":"sql-lora","stream":true,"max_tokens":3,"prompt":"hi"}`, `"model":"sql-lora"`},
		{"/v1/messages", `{"model":"sql-lora","max_tokens":3,"messages":[{"role":"user","content":"hi"}]}`, `"model":"sql-lora"`},
		{"/v1/messages", `{"model":"sql-lora","stream":true,"max_tokens":3,"messages":[{"role":"user","content":"hi"}]}`, `"model":"sql-lora"`},
		{"/v1/responses", `{"model":"sql-lora","max_output_tokens":3,"input":"hi"}`, `"model":"sql-lora"`},
	} {
		resp, err := http.Post("http://"+addr+tc.path, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), tc.want) || strings.Contains(string(out), `"model":"qwen"`) {
			t.Errorf("%s %s: %d %s, want %s", tc.path, tc.body, resp.StatusCode, out, tc.want)
		}
	}
}
