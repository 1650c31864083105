package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/orchestrator/engine"
)

// /v1/messages end to end over the simulated engine (testScript): the
// answers and event streams vLLM's AnthropicServingMessages writes.

// sseEvent is one named SSE event.
type sseEvent struct{ name, data string }

// namedEvents posts a streaming request and splits the answer into named
// events, checking each frame's shape and that data.type names the event
// when the data has a type.
func (env *openAIEnv) namedEvents(t *testing.T, path, body string) []sseEvent {
	t.Helper()
	status, b := env.post(t, path, body)
	if status != 200 {
		t.Fatalf("status %d: %s", status, b)
	}
	if !strings.HasSuffix(string(b), "\n\n") {
		t.Fatalf("stream does not end with a blank line: %q", b)
	}
	var out []sseEvent
	for _, block := range strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n\n") {
		name, data, ok := strings.Cut(block, "\n")
		name, ok1 := strings.CutPrefix(name, "event: ")
		data, ok2 := strings.CutPrefix(data, "data: ")
		if !ok || !ok1 || !ok2 || strings.Contains(data, "\n") {
			t.Fatalf("not an event frame: %q", block)
		}
		var typed struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(data), &typed); err != nil {
			t.Fatalf("event data is not JSON: %q", data)
		}
		if typed.Type != "" && typed.Type != name {
			t.Errorf("event %q carries type %q", name, typed.Type)
		}
		out = append(out, sseEvent{name, data})
	}
	return out
}

const weatherTools = `"tools":[{"name":"get_weather","description":"Weather of a city","input_schema":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string"}},"required":["city"]}}]`

var (
	hexID     = regexp.MustCompile(`"(signature)":"[0-9a-f]{32}"`)
	toolUseID = regexp.MustCompile(`"id":"chatcmpl-tool-[0-9a-f]{32}"`)
)

func TestMessagesToolUseAnswer(t *testing.T) {
	env := newOpenAIEnv(t, "")
	status, b := env.post(t, "/v1/messages", `{"model":"qwen","max_tokens":200,`+weatherTools+`,
		"messages":[{"role":"user","content":"What is the weather in Paris?"}]}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, b)
	}
	got := toolUseID.ReplaceAllString(hexID.ReplaceAllString(string(b), `"$1":"S"`), `"id":"T"`)
	got = regexp.MustCompile(`"id":"chatcmpl-[0-9a-f]+"`).ReplaceAllString(got, `"id":"M"`)
	got = regexp.MustCompile(`"usage":\{"input_tokens":\d+,"output_tokens":\d+\}`).ReplaceAllString(got, `"usage":U`)
	want := `{"id":"M","type":"message","role":"assistant","content":[` +
		`{"type":"thinking","thinking":"\nThe user wants weather.\n","signature":"S"},` +
		`{"type":"tool_use","id":"T","name":"get_weather","input":{"city":"Paris","unit":"celsius"}}],` +
		`"model":"qwen","stop_reason":"tool_use","usage":U}`
	if got != want {
		t.Errorf("answer\n got %s\nwant %s", got, want)
	}
	// The usage is the converted chat request's (tools carry vLLM's
	// "defer_loading": null): the same prompt and tokens.
	var msg struct {
		Usage struct {
			Input  int `json:"input_tokens"`
			Output int `json:"output_tokens"`
		} `json:"usage"`
	}
	_ = json.Unmarshal(b, &msg)
	_, cb := env.post(t, "/v1/chat/completions", `{"model":"qwen","max_tokens":200,"max_completion_tokens":200,
		"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string"}},"required":["city"]},"defer_loading":null}}],
		"messages":[{"role":"user","content":"What is the weather in Paris?"}]}`)
	var chat struct {
		Usage struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
	}
	_ = json.Unmarshal(cb, &chat)
	if msg.Usage.Input != chat.Usage.Prompt || msg.Usage.Output != chat.Usage.Completion || msg.Usage.Input == 0 {
		t.Errorf("usage %+v, chat usage %+v", msg.Usage, chat.Usage)
	}
}

func TestMessagesTextAnswer(t *testing.T) {
	env := newOpenAIEnv(t, "")
	status, b := env.post(t, "/v1/messages", `{"model":"qwen","max_tokens":200,"system":"Be brief.",
		"messages":[{"role":"user","content":"What is 2+2?"}]}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, b)
	}
	got := hexID.ReplaceAllString(string(b), `"$1":"S"`)
	if !strings.Contains(got, `"content":[{"type":"thinking","thinking":"\nLet me think about 2+2.\n","signature":"S"},`+
		`{"type":"text","text":"\n\n2+2 = 4. Ünïcödé ✓ 😀"}],"model":"qwen","stop_reason":"end_turn","usage":{"input_tokens":`) {
		t.Errorf("answer %s", got)
	}
	// max_tokens cuts the answer: stop_reason max_tokens.
	_, b = env.post(t, "/v1/messages", `{"model":"qwen","max_tokens":3,"messages":[{"role":"user","content":"Hi"}]}`)
	if !strings.Contains(string(b), `"stop_reason":"max_tokens","usage":{"input_tokens":`) || !strings.Contains(string(b), `"output_tokens":3}`) {
		t.Errorf("max_tokens answer %s", b)
	}
}

// TestMessagesStreamEventOrder checks the event sequence of a thinking +
// tool_use answer and that the stream joins to the non-streaming answer.
func TestMessagesStreamEventOrder(t *testing.T) {
	env := newOpenAIEnv(t, "")
	events := env.namedEvents(t, "/v1/messages", `{"model":"qwen","max_tokens":200,"stream":true,`+weatherTools+`,
		"messages":[{"role":"user","content":"What is the weather in Paris?"}]}`)
	var order []string
	var thinking, partial strings.Builder
	for _, ev := range events {
		var d struct {
			Type  string `json:"type"`
			Index *int   `json:"index"`
			Delta struct {
				Type        string  `json:"type"`
				Thinking    string  `json:"thinking"`
				PartialJSON string  `json:"partial_json"`
				StopReason  *string `json:"stop_reason"`
			} `json:"delta"`
			Block struct {
				Type string `json:"type"`
				Name string `json:"name"`
			} `json:"content_block"`
		}
		if err := json.Unmarshal([]byte(ev.data), &d); err != nil {
			t.Fatal(err)
		}
		step := ev.name
		switch ev.name {
		case "content_block_start":
			step += ":" + d.Block.Type
		case "content_block_delta":
			step += ":" + d.Delta.Type
			thinking.WriteString(d.Delta.Thinking)
			partial.WriteString(d.Delta.PartialJSON)
		case "message_delta":
			if d.Delta.StopReason != nil {
				step += ":" + *d.Delta.StopReason
			}
		}
		if d.Index != nil {
			step += "@" + string(rune('0'+*d.Index))
		}
		if len(order) == 0 || order[len(order)-1] != step || !strings.HasPrefix(step, "content_block_delta") {
			order = append(order, step)
		}
	}
	want := []string{"message_start", "content_block_start:thinking@0", "content_block_delta:thinking_delta@0",
		"content_block_delta:signature_delta@0", "content_block_stop@0", "content_block_start:tool_use@1",
		"content_block_delta:input_json_delta@1", "content_block_stop@1", "message_delta:tool_use", "message_stop"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("events\n got %q\nwant %q", order, want)
	}
	if thinking.String() != "\nThe user wants weather.\n" {
		t.Errorf("thinking %q", thinking.String())
	}
	var input map[string]string
	if err := json.Unmarshal([]byte(partial.String()), &input); err != nil || input["city"] != "Paris" || input["unit"] != "celsius" {
		t.Errorf("input_json_delta joins to %q", partial.String())
	}
	start := events[0].data
	if !regexp.MustCompile(`^\{"type":"message_start","message":\{"id":"chatcmpl-[0-9a-f]+","content":\[\],"model":"qwen",` +
		`"stop_reason":null,"stop_sequence":null,"usage":\{"input_tokens":\d+,"output_tokens":0\}\}\}$`).MatchString(start) {
		t.Errorf("message_start %s", start)
	}
	if events[len(events)-1].data != `{"type":"message_stop"}` {
		t.Errorf("last event %s", events[len(events)-1].data)
	}
	if got := events[2].data; got != `{"type":"content_block_delta","delta":{"type":"thinking_delta","thinking":"\n"},"index":0}` {
		t.Errorf("first thinking delta %s", got)
	}
}

func TestMessagesStreamText(t *testing.T) {
	env := newOpenAIEnv(t, "")
	events := env.namedEvents(t, "/v1/messages", `{"model":"qwen","max_tokens":200,"stream":true,
		"messages":[{"role":"user","content":"What is 2+2?"}]}`)
	var text strings.Builder
	blocks := 0
	for _, ev := range events {
		if ev.name == "content_block_start" {
			blocks++
			if blocks == 2 && ev.data != `{"type":"content_block_start","content_block":{"type":"text","text":""},"index":1}` {
				t.Errorf("text block start %s", ev.data)
			}
		}
		var d struct {
			Delta struct {
				Text string `json:"text"`
			} `json:"delta"`
		}
		_ = json.Unmarshal([]byte(ev.data), &d)
		text.WriteString(d.Delta.Text)
	}
	if text.String() != "\n\n2+2 = 4. Ünïcödé ✓ 😀" || blocks != 2 {
		t.Errorf("text %q in %d blocks", text.String(), blocks)
	}
	md := events[len(events)-2]
	if md.name != "message_delta" || !regexp.MustCompile(`^\{"type":"message_delta","delta":\{"stop_reason":"end_turn"\},"usage":\{"input_tokens":\d+,"output_tokens":\d+\}\}$`).MatchString(md.data) {
		t.Errorf("message_delta %s", md.data)
	}
}

func TestMessagesStopSequenceAbortsEngine(t *testing.T) {
	env := newOpenAIEnv(t, "")
	status, b := env.post(t, "/v1/messages", `{"model":"qwen","max_tokens":200,"stop_sequences":["beta"],
		"messages":[{"role":"user","content":"stopme"}]}`)
	if status != 200 || !strings.Contains(string(b), `{"type":"text","text":"\n\nAlpha "}],"model":"qwen","stop_reason":"end_turn"`) {
		t.Fatalf("%d %s", status, b)
	}
	var msg struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(b, &msg)
	reqs := env.sim.Requests()
	if last := reqs[len(reqs)-1]; len(last.SamplingParams.Stop) != 0 {
		t.Errorf("engine got stop strings %q", last.SamplingParams.Stop)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := env.sim.WaitAbort(ctx, engine.EngineRequestID(msg.ID)); err != nil {
		t.Errorf("engine request %s not aborted after the stop sequence: %v", msg.ID, err)
	}
}

func TestMessagesClientDisconnectAbortsEngine(t *testing.T) {
	env := newOpenAIEnv(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", env.url+"/v1/messages",
		strings.NewReader(`{"model":"qwen","max_tokens":200,"stream":true,"messages":[{"role":"user","content":"think slowly"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "messages-disconnect")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	if err != nil || line != "event: message_start\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	cancel()
	res.Body.Close()
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	if err := env.sim.WaitAbort(wctx, "generate-tokens-chatcmpl-messages-disconnect"); err != nil {
		t.Errorf("engine did not see the abort: %v (aborts %q)", err, env.sim.Aborts())
	}
}

func TestMessagesErrors(t *testing.T) {
	env := newOpenAIEnv(t, "")
	cases := []struct {
		name, body string
		status     int
		want       string // a prefix of the body
	}{
		{"unknown model", `{"model":"nope","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, 404,
			`{"type":"error","error":{"type":"NotFoundError","message":"The model ` + "`nope`" + ` does not exist."}}`},
		{"too many tokens", `{"model":"qwen","max_tokens":100000000,"messages":[{"role":"user","content":"hi"}]}`, 400,
			`{"type":"error","error":{"type":"BadRequestError","message":`},
		// Pydantic's validation of the body: vLLM's app-wide OpenAI-shaped 400.
		{"max_tokens missing", `{"model":"qwen","messages":[{"role":"user","content":"hi"}]}`, 400, `{"error":{"message":`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, b := env.post(t, "/v1/messages", tc.body)
			if status != tc.status || !strings.HasPrefix(string(b), tc.want) {
				t.Errorf("got %d %s", status, b)
			}
		})
	}
	m := testmodel.Load(t, "qwen3")
	h, err := New(Config{Model: m, ServedModelNames: []string{"qwen"}, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/messages", strings.NewReader(`{"model":"qwen","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	if rec.Code != 503 || !strings.HasPrefix(rec.Body.String(), `{"type":"error","error":{"type":"Service Unavailable","message":"no engine is configured`) {
		t.Errorf("no engine: %d %s", rec.Code, rec.Body.String())
	}
}

// An engine that is down: a 503 before anything is sent, in each API's
// error shape; an engine that drops the stream midway: the stream ends with
// the API's error event.
func TestMessagesResponsesEngineFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	down := newOpenAIEnv(t, url)
	for _, stream := range []string{"false", "true"} {
		status, b := down.post(t, "/v1/messages", `{"model":"qwen","max_tokens":5,"stream":`+stream+`,"messages":[{"role":"user","content":"hi"}]}`)
		if status != 503 || !strings.HasPrefix(string(b), `{"type":"error","error":{"type":"Service Unavailable","message":`) {
			t.Errorf("messages stream=%s: %d %s", stream, status, b)
		}
		status, b = down.post(t, "/v1/responses", `{"model":"qwen","stream":`+stream+`,"input":"hi"}`)
		if status != 503 || !strings.Contains(string(b), `"code":503`) {
			t.Errorf("responses stream=%s: %d %s", stream, status, b)
		}
	}

	env := newOpenAIEnv(t, "")
	events := env.namedEvents(t, "/v1/messages", `{"model":"qwen","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"dropme"}]}`)
	if last := events[len(events)-1]; last.name != "error" ||
		!strings.HasPrefix(last.data, `{"type":"error","error":{"type":"internal_error","message":"engine closed the stream before [DONE]`) {
		t.Errorf("messages drop: last event %+v", last)
	}
	events = env.namedEvents(t, "/v1/responses", `{"model":"qwen","stream":true,"input":"dropme"}`)
	last := events[len(events)-1]
	var e struct {
		Seq int `json:"sequence_number"`
	}
	_ = json.Unmarshal([]byte(last.data), &e)
	if last.name != "error" || e.Seq != len(events)-1 || !strings.Contains(last.data, `"message":"engine closed the stream before [DONE]`) {
		t.Errorf("responses drop: last event %+v", last)
	}
	if status, b := env.post(t, "/v1/messages", `{"model":"qwen","max_tokens":50,"messages":[{"role":"user","content":"dropme"}]}`); status != 502 ||
		!strings.HasPrefix(string(b), `{"type":"error","error":{"type":"Bad Gateway",`) {
		t.Errorf("messages non-stream drop: %d %s", status, b)
	}
}

// --api-key guards both routes.
func TestMessagesResponsesNeedAPIKey(t *testing.T) {
	env := newOpenAIEnvWith(t, "", envOptions{edit: func(c *Config) { c.APIKeys = []string{"k1"} }})
	for _, path := range []string{"/v1/messages", "/v1/responses"} {
		status, _ := env.post(t, path, `{"model":"qwen","max_tokens":5,"input":"hi","messages":[{"role":"user","content":"hi"}]}`)
		if status != 401 {
			t.Errorf("%s without a key: %d", path, status)
		}
	}
	req, _ := http.NewRequest("POST", env.url+"/v1/messages", strings.NewReader(`{"model":"qwen","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer k1")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("with the key: %d", res.StatusCode)
	}
}

// count_tokens is the prompt the Messages request renders to, without an
// engine too; max_tokens and sampling members are not read.
func TestMessagesCountTokens(t *testing.T) {
	env := newOpenAIEnv(t, "")
	msgs := `"system":"Be brief.",` + weatherTools + `,"messages":[{"role":"user","content":"What is the weather in Paris?"}]`
	_, b := env.post(t, "/v1/messages", `{"model":"qwen","max_tokens":50,`+msgs+`}`)
	var msg struct {
		Usage struct {
			Input int `json:"input_tokens"`
		} `json:"usage"`
	}
	_ = json.Unmarshal(b, &msg)
	status, got := env.post(t, "/v1/messages/count_tokens", `{"model":"qwen","temperature":"ignored",`+msgs+`}`)
	want := `{"input_tokens":` + strconv.Itoa(msg.Usage.Input) + `,"context_management":{"original_input_tokens":` + strconv.Itoa(msg.Usage.Input) + `}}`
	if status != 200 || string(got) != want || msg.Usage.Input == 0 {
		t.Errorf("%d %s, want %s", status, got, want)
	}
	// A render-only server counts too (no tools: it has no tool parser).
	h, err := New(Config{Model: testmodel.Load(t, "qwen3"), ServedModelNames: []string{"qwen"}, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/messages/count_tokens", strings.NewReader(`{"model":"qwen","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || !regexp.MustCompile(`^\{"input_tokens":[1-9]\d*,"context_management":\{"original_input_tokens":[1-9]\d*\}\}$`).MatchString(rec.Body.String()) {
		t.Errorf("render-only: %d %s", rec.Code, rec.Body.String())
	}
	if status, b := env.post(t, "/v1/messages/count_tokens", `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`); status != 404 ||
		!strings.HasPrefix(string(b), `{"type":"error","error":{"type":"NotFoundError"`) {
		t.Errorf("unknown model: %d %s", status, b)
	}
	if status, _ := env.post(t, "/v1/messages/count_tokens", `{"model":"qwen"}`); status != 400 {
		t.Errorf("messages missing: %d", status)
	}
}

// Both routes count in /metrics under their own endpoint.
func TestMessagesResponsesMetrics(t *testing.T) {
	env := newOpenAIEnv(t, "")
	env.post(t, "/v1/messages", `{"model":"qwen","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	env.post(t, "/v1/responses", `{"model":"qwen","max_output_tokens":5,"input":"hi"}`)
	res, err := http.Get(env.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	_, _ = io.Copy(&b, res.Body)
	for _, want := range []string{
		`vrender_requests_total{endpoint="/v1/messages",code="200"} 1`,
		`vrender_requests_total{endpoint="/v1/responses",code="200"} 1`,
		`vrender_orchestrator_requests_total{endpoint="messages"} 1`,
		`vrender_orchestrator_requests_total{endpoint="responses"} 1`,
		`vrender_generation_tokens_total{endpoint="/v1/messages"} 5`,
		`vrender_generation_tokens_total{endpoint="/v1/responses"} 5`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if !regexp.MustCompile(`vrender_prompt_tokens_total\{endpoint="/v1/messages"\} [1-9]`).MatchString(b.String()) {
		t.Errorf("/metrics has no /v1/messages prompt tokens")
	}
}
