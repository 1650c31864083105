package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/fleet"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

const pdScript = `{"match": "weather", "text": "<think>\nThe user asks about the weather.\n</think>\n\nIt is sunny in Paris, 21 °C."}
{"default": true, "text": "<think>\nHm.\n</think>\n\nHello."}
`

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// startScriptedSim serves an engine-sim of m named "qwen" answering with
// pdScript, and returns a client of it.
func startScriptedSim(t *testing.T, m *model.Model, cfg enginesim.Config) (*enginesim.Sim, *engine.Client) {
	t.Helper()
	script, err := enginesim.ParseScript([]byte(pdScript), m.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Script, cfg.ServedModelName, cfg.Logger = script, "qwen", quietLog()
	sim, err := enginesim.New(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	c, err := engine.New(srv.URL, engine.Options{Retries: -1, IdleTimeout: 5 * time.Second, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return sim, c
}

func newTestOrchestrator(t *testing.T, m *model.Model, engines Engines) *Orchestrator {
	t.Helper()
	pc := parsers.Config{ReasoningParser: "qwen3", ToolParser: "hermes", EnableAutoToolChoice: true}
	r, err := render.New(m, render.Config{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := render.LoadSamplingDefaults(m, render.GenerationConfigAuto, nil)
	if err != nil {
		t.Fatal(err)
	}
	gen := render.NewGenerator(r, m.MaxModelLen, render.GeneratorConfig{EnableAutoToolChoice: true, ToolCallParser: "hermes", Defaults: d})
	der, err := derender.New(m, derender.Config{Parsers: pc, MaxLogprobs: 20})
	if err != nil {
		t.Fatal(err)
	}
	o, err := New(Config{Model: m, Generator: gen, Derender: der, Parsers: pc, Engines: engines, ModelName: "qwen", Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func newPD(t *testing.T, prefill, decode *engine.Client) *fleet.PDPool {
	t.Helper()
	h := fleet.HealthConfig{Interval: -1}
	pp, err := fleet.NewPool(fleet.PoolConfig{Role: fleet.RolePrefill, Health: h, Logger: quietLog()}, prefill)
	if err != nil {
		t.Fatal(err)
	}
	dp, err := fleet.NewPool(fleet.PoolConfig{Role: fleet.RoleDecode, Health: h, Logger: quietLog()}, decode)
	if err != nil {
		t.Fatal(err)
	}
	pd, err := fleet.NewPD(pp, dp, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	return pd
}

// frameSink collects a streamed answer; it fails writes after failAfter
// frames (0: never), as a client that went away.
type frameSink struct {
	frames    []string
	failAfter int
}

func (s *frameSink) Start() error { return nil }
func (s *frameSink) Frame(f []byte) error {
	if s.failAfter > 0 && len(s.frames) >= s.failAfter {
		return errors.New("client gone")
	}
	s.frames = append(s.frames, string(f))
	return nil
}

func chatRequest(t *testing.T, stream bool) *protocol.ChatCompletionRequest {
	t.Helper()
	body := `{"model":"qwen","messages":[{"role":"user","content":"What is the weather in Paris?"}],"max_tokens":200`
	if stream {
		body += `,"stream":true,"stream_options":{"include_usage":true}`
	}
	req, err := protocol.DecodeChatCompletionRequest([]byte(body + "}"))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// servedChat is req as /v1/chat/completions runs it.
func servedChat(req *protocol.ChatCompletionRequest, baseID string) ChatRun {
	return ChatRun{API: APIChat, Request: req, ID: "chatcmpl-" + baseID, Stream: req.Stream != nil && *req.Stream}
}

var createdField = regexp.MustCompile(`"created":\d+`)

// answer runs one chat request and returns its normalised answer.
func answer(t *testing.T, o *Orchestrator, stream bool) string {
	t.Helper()
	sink := &frameSink{}
	res, err := o.Chat(context.Background(), servedChat(chatRequest(t, stream), "same-id"), sink)
	if err != nil {
		t.Fatalf("chat: %v", err)
	}
	var out string
	if stream {
		out = strings.Join(sink.frames, "")
	} else {
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		out = string(b)
	}
	return createdField.ReplaceAllString(out, `"created":0`)
}

func TestPDMatchesCollocated(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	_, colloc := startScriptedSim(t, m, enginesim.Config{})
	reg := enginesim.NewKVRegistry()
	producer, pc := startScriptedSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleProducer, KVRegistry: reg})
	consumer, cc := startScriptedSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleConsumer, KVRegistry: reg})
	co, err := fleet.NewPool(fleet.PoolConfig{Role: fleet.RoleCollocated, Health: fleet.HealthConfig{Interval: -1, EjectAfter: -1}}, colloc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[bool]string{}
	for _, stream := range []bool{false, true} {
		want[stream] = answer(t, newTestOrchestrator(t, m, co), stream)
		if !strings.Contains(want[stream], "Paris") {
			t.Fatalf("collocated answer lacks the script's text: %s", want[stream])
		}
	}
	pdo := newTestOrchestrator(t, m, newPD(t, pc, cc))
	for _, stream := range []bool{false, true} {
		if got := answer(t, pdo, stream); got != want[stream] {
			t.Fatalf("stream=%v: P/D answer differs from collocated\n got: %s\nwant: %s", stream, got, want[stream])
		}
	}
	// Completions with two prompts: two prefills, two decodes.
	creq, err := protocol.DecodeCompletionRequest([]byte(`{"model":"qwen","prompt":["the weather is","hello"],"max_tokens":30}`))
	if err != nil {
		t.Fatal(err)
	}
	var completions [2]string
	for i, o := range []*Orchestrator{newTestOrchestrator(t, m, co), pdo} {
		res, err := o.Completion(context.Background(), creq, "c", &frameSink{})
		if err != nil {
			t.Fatalf("completion %d: %v", i, err)
		}
		b, _ := json.Marshal(res.Choices)
		completions[i] = string(b)
	}
	if completions[0] != completions[1] || !strings.Contains(completions[0], "Paris") {
		t.Fatalf("P/D completion %s\ndiffers from collocated %s", completions[1], completions[0])
	}
	// The prefill request is vLLM's proxy's: one token, not streamed, the
	// do_remote_decode params; the decode request carries what the
	// producer returned (the consumer refuses anything else).
	preqs, dreqs := producer.Requests(), consumer.Requests()
	if len(preqs) != 4 || len(dreqs) != 4 {
		t.Fatalf("producer saw %d requests, consumer %d; want 4 each", len(preqs), len(dreqs))
	}
	p := preqs[1]
	if p.SamplingParams.MaxTokens == nil || *p.SamplingParams.MaxTokens != 1 || p.Stream == nil || *p.Stream ||
		!bytes.Contains(p.KVTransferParams, []byte(`"do_remote_decode":true`)) {
		t.Fatalf("prefill request: max_tokens %v stream %v kv %s", p.SamplingParams.MaxTokens, p.Stream, p.KVTransferParams)
	}
	var kv struct {
		DoRemotePrefill bool   `json:"do_remote_prefill"`
		RemoteRequestID string `json:"remote_request_id"`
		RemoteEngineID  string `json:"remote_engine_id"`
	}
	d := dreqs[1]
	if err := json.Unmarshal(d.KVTransferParams, &kv); err != nil || !kv.DoRemotePrefill ||
		!strings.HasPrefix(kv.RemoteRequestID, "generate-tokens-chatcmpl-same-id-") || kv.RemoteEngineID == "" {
		t.Fatalf("decode request kv_transfer_params %s (%v)", d.KVTransferParams, err)
	}
	if d.SamplingParams.MaxTokens == nil || *d.SamplingParams.MaxTokens != 200 || !slices.Equal(d.TokenIDs, p.TokenIDs) {
		t.Fatalf("decode request is not the original: max_tokens %v", d.SamplingParams.MaxTokens)
	}
}

func TestPDFailures(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	reg := enginesim.NewKVRegistry()
	_, goodP := startScriptedSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleProducer, KVRegistry: reg})
	_, goodD := startScriptedSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleConsumer, KVRegistry: reg})
	_, badP := startScriptedSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleProducer, Fault: enginesim.Fault{Kind: enginesim.FaultError}})
	_, badD := startScriptedSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleConsumer, Fault: enginesim.Fault{Kind: enginesim.FaultError}})
	_, plain := startScriptedSim(t, m, enginesim.Config{}) // a collocated engine: its params are not a producer's
	_, strictD := startScriptedSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleConsumer, KVRegistry: enginesim.NewKVRegistry()})
	tests := []struct {
		name            string
		prefill, decode *engine.Client
		status          int
		want            string
	}{
		{"prefill 500", badP, goodD, http.StatusBadGateway, "prefill engine: EngineCore encountered an issue"},
		{"decode 500", goodP, badD, http.StatusBadGateway, "decode engine: EngineCore encountered an issue"},
		{"decode refuses unissued params", plain, strictD, http.StatusBadRequest, "decode engine: no prefill engine issued KV blocks"},
		{"prefill engine is a consumer", goodD, goodD, http.StatusBadRequest, "prefill engine: this engine is a kv_consumer"},
	}
	for _, tc := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				o := newTestOrchestrator(t, m, newPD(t, tc.prefill, tc.decode))
				sink := &frameSink{}
				_, err := o.Chat(context.Background(), servedChat(chatRequest(t, stream), "f"), sink)
				e := AsError(err)
				if err == nil || e.Status != tc.status || !strings.Contains(e.Message, tc.want) || len(sink.frames) != 0 {
					t.Fatalf("stream=%v: got %v (frames %d), want %d %q", stream, err, len(sink.frames), tc.status, tc.want)
				}
			})
		}
	}
}

func TestPDAbortGoesToDecodeEngine(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	reg := enginesim.NewKVRegistry()
	producer, pc := startScriptedSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleProducer, KVRegistry: reg})
	consumer, cc := startScriptedSim(t, m, enginesim.Config{KVRole: enginesim.KVRoleConsumer, KVRegistry: reg, TokenLatency: 5 * time.Millisecond})
	o := newTestOrchestrator(t, m, newPD(t, pc, cc))
	sink := &frameSink{failAfter: 3}
	if _, err := o.Chat(context.Background(), servedChat(chatRequest(t, true), "gone"), sink); err != nil {
		t.Fatalf("chat with a client that left: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := consumer.WaitAbort(ctx, "generate-tokens-chatcmpl-gone"); err != nil {
		t.Fatal(err)
	}
	if a := producer.Aborts(); len(a) != 0 {
		t.Fatalf("the finished prefill was aborted too: %v", a)
	}
}
