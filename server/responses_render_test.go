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

func TestResponsesRenderErrors(t *testing.T) {
	h := messagesRenderServer(t)
	const p = "/v1/responses/render"
	for _, c := range []httpCase{
		{name: "missing body", method: "POST", path: p, wantStatus: 400, wantBody: errMissingBody},
		{name: "unknown model", method: "POST", path: p, body: `{"model":"x","input":"Hi"}`, wantStatus: 404,
			wantBody: `{"error":{"message":"The model ` + "`x`" + ` does not exist.","type":"NotFoundError","param":"model","code":404}}`},
		{name: "model checked before previous_response_id", method: "POST", path: p,
			body: `{"model":"x","input":"Hi","previous_response_id":"resp_1"}`, wantStatus: 404,
			wantBody: `{"error":{"message":"The model ` + "`x`" + ` does not exist.","type":"NotFoundError","param":"model","code":404}}`},
		// check_tool_usage has stored tool_choice "none" when the field is found
		// missing: the input shown has two members.
		{name: "input required", method: "POST", path: p, body: `{"model":"m"}`, wantStatus: 400,
			wantBody: `{"error":{"message":"1 validation error:\n  {'type': 'missing', 'loc': 'body.input', 'msg': 'Field required', 'input': '<dict of 2 items>'}","type":"Bad Request","param":"body.input","code":400}}`},
		{name: "tool without a type", method: "POST", path: p,
			body: `{"model":"m","input":"Hi","tools":[{"name":"f"}]}`, wantStatus: 400, wantRegexp: true,
			wantBody: `^\{"error":\{"message":"24 validation errors:\\n  \{'type': 'missing', 'loc': 'body.tools.0.FunctionTool.type', .*"type":"Bad Request","param":"body.tools.0.FunctionTool.type","code":400\}\}$`},
		{name: "max_output_tokens over the context", method: "POST", path: p,
			body: `{"model":"m","input":"Hi","max_output_tokens":100000000}`, wantStatus: 400, wantRegexp: true,
			wantBody: `^\{"error":\{"message":"max_output_tokens=100000000 cannot be greater than max_model_len=max_total_tokens=\d+\. Please request fewer output tokens\. \(parameter=max_output_tokens, value=100000000\)","type":"BadRequestError","param":"max_output_tokens","code":400\}\}$`},
		{name: "GET is not allowed", method: "GET", path: p, wantStatus: 405,
			wantBody: `{"error":{"message":"Method Not Allowed","type":"Method Not Allowed","param":null,"code":405}}`},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

// TestResponsesRenderRequestID: a request_id given is the GenerateRequest's
// (vLLM's Responses route uses request.request_id).
func TestResponsesRenderRequestID(t *testing.T) {
	h := messagesRenderServer(t)
	rec := postRender(h, "/v1/responses/render", `{"model":"m","input":"Hi","request_id":"my-id","stream":true}`)
	if rec.Code != 200 || !strings.HasPrefix(rec.Body.String(), `{"request_id":"my-id",`) {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var gr struct {
		Stream         bool            `json:"stream"`
		StreamOptions  json.RawMessage `json:"stream_options"`
		SamplingParams struct {
			OutputKind int `json:"output_kind"`
		} `json:"sampling_params"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &gr); err != nil {
		t.Fatal(err)
	}
	if !gr.Stream || string(gr.StreamOptions) != "null" || gr.SamplingParams.OutputKind != 1 {
		t.Errorf("stream %v, stream_options %s, output_kind %d", gr.Stream, gr.StreamOptions, gr.SamplingParams.OutputKind)
	}
}
