package server

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// responsesIDField matches the default Responses request id.
var responsesIDField = regexp.MustCompile(`^\{"request_id":"resp_[0-9a-f]{32}",`)

// TestResponsesRenderGolden renders every case of
// testdata/responses_render_golden.jsonl (cases from vLLM's Responses
// tests, see gen_responses_golden.py) through /v1/responses/render and,
// when vLLM renders it, the chat request vLLM builds from it through
// /v1/chat/completions/render: the bodies must be byte-identical but for
// the request id. Refused cases must give vLLM's status and error body.
func TestResponsesRenderGolden(t *testing.T) {
	h := messagesRenderServer(t)
	n := 0
	for _, line := range goldenLines(t, "testdata/responses_render_golden.jsonl") {
		var c struct {
			Name      string          `json:"name"`
			Responses json.RawMessage `json:"responses"`
			Chat      json.RawMessage `json:"chat"`
			Error     *struct {
				Status int             `json:"status"`
				Body   json.RawMessage `json:"body"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatal(err)
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			got := postRender(h, "/v1/responses/render", string(c.Responses))
			if c.Error != nil {
				if got.Code != c.Error.Status || !jsonEqual(t, got.Body.Bytes(), c.Error.Body) {
					t.Fatalf("got %d %s\nwant %d %s", got.Code, got.Body, c.Error.Status, c.Error.Body)
				}
				return
			}
			want := postRender(h, "/v1/chat/completions/render", string(c.Chat))
			if got.Code != 200 || want.Code != 200 {
				t.Fatalf("status %d, chat render %d\n got: %s\nwant: %s", got.Code, want.Code, got.Body, want.Body)
			}
			g := responsesIDField.ReplaceAllString(got.Body.String(), `{"request_id":"ID",`)
			w := requestIDField.ReplaceAllString(want.Body.String(), `{"request_id":"ID",`)
			if !strings.HasPrefix(g, `{"request_id":"ID",`) {
				t.Errorf("no resp_ request id: %s", got.Body)
			}
			if g != w {
				t.Errorf("body\n got: %s\nwant: %s", g, w)
			}
		})
	}
	if n < 30 {
		t.Fatalf("only %d cases", n)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
