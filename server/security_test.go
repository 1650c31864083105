package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// routeMatrix is one request per route, with a body that gets past
// decoding on the tiny model.
var routeMatrix = []struct {
	method, path, body string
	guarded            bool
}{
	{"GET", "/health", "", false},
	{"GET", "/version", "", false},
	{"GET", "/metrics", "", false},
	{"GET", "/v1/models", "", true},
	{"POST", "/tokenize", `{"prompt":"hello"}`, true},
	{"POST", "/detokenize", `{"tokens":[1,2]}`, true},
	{"POST", "/v1/chat/completions/render", `{"messages":[{"role":"user","content":"hi"}]}`, true},
	{"POST", "/v1/completions/render", `{"prompt":"hi"}`, true},
	{"POST", "/v1/chat/completions/derender", `{"generate_response":{"request_id":"r","choices":[{"index":0,"token_ids":[1],"finish_reason":"stop"}]}}`, true},
	{"POST", "/v1/completions/derender", `{"generate_responses":[{"request_id":"r","choices":[{"index":0,"token_ids":[1],"finish_reason":"stop"}]}]}`, true},
	{"POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`, true},
	{"POST", "/v1/completions", `{"prompt":"hi"}`, true},
	{"GET", "/v1/no-such-route", "", true},
}

func TestAPIKeyGuardsModelRoutes(t *testing.T) {
	const key1, key2 = "sk-first-key", "sk-second-key"
	h, logs := testServer(t, func(c *Config) { c.APIKeys = []string{key1, key2} })
	auths := []struct {
		name, header string
		ok           bool
	}{
		{"no key", "", false},
		{"wrong key", "Bearer sk-wrong", false},
		{"prefix of key", "Bearer sk-first", false},
		{"key without scheme", key1, false},
		{"basic scheme", "Basic " + key1, false},
		{"right key", "Bearer " + key1, true},
		{"second key", "Bearer " + key2, true},
		{"scheme case", "bearer " + key2, true},
	}
	for _, rt := range routeMatrix {
		for _, a := range auths {
			hdr := map[string]string{}
			if a.header != "" {
				hdr["Authorization"] = a.header
			}
			rec := do(h, rt.method, rt.path, rt.body, hdr)
			refused := rec.Code == http.StatusUnauthorized
			if want := rt.guarded && !a.ok; refused != want {
				t.Errorf("%s %s with %s: status %d, want refused=%v", rt.method, rt.path, a.name, rec.Code, want)
			}
			if refused && rec.Body.String() != `{"error":"Unauthorized"}` {
				t.Errorf("%s %s: 401 body %s", rt.method, rt.path, rec.Body)
			}
		}
	}
	// CORS preflights pass, as in vLLM.
	if rec := do(h, "OPTIONS", "/v1/models", "", nil); rec.Code == http.StatusUnauthorized {
		t.Error("OPTIONS refused")
	}
	for _, k := range []string{key1, key2, "sk-wrong"} {
		if strings.Contains(logs.String(), k) {
			t.Errorf("logs contain key %q", k)
		}
	}
	fams := scrape(t, h)
	if got := metric(fams, "vrender_unauthorized_requests_total"); got == 0 {
		t.Error("vrender_unauthorized_requests_total did not move")
	}
}

func TestNoAPIKeyMeansNoAuth(t *testing.T) {
	h, _ := testServer(t, nil)
	for _, rt := range routeMatrix {
		if rec := do(h, rt.method, rt.path, rt.body, nil); rec.Code == http.StatusUnauthorized {
			t.Errorf("%s %s refused without --api-key", rt.method, rt.path)
		}
	}
}

func TestLimits(t *testing.T) {
	h, _ := testServer(t, func(c *Config) {
		c.MaxBodyBytes = 4096
		c.Limits = Limits{MaxMessages: 2, MaxTools: 1, MaxDerenderTokens: 4}
	})
	msg := `{"role":"user","content":"hi"}`
	tool := `{"type":"function","function":{"name":"f","parameters":{}}}`
	tests := []struct {
		name, path, body string
		status           int
		param            string
	}{
		{"body too large", "/tokenize", `{"prompt":"` + strings.Repeat("a", 5000) + `"}`, 413, ""},
		{"messages", "/v1/chat/completions/render", `{"messages":[` + msg + `,` + msg + `,` + msg + `]}`, 400, "messages"},
		{"messages at limit", "/v1/chat/completions/render", `{"messages":[` + msg + `,` + msg + `]}`, -1, ""},
		{"tools", "/v1/chat/completions/render", `{"messages":[` + msg + `],"tools":[` + tool + `,` + tool + `]}`, 400, "tools"},
		{"chat completions messages", "/v1/chat/completions", `{"messages":[` + msg + `,` + msg + `,` + msg + `]}`, 400, "messages"},
		{"tokenize chat messages", "/tokenize", `{"messages":[` + msg + `,` + msg + `,` + msg + `]}`, 400, "messages"},
		{"detokenize tokens", "/detokenize", `{"tokens":[1,2,3,4,5]}`, 400, "token_ids"},
		{"derender tokens", "/v1/completions/derender",
			`{"generate_responses":[{"request_id":"r","choices":[{"index":0,"token_ids":[1,2,3],"finish_reason":"stop"},{"index":1,"token_ids":[1,2],"finish_reason":"stop"}]}]}`, 400, "token_ids"},
		{"derender at limit", "/v1/completions/derender",
			`{"generate_responses":[{"request_id":"r","choices":[{"index":0,"token_ids":[1,2,3,4],"finish_reason":"stop"}]}]}`, 200, ""},
	}
	for _, tc := range tests {
		rec := do(h, "POST", tc.path, tc.body, nil)
		if tc.status == -1 {
			if rec.Code == http.StatusBadRequest && strings.Contains(rec.Body.String(), "limit") {
				t.Errorf("%s: refused at the limit: %s", tc.name, rec.Body)
			}
			continue
		}
		if rec.Code != tc.status {
			t.Errorf("%s: status %d, want %d: %s", tc.name, rec.Code, tc.status, rec.Body)
			continue
		}
		if tc.status == 200 {
			continue
		}
		var body struct {
			Error struct {
				Message string  `json:"message"`
				Type    string  `json:"type"`
				Param   *string `json:"param"`
				Code    int     `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error.Code != tc.status || body.Error.Message == "" {
			t.Errorf("%s: not an OpenAI error body: %s", tc.name, rec.Body)
		}
		if tc.param != "" && (body.Error.Param == nil || *body.Error.Param != tc.param) {
			t.Errorf("%s: param %v, want %s", tc.name, body.Error.Param, tc.param)
		}
	}
}

// TestLogsNeverLeak runs requests carrying a secret prompt, output and key
// and checks the logs (debug level, the most verbose) never show them;
// with LogRequests the prompt is logged, the key still never.
func TestLogsNeverLeak(t *testing.T) {
	const (
		secretPrompt = "zebra-secret-prompt-7731"
		secretKey    = "sk-secret-key-9941"
		wrongKey     = "sk-wrong-key-1234"
	)
	for _, logRequests := range []bool{false, true} {
		logs := &bytes.Buffer{}
		env := newOpenAIEnvWith(t, "", envOptions{edit: func(c *Config) {
			c.APIKeys = []string{secretKey}
			c.LogRequests = logRequests
			c.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}, noServer: true})
		requests := []struct{ path, body, key string }{
			{"/v1/chat/completions", `{"model":"qwen","messages":[{"role":"user","content":"` + secretPrompt + `"}]}`, secretKey},
			{"/v1/chat/completions", `{"model":"qwen","stream":true,"messages":[{"role":"user","content":"` + secretPrompt + `"}]}`, secretKey},
			{"/v1/completions", `{"model":"qwen","prompt":"` + secretPrompt + `","max_tokens":3}`, secretKey},
			{"/v1/chat/completions/render", `{"model":"qwen","messages":[{"role":"user","content":"` + secretPrompt + `"}]}`, secretKey},
			{"/tokenize", `{"model":"qwen","prompt":"` + secretPrompt + `"}`, secretKey},
			{"/tokenize", `{"model":"qwen","prompt":"` + secretPrompt + `"}`, wrongKey},
			{"/v1/chat/completions", `{"model":"nope","messages":[{"role":"user","content":"` + secretPrompt + `"}]}`, secretKey},
			{"/v1/chat/completions", `{"model":"qwen","messages":[{"role":"user","content":"` + secretPrompt + `"}],"max_tokens":-5}`, secretKey},
		}
		var outputs []string
		for _, r := range requests {
			rec := do(env.h, "POST", r.path, r.body, map[string]string{"Authorization": "Bearer " + r.key})
			if r.key == secretKey && strings.HasPrefix(r.path, "/v1/chat/completions") && rec.Code == 200 && !strings.Contains(r.body, `"stream"`) {
				var res struct {
					Choices []struct {
						Message struct {
							Content string `json:"content"`
						} `json:"message"`
					} `json:"choices"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &res); err == nil && len(res.Choices) > 0 {
					outputs = append(outputs, res.Choices[0].Message.Content)
				}
			}
		}
		got := logs.String()
		if got == "" {
			t.Fatal("nothing was logged: the test would prove nothing")
		}
		for _, k := range []string{secretKey, wrongKey} {
			if strings.Contains(got, k) {
				t.Errorf("LogRequests=%v: logs contain API key %q", logRequests, k)
			}
		}
		if strings.Contains(got, secretPrompt) != logRequests {
			t.Errorf("LogRequests=%v: logs contain the prompt: %v", logRequests, strings.Contains(got, secretPrompt))
		}
		if len(outputs) == 0 {
			t.Fatal("no output to look for")
		}
		for _, o := range outputs {
			if o != "" && strings.Contains(got, o) {
				t.Errorf("LogRequests=%v: logs contain the output %q", logRequests, o)
			}
		}
	}
}
