package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/fleet"
	"github.com/vrender/vrender/internal/membudget"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/media"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/orchestrator"
	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/render"
)

// The OpenAI endpoints end to end: vrender (server + orchestrator) in
// front of the simulated engine, both on loopback, with the qwen3 model
// and the qwen3 + hermes parsers.

// testScript is what the simulated engine answers, by prompt substring.
const testScript = `{"match": "two cities", "text": "<think>\nTwo calls.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n</tool_call>"}
{"match": "weather", "text": "<think>\nThe user wants weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n</tool_call>"}
{"match": "stopme", "text": "<think>\nok\n</think>\n\nAlpha beta gamma; the END marker and more text after it."}
{"match": "dropme", "text": "<think>\nThis will be cut off somewhere in the middle of a long thought.\n</think>\n\nNever.", "fault": {"kind": "drop", "after_tokens": 3}}
{"match": "slowly", "text": "<think>\nSlow thinking goes on and on and on and on and on and on.\n</think>\n\nDone.", "token_latency": "30ms"}
{"default": true, "text": "<think>\nLet me think about 2+2.\n</think>\n\n2+2 = 4. Ünïcödé ✓ 😀"}
`

type openAIEnv struct {
	url string
	sim *enginesim.Sim
	h   *Handler
}

// envOptions adjust an openAIEnv: the server's config, and a wrapper
// around the simulated engine's handler (to observe what it receives).
type envOptions struct {
	edit       func(*Config)
	wrapEngine func(http.Handler) http.Handler
	// noServer leaves the handler unserved (the caller serves env.h).
	noServer bool
	// logprobsShape is the simulated engine's Config.LogprobsShape.
	logprobsShape string
	// model is the served model; nil: qwen3.
	model *model.Model
	// plain runs the simulated engine without the test script: its
	// built-in answers (which say what images arrived).
	plain bool
	// imageBudget, when set, is the renderer's image memory budget.
	imageBudget *membudget.Budget
	// embeds serves with --enable-mm-embeds.
	embeds bool
}

func newOpenAIEnv(t *testing.T, engineURL string) *openAIEnv {
	t.Helper()
	return newOpenAIEnvWith(t, engineURL, envOptions{})
}

func newOpenAIEnvWith(t *testing.T, engineURL string, opts envOptions) *openAIEnv {
	t.Helper()
	m := opts.model
	if m == nil {
		m = testmodel.Load(t, "qwen3")
	}
	path := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(path, []byte(testScript), 0o644); err != nil {
		t.Fatal(err)
	}
	env := &openAIEnv{}
	if engineURL == "" {
		script, err := enginesim.LoadScript(path, m.Tokenizer)
		if err != nil {
			t.Fatal(err)
		}
		if opts.plain {
			script = nil
		}
		sim, err := enginesim.New(m, enginesim.Config{ServedModelName: "qwen", Script: script, Logger: discardLogger(),
			LogprobsShape: opts.logprobsShape})
		if err != nil {
			t.Fatal(err)
		}
		var eh http.Handler = sim.Handler()
		if opts.wrapEngine != nil {
			eh = opts.wrapEngine(eh)
		}
		es := httptest.NewServer(eh)
		t.Cleanup(es.Close)
		env.sim, engineURL = sim, es.URL
	}
	pc := parsers.Config{ReasoningParser: "qwen3", ToolParser: "hermes", EnableAutoToolChoice: true}
	images, err := render.DefaultImageConfig(m, media.Config{})
	if err != nil {
		t.Fatal(err)
	}
	images.Budget = opts.imageBudget
	images.EnableMMEmbeds = opts.embeds
	r, err := render.New(m, render.Config{Images: images})
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
	client, err := engine.New(engineURL, engine.Options{Retries: -1, IdleTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	picker, err := fleet.NewPool(fleet.PoolConfig{Role: fleet.RoleCollocated, Health: fleet.HealthConfig{Interval: -1, EjectAfter: -1}}, client)
	if err != nil {
		t.Fatal(err)
	}
	orch, err := orchestrator.New(orchestrator.Config{Model: m, Generator: gen, Derender: der, Parsers: pc,
		Engines: picker, ModelName: "qwen", Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Model: m, ServedModelNames: []string{"qwen"}, Generator: gen, Derender: der,
		Orchestrator: orch, Logger: discardLogger()}
	if opts.edit != nil {
		opts.edit(&cfg)
		// The orchestrator logs too: give it the server's logger.
		if cfg.Logger != nil {
			orch, err = orchestrator.New(orchestrator.Config{Model: m, Generator: gen, Derender: der, Parsers: pc,
				Engines: picker, ModelName: "qwen", Logger: cfg.Logger})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Orchestrator = orch
		}
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	env.h = h
	if opts.noServer {
		return env
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	env.url = srv.URL
	return env
}

func (env *openAIEnv) post(t *testing.T, path, body string) (int, []byte) {
	t.Helper()
	res, err := http.Post(env.url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

// events posts a streaming request and returns the data payloads.
func (env *openAIEnv) events(t *testing.T, path, body string) []string {
	t.Helper()
	status, b := env.post(t, path, body)
	if status != 200 {
		t.Fatalf("status %d: %s", status, b)
	}
	var out []string
	for _, block := range strings.Split(string(b), "\n\n") {
		if block == "" {
			continue
		}
		data, ok := strings.CutPrefix(block, "data: ")
		if !ok {
			t.Fatalf("not an SSE data frame: %q", block)
		}
		out = append(out, data)
	}
	if len(out) == 0 || out[len(out)-1] != "[DONE]" {
		t.Fatalf("stream does not end with [DONE]: %q", out)
	}
	return out[:len(out)-1]
}

type chatAnswer struct {
	content, reasoning string
	contentNull        bool
	calls              []call
	finish, stopReason string
	logprobs           int
}

type call struct{ id, name, args string }

// accumulate joins a chat stream's chunks per choice as a client does.
func accumulate(t *testing.T, events []string) (map[int]*chatAnswer, []map[string]any) {
	t.Helper()
	out := map[int]*chatAnswer{}
	var chunks []map[string]any
	for _, e := range events {
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				Index int `json:"index"`
				Delta struct {
					Content   *string `json:"content"`
					Reasoning *string `json:"reasoning"`
					ToolCalls []struct {
						Index    int     `json:"index"`
						ID       *string `json:"id"`
						Function struct {
							Name      *string `json:"name"`
							Arguments *string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				Logprobs *struct {
					Content []any `json:"content"`
				} `json:"logprobs"`
				FinishReason *string         `json:"finish_reason"`
				StopReason   json.RawMessage `json:"stop_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatalf("chunk %s: %v", e, err)
		}
		var generic map[string]any
		_ = json.Unmarshal([]byte(e), &generic)
		chunks = append(chunks, generic)
		for _, ch := range c.Choices {
			a := out[ch.Index]
			if a == nil {
				a = &chatAnswer{}
				out[ch.Index] = a
			}
			if ch.Delta.Content != nil {
				a.content += *ch.Delta.Content
			}
			if ch.Delta.Reasoning != nil {
				a.reasoning += *ch.Delta.Reasoning
			}
			for _, tc := range ch.Delta.ToolCalls {
				for len(a.calls) <= tc.Index {
					a.calls = append(a.calls, call{})
				}
				if tc.ID != nil {
					a.calls[tc.Index].id = *tc.ID
				}
				if tc.Function.Name != nil {
					a.calls[tc.Index].name += *tc.Function.Name
				}
				if tc.Function.Arguments != nil {
					a.calls[tc.Index].args += *tc.Function.Arguments
				}
			}
			if ch.Logprobs != nil {
				a.logprobs += len(ch.Logprobs.Content)
			}
			if ch.FinishReason != nil {
				a.finish = *ch.FinishReason
				a.stopReason = string(ch.StopReason)
			}
		}
	}
	return out, chunks
}

type fullChat struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			Reasoning *string `json:"reasoning"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		Logprobs *struct {
			Content []any `json:"content"`
		} `json:"logprobs"`
		FinishReason string          `json:"finish_reason"`
		StopReason   json.RawMessage `json:"stop_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

func (f *fullChat) answers() map[int]*chatAnswer {
	out := map[int]*chatAnswer{}
	for _, c := range f.Choices {
		a := &chatAnswer{finish: c.FinishReason, stopReason: string(c.StopReason), contentNull: c.Message.Content == nil}
		if c.Message.Content != nil {
			a.content = *c.Message.Content
		}
		if c.Message.Reasoning != nil {
			a.reasoning = *c.Message.Reasoning
		}
		for _, tc := range c.Message.ToolCalls {
			a.calls = append(a.calls, call{id: tc.ID, name: tc.Function.Name, args: tc.Function.Arguments})
		}
		if c.Logprobs != nil {
			a.logprobs = len(c.Logprobs.Content)
		}
		out[c.Index] = a
	}
	return out
}

const weatherTool = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string"}},"required":["city"]}}}]`

func TestOpenAIChatStreamMatchesNonStream(t *testing.T) {
	env := newOpenAIEnv(t, "")
	cases := []struct {
		name, body string
		check      func(t *testing.T, a map[int]*chatAnswer)
	}{
		{name: "reasoning split", body: `"messages":[{"role":"user","content":"What is 2+2?"}]`,
			check: func(t *testing.T, a map[int]*chatAnswer) {
				if a[0].reasoning != "\nLet me think about 2+2.\n" || a[0].content != "\n\n2+2 = 4. Ünïcödé ✓ 😀" || a[0].finish != "stop" {
					t.Errorf("got %+v", a[0])
				}
			}},
		{name: "single tool call", body: `"messages":[{"role":"user","content":"weather in Paris?"}],` + weatherTool,
			check: func(t *testing.T, a map[int]*chatAnswer) {
				if len(a[0].calls) != 1 || a[0].calls[0].name != "get_weather" ||
					a[0].calls[0].args != `{"city": "Paris", "unit": "celsius"}` || a[0].finish != "tool_calls" {
					t.Errorf("got %+v", a[0])
				}
			}},
		{name: "parallel tool calls", body: `"messages":[{"role":"user","content":"weather in two cities"}],` + weatherTool,
			check: func(t *testing.T, a map[int]*chatAnswer) {
				if len(a[0].calls) != 2 || a[0].calls[1].args != `{"city": "Rome"}` || a[0].finish != "tool_calls" {
					t.Errorf("got %+v", a[0])
				}
			}},
		{name: "tool_choice none", body: `"messages":[{"role":"user","content":"weather in Paris?"}],"tool_choice":"none",` + weatherTool,
			check: func(t *testing.T, a map[int]*chatAnswer) {
				if len(a[0].calls) != 0 || !strings.Contains(a[0].content, "<tool_call>") || a[0].finish != "stop" {
					t.Errorf("got %+v", a[0])
				}
			}},
		{name: "n=2", body: `"messages":[{"role":"user","content":"What is 2+2?"}],"n":2,"seed":7`,
			check: func(t *testing.T, a map[int]*chatAnswer) {
				if len(a) != 2 || a[1].content == "" || a[1].finish != "stop" {
					t.Errorf("got %d choices: %+v", len(a), a[1])
				}
			}},
		{name: "stop string split across tokens", body: `"messages":[{"role":"user","content":"stopme"}],"stop":["END mark","zzz"]`,
			check: func(t *testing.T, a map[int]*chatAnswer) {
				if a[0].content != "\n\nAlpha beta gamma; the " || a[0].finish != "stop" || a[0].stopReason != `"END mark"` {
					t.Errorf("got %+v", a[0])
				}
			}},
		{name: "stop string kept", body: `"messages":[{"role":"user","content":"stopme"}],"stop":["END mark"],"include_stop_str_in_output":true`,
			check: func(t *testing.T, a map[int]*chatAnswer) {
				if a[0].content != "\n\nAlpha beta gamma; the END mark" || a[0].stopReason != `"END mark"` {
					t.Errorf("got %+v", a[0])
				}
			}},
		{name: "logprobs", body: `"messages":[{"role":"user","content":"What is 2+2?"}],"logprobs":true,"top_logprobs":2`,
			check: func(t *testing.T, a map[int]*chatAnswer) {
				if a[0].logprobs == 0 {
					t.Errorf("no logprobs: %+v", a[0])
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, b := env.post(t, "/v1/chat/completions", `{"model":"qwen",`+tc.body+`}`)
			if status != 200 {
				t.Fatalf("non-stream status %d: %s", status, b)
			}
			var full fullChat
			if err := json.Unmarshal(b, &full); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(full.ID, "chatcmpl-") || full.Object != "chat.completion" || full.Model != "qwen" {
				t.Errorf("envelope: %s", b)
			}
			batch := full.answers()
			tc.check(t, batch)
			stream, _ := accumulate(t, env.events(t, "/v1/chat/completions", `{"model":"qwen","stream":true,`+tc.body+`}`))
			tc.check(t, stream)
			// Logprobs may be fewer when streaming: vLLM sends no chunk (and so
			// drops the logprobs) for tokens whose text the parser holds back.
			for i, want := range batch {
				got := stream[i]
				if got == nil || got.content != want.content || got.reasoning != want.reasoning || got.finish != want.finish ||
					got.stopReason != want.stopReason || len(got.calls) != len(want.calls) || got.logprobs > want.logprobs {
					t.Errorf("choice %d: stream %+v != non-stream %+v", i, got, want)
					continue
				}
				for j := range want.calls {
					if got.calls[j].name != want.calls[j].name || got.calls[j].args != want.calls[j].args {
						t.Errorf("call %d: stream %+v != non-stream %+v", j, got.calls[j], want.calls[j])
					}
				}
			}
		})
	}
}

func TestOpenAIChatStreamShape(t *testing.T) {
	env := newOpenAIEnv(t, "")
	events := env.events(t, "/v1/chat/completions", `{"model":"qwen","stream":true,
		"messages":[{"role":"user","content":"What is 2+2?"}],"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`)
	first := events[0]
	for _, want := range []string{`"object":"chat.completion.chunk"`, `"model":"qwen"`,
		`"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]`,
		`"usage":{"prompt_tokens":`, `"prompt_token_ids":null,"prompt_text":null}`} {
		if !strings.Contains(first, want) {
			t.Errorf("role chunk %s lacks %s", first, want)
		}
	}
	_, chunks := accumulate(t, events)
	last := events[len(events)-1]
	if !strings.Contains(last, `"choices":[],"usage":{"prompt_tokens":`) || strings.Contains(last, "null") {
		t.Errorf("usage chunk: %s", last)
	}
	final := events[len(events)-2]
	if !strings.Contains(final, `"finish_reason":"stop","stop_reason":null,"token_ids":null}]`) {
		t.Errorf("finish chunk: %s", final)
	}
	for _, c := range chunks[:len(chunks)-1] {
		if _, ok := c["usage"]; !ok {
			t.Errorf("continuous usage missing in %v", c)
		}
	}
	// The usage adds up: completion tokens equal the generated ids.
	var u struct {
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
			TotalTokens      int `json:"total_tokens"`
		} `json:"usage"`
	}
	_ = json.Unmarshal([]byte(last), &u)
	if u.Usage.CompletionTokens == 0 || u.Usage.TotalTokens != u.Usage.PromptTokens+u.Usage.CompletionTokens {
		t.Errorf("usage %+v", u.Usage)
	}
}

// TestOpenAIToolChoiceConstrainsEngine: hermes has a structural tag model,
// so required and named tool_choice reach the engine as vLLM's structural
// tag (render/testdata/structtag has the byte-exact goldens) and the
// simulator's forced call comes back as a tool call.
func TestOpenAIToolChoiceConstrainsEngine(t *testing.T) {
	env := newOpenAIEnv(t, "")
	cases := []struct {
		name, choice, wantTag string
	}{
		{name: "required", choice: `"required"`,
			wantTag: `"type": "tags_with_separator", "tags": [{"type": "tag", "begin": "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "`},
		{name: "named", choice: `{"type":"function","function":{"name":"get_weather"}}`,
			wantTag: `"at_least_one": true, "stop_after_first": true}}`},
		{name: "auto", choice: `"auto"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(env.sim.Requests())
			status, b := env.post(t, "/v1/chat/completions", `{"model":"qwen","messages":[{"role":"user","content":"weather in Paris?"}],`+
				weatherTool+`,"tool_choice":`+tc.choice+`}`)
			if status != 200 {
				t.Fatalf("status %d: %s", status, b)
			}
			reqs := env.sim.Requests()
			if len(reqs) != before+1 {
				t.Fatalf("engine saw %d requests, want 1", len(reqs)-before)
			}
			so := reqs[len(reqs)-1].SamplingParams.StructuredOutputs
			switch {
			case tc.wantTag == "" && so != nil:
				t.Errorf("structured_outputs %+v, want none", so)
			case tc.wantTag != "" && (so == nil || so.StructuralTag == nil || so.JSON != nil ||
				!strings.HasPrefix(*so.StructuralTag, `{"type": "structural_tag", "format": `) || !strings.Contains(*so.StructuralTag, tc.wantTag)):
				t.Errorf("structured_outputs = %+v, want a structural tag with %s", so, tc.wantTag)
			}
			var full fullChat
			_ = json.Unmarshal(b, &full)
			if len(full.Choices) != 1 || len(full.Choices[0].Message.ToolCalls) != 1 {
				t.Errorf("want one tool call: %s", b)
			}
		})
	}
}

func TestOpenAIStopStringAbortsEngine(t *testing.T) {
	env := newOpenAIEnv(t, "")
	status, b := env.post(t, "/v1/chat/completions", `{"model":"qwen","messages":[{"role":"user","content":"stopme"}],"stop":["beta"]}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, b)
	}
	var full fullChat
	_ = json.Unmarshal(b, &full)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	reqs := env.sim.Requests()
	last := reqs[len(reqs)-1]
	if len(last.SamplingParams.Stop) != 0 {
		t.Errorf("engine got stop strings %q", last.SamplingParams.Stop)
	}
	if err := env.sim.WaitAbort(ctx, engine.EngineRequestID(full.ID)); err != nil {
		t.Errorf("engine request %s not aborted after the stop string: %v (aborts %q)", full.ID, err, env.sim.Aborts())
	}
}

func TestOpenAICompletions(t *testing.T) {
	env := newOpenAIEnv(t, "")
	status, b := env.post(t, "/v1/completions", `{"model":"qwen","prompt":["stopme","hello"],"stop":["gamma"],"max_tokens":50}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, b)
	}
	var full struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Choices []struct {
			Index        int             `json:"index"`
			Text         string          `json:"text"`
			FinishReason string          `json:"finish_reason"`
			StopReason   json.RawMessage `json:"stop_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(b, &full); err != nil {
		t.Fatal(err)
	}
	if full.Object != "text_completion" || len(full.Choices) != 2 || full.Choices[1].Index != 1 {
		t.Fatalf("got %s", b)
	}
	if c := full.Choices[0]; !strings.HasSuffix(c.Text, "Alpha beta ") || string(c.StopReason) != `"gamma"` {
		t.Errorf("choice 0: %+v", c)
	}
	events := env.events(t, "/v1/completions", `{"model":"qwen","prompt":["stopme","hello"],"stop":["gamma"],"max_tokens":50,"stream":true}`)
	texts := map[int]string{}
	for _, e := range events {
		var c struct {
			Choices []struct {
				Index int    `json:"index"`
				Text  string `json:"text"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatal(err)
		}
		for _, ch := range c.Choices {
			texts[ch.Index] += ch.Text
		}
	}
	for _, c := range full.Choices {
		if texts[c.Index] != c.Text {
			t.Errorf("choice %d: stream %q != non-stream %q", c.Index, texts[c.Index], c.Text)
		}
	}
}

func TestOpenAIErrors(t *testing.T) {
	env := newOpenAIEnv(t, "")
	cases := []struct {
		name, path, body string
		status           int
		wantType         string
	}{
		{"unknown model", "/v1/chat/completions", `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`, 404, "NotFoundError"},
		{"invalid params", "/v1/chat/completions", `{"model":"qwen","messages":[{"role":"user","content":"hi"}],"temperature":-1}`, 400, ""},
		{"too many tokens", "/v1/chat/completions", `{"model":"qwen","messages":[{"role":"user","content":"hi"}],"max_tokens":100000000}`, 400, "BadRequestError"},
		{"completions unknown model", "/v1/completions", `{"model":"nope","prompt":"hi"}`, 404, "NotFoundError"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, b := env.post(t, tc.path, tc.body)
			var e struct {
				Error struct {
					Type string `json:"type"`
					Code int    `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(b, &e); err != nil || status != tc.status || e.Error.Code != tc.status ||
				(tc.wantType != "" && e.Error.Type != tc.wantType) {
				t.Errorf("got %d %s", status, b)
			}
		})
	}
}

func TestOpenAINoEngine(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	h, err := New(Config{Model: m, ServedModelNames: []string{"qwen"}, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", path, strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"prompt":"hi"}`))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, req)
		if rec.Code != 503 || !strings.Contains(rec.Body.String(), "no engine is configured") {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body.String())
		}
	}
}

func TestOpenAIEngineDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	env := newOpenAIEnv(t, url)
	for _, stream := range []string{"false", "true"} {
		status, b := env.post(t, "/v1/chat/completions", `{"model":"qwen","stream":`+stream+`,"messages":[{"role":"user","content":"hi"}]}`)
		if status != 503 || !strings.Contains(string(b), `"code":503`) {
			t.Errorf("stream=%s: %d %s", stream, status, b)
		}
	}
}

func TestOpenAIDropMidStream(t *testing.T) {
	env := newOpenAIEnv(t, "")
	events := env.events(t, "/v1/chat/completions", `{"model":"qwen","stream":true,"messages":[{"role":"user","content":"dropme"}]}`)
	last := events[len(events)-1]
	if !strings.HasPrefix(last, `{"error": {"message": `) || !strings.Contains(last, `"code": 502`) {
		t.Errorf("want an error event before [DONE], got %s", last)
	}
	status, b := env.post(t, "/v1/chat/completions", `{"model":"qwen","messages":[{"role":"user","content":"dropme"}]}`)
	if status != 502 {
		t.Errorf("non-stream drop: %d %s", status, b)
	}
}

func TestOpenAIClientDisconnectAbortsEngine(t *testing.T) {
	env := newOpenAIEnv(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", env.url+"/v1/chat/completions",
		strings.NewReader(`{"model":"qwen","stream":true,"messages":[{"role":"user","content":"think slowly"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "disconnect-test")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":"chatcmpl-disconnect-test"`) {
		t.Fatalf("first line %q, %v", line, err)
	}
	cancel()
	res.Body.Close()
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	if err := env.sim.WaitAbort(wctx, "generate-tokens-chatcmpl-disconnect-test"); err != nil {
		t.Errorf("engine did not see the abort: %v (aborts %q)", err, env.sim.Aborts())
	}
}
