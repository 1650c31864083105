package server

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/render"
)

// requestIDField matches the one field two renders of the same request
// differ in.
var requestIDField = regexp.MustCompile(`^\{"request_id":"chatcmpl-[0-9a-f]{32}",`)

func postRender(h http.Handler, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func messagesRenderServer(t *testing.T) http.Handler {
	t.Helper()
	m := testmodel.Load(t, "qwen3")
	r, err := render.New(m, render.Config{})
	if err != nil {
		t.Fatal(err)
	}
	gen := render.NewGenerator(r, m.MaxModelLen, render.GeneratorConfig{EnableAutoToolChoice: true, ToolCallParser: "hermes"})
	h, err := New(Config{Model: m, ServedModelNames: []string{"m"}, Logger: discardLogger(), Generator: gen})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestMessagesRenderGolden renders every case of
// testdata/anthropic_render_golden.jsonl twice: the Anthropic body through
// /v1/messages/render and the chat request vLLM converts it to through
// /v1/chat/completions/render. Status and body must be byte-identical but
// for the random request id (multimodal cases give the same 400).
func TestMessagesRenderGolden(t *testing.T) {
	h := messagesRenderServer(t)
	n := 0
	for _, line := range goldenLines(t, "testdata/anthropic_render_golden.jsonl") {
		var c struct {
			Name      string          `json:"name"`
			Anthropic json.RawMessage `json:"anthropic"`
			Chat      json.RawMessage `json:"chat"`
		}
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatal(err)
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			got := postRender(h, "/v1/messages/render", string(c.Anthropic))
			want := postRender(h, "/v1/chat/completions/render", string(c.Chat))
			if got.Code != want.Code {
				t.Fatalf("status %d, chat render %d\n got: %s\nwant: %s", got.Code, want.Code, got.Body, want.Body)
			}
			g := requestIDField.ReplaceAllString(got.Body.String(), `{"request_id":"ID",`)
			w := requestIDField.ReplaceAllString(want.Body.String(), `{"request_id":"ID",`)
			if g != w {
				t.Errorf("body\n got: %s\nwant: %s", g, w)
			}
			if want.Code == 200 && !strings.HasPrefix(g, `{"request_id":"ID",`) {
				t.Errorf("no chatcmpl request id: %s", got.Body)
			}
		})
	}
	if n < 20 {
		t.Fatalf("only %d cases", n)
	}
}

func TestMessagesRenderErrors(t *testing.T) {
	h := messagesRenderServer(t)
	const user = `"messages":[{"role":"user","content":"Hi"}]`
	for _, c := range []httpCase{
		{name: "missing body", method: "POST", path: "/v1/messages/render", wantStatus: 400, wantBody: errMissingBody},
		{name: "not json content type", method: "POST", path: "/v1/messages/render", contentType: "text/plain",
			body: `{}`, wantStatus: 400, wantBody: errUnsupportedMedia},
		{name: "max_tokens is required", method: "POST", path: "/v1/messages/render", body: `{"model":"m",` + user + `}`,
			wantStatus: 400, wantBody: `{"error":{"message":"1 validation error:\n  {'type': 'missing', 'loc': 'body.max_tokens', 'msg': 'Field required', 'input': '<dict of 2 items>'}","type":"Bad Request","param":"body.max_tokens","code":400}}`},
		{name: "unknown model", method: "POST", path: "/v1/messages/render", body: `{"model":"x","max_tokens":5,` + user + `}`,
			wantStatus: 404, wantBody: `{"error":{"message":"The model ` + "`x`" + ` does not exist.","type":"NotFoundError","param":"model","code":404}}`},
		{name: "GET is not allowed", method: "GET", path: "/v1/messages/render", wantStatus: 405,
			wantBody: `{"error":{"message":"Method Not Allowed","type":"Method Not Allowed","param":null,"code":405}}`},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

// goldenLines reads a JSON Lines golden file.
func goldenLines(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
