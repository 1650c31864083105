package server

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/tokenizer"
)

// tinyTokenizerJSON is a byte-level BPE with a handful of tokens and one
// special token, enough to exercise every route without the model cache.
// Ids: h=0 i=1 hi=2 Ġ=3 Ġhi=4 .=5 Ġ.=6 <|end|>=7
const tinyTokenizerJSON = `{"version":"1.0",
"added_tokens":[{"id":7,"content":"<|end|>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}],
"normalizer":null,
"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true},
"post_processor":null,
"decoder":{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true},
"model":{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":null,"end_of_word_suffix":null,
 "fuse_unk":false,"byte_fallback":false,"ignore_merges":false,
 "vocab":{"h":0,"i":1,"hi":2,"Ġ":3,"Ġhi":4,".":5,"Ġ.":6},"merges":[["h","i"],["Ġ","hi"],["Ġ","."]]}}`

func tinyModel(t testing.TB) *model.Model {
	t.Helper()
	tok, err := tokenizer.Parse([]byte(tinyTokenizerJSON))
	if err != nil {
		t.Fatal(err)
	}
	return &model.Model{Path: "org/tiny", Tokenizer: tok, MaxModelLen: 128}
}

// testServer returns a handler over the tiny model served as "tiny" and
// "tiny-alias", and the buffer its logger writes to.
func testServer(t testing.TB, edit func(*Config)) (http.Handler, *bytes.Buffer) {
	t.Helper()
	logs := &bytes.Buffer{}
	cfg := Config{
		Model:            tinyModel(t),
		ServedModelNames: []string{"tiny", "tiny-alias"},
		Version:          "1.2.3-test",
		Logger:           slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		MaxBodyBytes:     1024,
	}
	if edit != nil {
		edit(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h, logs
}

type httpCase struct {
	name        string
	method      string
	path        string
	contentType string // "-" for none; "" means application/json
	body        string
	wantStatus  int
	wantBody    string // exact, unless wantRegexp
	wantRegexp  bool
}

func (c httpCase) run(t *testing.T, h http.Handler) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
	switch c.contentType {
	case "-":
	case "":
		req.Header.Set("Content-Type", "application/json")
	default:
		req.Header.Set("Content-Type", c.contentType)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != c.wantStatus {
		t.Errorf("status = %d, want %d; body %s", rec.Code, c.wantStatus, rec.Body)
	}
	got := rec.Body.String()
	if c.wantRegexp {
		if !regexp.MustCompile("^" + c.wantBody + "$").MatchString(got) {
			t.Errorf("body\n got: %s\nwant: /%s/", got, c.wantBody)
		}
	} else if got != c.wantBody {
		t.Errorf("body\n got: %s\nwant: %s", got, c.wantBody)
	}
	if got != "" && rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type = %q", rec.Header().Get("Content-Type"))
	}
	return rec
}

const (
	errUnsupportedMedia = `{"error":{"message":"1 validation error:\n  Unsupported Media Type: Only 'application/json' is allowed","type":"Bad Request","param":null,"code":400}}`
	errMissingBody      = `{"error":{"message":"1 validation error:\n  {'type': 'missing', 'loc': 'body', 'msg': 'Field required', 'input': 'None'}","type":"Bad Request","param":"body","code":400}}`
)

func TestRoutes(t *testing.T) {
	h, _ := testServer(t, nil)
	cases := []httpCase{
		{name: "health", method: "GET", path: "/health", wantStatus: 200, wantBody: ""},
		{name: "version", method: "GET", path: "/version", wantStatus: 200, wantBody: `{"version":"1.2.3-test"}`},
		{name: "models", method: "GET", path: "/v1/models", wantStatus: 200, wantRegexp: true,
			wantBody: `\{"object":"list","data":\[` +
				`\{"id":"tiny","object":"model","created":\d+,"owned_by":"vllm","root":"org/tiny","parent":null,"max_model_len":128,"permission":\[\{"id":"modelperm-[0-9a-f]{32}","object":"model_permission","created":\d+,"allow_create_engine":false,"allow_sampling":true,"allow_logprobs":true,"allow_search_indices":false,"allow_view":true,"allow_fine_tuning":false,"organization":"\*","group":null,"is_blocking":false\}\]\},` +
				`\{"id":"tiny-alias","object":"model","created":\d+,"owned_by":"vllm","root":"org/tiny","parent":null,"max_model_len":128,"permission":\[\{"id":"modelperm-[0-9a-f]{32}",[^]]*\]\}\]\}`},

		{name: "tokenize prompt", method: "POST", path: "/tokenize", body: `{"prompt":"hi hi<|end|>"}`,
			wantStatus: 200, wantBody: `{"count":3,"max_model_len":128,"tokens":[2,4,7],"token_strs":null}`},
		{name: "tokenize token strs", method: "POST", path: "/tokenize", body: `{"prompt":"hi hi<|end|>","return_token_strs":true,"model":"tiny"}`,
			wantStatus: 200, wantBody: `{"count":3,"max_model_len":128,"tokens":[2,4,7],"token_strs":["hi","Ġhi","<|end|>"]}`},
		{name: "tokenize empty prompt", method: "POST", path: "/tokenize", body: `{"prompt":"","return_token_strs":true}`,
			wantStatus: 200, wantBody: `{"count":0,"max_model_len":128,"tokens":[],"token_strs":[]}`},
		{name: "tokenize second served name", method: "POST", path: "/tokenize", body: `{"prompt":"hi","model":"tiny-alias"}`,
			wantStatus: 200, wantBody: `{"count":1,"max_model_len":128,"tokens":[2],"token_strs":null}`},
		{name: "tokenize empty model name means served model", method: "POST", path: "/tokenize", body: `{"prompt":"hi","model":""}`,
			wantStatus: 200, wantBody: `{"count":1,"max_model_len":128,"tokens":[2],"token_strs":null}`},
		{name: "tokenize null model and null token strs", method: "POST", path: "/tokenize", body: `{"prompt":"hi","model":null,"return_token_strs":null}`,
			wantStatus: 200, wantBody: `{"count":1,"max_model_len":128,"tokens":[2],"token_strs":null}`},
		{name: "tokenize charset parameter", method: "POST", path: "/tokenize", contentType: "Application/JSON; charset=utf-8", body: `{"prompt":"hi"}`,
			wantStatus: 200, wantBody: `{"count":1,"max_model_len":128,"tokens":[2],"token_strs":null}`},
		{name: "tokenize unknown model", method: "POST", path: "/tokenize", body: `{"prompt":"hi","model":"gpt-4"}`,
			wantStatus: 404, wantBody: "{\"error\":{\"message\":\"The model `gpt-4` does not exist.\",\"type\":\"NotFoundError\",\"param\":\"model\",\"code\":404}}"},
		{name: "tokenize model path is not a served name", method: "POST", path: "/tokenize", body: `{"prompt":"hi","model":"org/tiny"}`,
			wantStatus: 404, wantBody: "{\"error\":{\"message\":\"The model `org/tiny` does not exist.\",\"type\":\"NotFoundError\",\"param\":\"model\",\"code\":404}}"},
		{name: "tokenize chat form without a chat template", method: "POST", path: "/tokenize", body: `{"messages":[{"role":"user","content":"hi"}]}`,
			wantStatus: 400, wantBody: `{"error":{"message":"As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.","type":"BadRequestError","param":null,"code":400}}`},
		{name: "tokenize chat form unknown model is 404 first", method: "POST", path: "/tokenize", body: `{"messages":[],"model":"x"}`,
			wantStatus: 404, wantBody: "{\"error\":{\"message\":\"The model `x` does not exist.\",\"type\":\"NotFoundError\",\"param\":\"model\",\"code\":404}}"},
		{name: "tokenize prompt and messages is the prompt form", method: "POST", path: "/tokenize", body: `{"prompt":"hi","messages":[]}`,
			wantStatus: 200, wantBody: `{"count":1,"max_model_len":128,"tokens":[2],"token_strs":null}`},
		{name: "tokenize wrong types", method: "POST", path: "/tokenize", body: `{"prompt":5,"add_special_tokens":"maybe"}`,
			wantStatus: 400, wantBody: `{"error":{"message":"4 validation errors:\n` +
				`  {'type': 'string_type', 'loc': 'body.prompt', 'msg': 'Input should be a valid string', 'input': '5'}\n` +
				`  {'type': 'bool_parsing', 'loc': 'body.add_special_tokens', 'msg': 'Input should be a valid boolean, unable to interpret input', 'input': 'maybe'}\n` +
				`  {'type': 'missing', 'loc': 'body.messages', 'msg': 'Field required', 'input': '<dict of 2 items>'}\n` +
				`  {'type': 'bool_parsing', 'loc': 'body.add_special_tokens', 'msg': 'Input should be a valid boolean, unable to interpret input', 'input': 'maybe'}",` +
				`"type":"Bad Request","param":"body.prompt","code":400}}`},
		{name: "tokenize both generation flags", method: "POST", path: "/tokenize", body: `{"messages":[],"continue_final_message":true,"add_generation_prompt":true}`,
			wantStatus: 400, wantBody: `{"error":{"message":"2 validation errors:\n` +
				`  {'type': 'missing', 'loc': 'body.prompt', 'msg': 'Field required', 'input': '<dict of 3 items>'}\n` +
				"  {'type': 'value_error', 'loc': 'body', 'msg': 'Value error, Cannot set both `continue_final_message` and `add_generation_prompt` to True.', 'input': '<dict of 3 items>', 'ctx': {'error': VLLMValidationError('Cannot set both `continue_final_message` and `add_generation_prompt` to True.')}}\"," +
				`"type":"Bad Request","param":"body.prompt","code":400}}`},
		{name: "tokenize empty body", method: "POST", path: "/tokenize", body: "", wantStatus: 400, wantBody: errMissingBody},
		{name: "tokenize invalid json", method: "POST", path: "/tokenize", body: `{"prompt": }`,
			wantStatus: 400, wantBody: `{"error":{"message":"1 validation error:\n  {'type': 'json_invalid', 'loc': 'body.11', 'msg': 'JSON decode error', 'input': '<dict of 0 items>', 'ctx': {'error': 'Expecting value'}}","type":"Bad Request","param":"body.11","code":400}}`},
		{name: "tokenize invalid utf-8", method: "POST", path: "/tokenize", body: "{\"prompt\":\"\xff\"}",
			wantStatus: 400, wantBody: `{"error":{"message":"There was an error parsing the body","type":"Bad Request","param":null,"code":400}}`},
		{name: "tokenize body too large", method: "POST", path: "/tokenize", body: `{"prompt":"` + strings.Repeat("x", 2000) + `"}`,
			wantStatus: 413, wantBody: `{"error":{"message":"Request body is larger than the limit of 1024 bytes","type":"Request Entity Too Large","param":null,"code":413}}`},
		{name: "tokenize text/plain", method: "POST", path: "/tokenize", contentType: "text/plain", body: `{"prompt":"hi"}`,
			wantStatus: 400, wantBody: errUnsupportedMedia},
		{name: "tokenize text/plain bad json is not parsed", method: "POST", path: "/tokenize", contentType: "text/plain", body: `{`,
			wantStatus: 400, wantBody: errUnsupportedMedia},
		{name: "tokenize no content type valid json", method: "POST", path: "/tokenize", contentType: "-", body: `{"prompt":"hi"}`,
			wantStatus: 400, wantBody: errUnsupportedMedia},
		{name: "tokenize no content type bad json is parsed first", method: "POST", path: "/tokenize", contentType: "-", body: `[1,]`,
			wantStatus: 400, wantBody: `{"error":{"message":"1 validation error:\n  {'type': 'json_invalid', 'loc': 'body.3', 'msg': 'JSON decode error', 'input': '<dict of 0 items>', 'ctx': {'error': 'Expecting value'}}","type":"Bad Request","param":"body.3","code":400}}`},
		{name: "tokenize json suffix type is parsed but rejected", method: "POST", path: "/tokenize", contentType: "application/vnd.api+json", body: `{"prompt":"hi"}`,
			wantStatus: 400, wantBody: errUnsupportedMedia},
		{name: "tokenize no content type empty body", method: "POST", path: "/tokenize", contentType: "-", body: "",
			wantStatus: 400, wantBody: errUnsupportedMedia},

		{name: "detokenize", method: "POST", path: "/detokenize", body: `{"tokens":[2,4,7]}`,
			wantStatus: 200, wantBody: `{"prompt":"hi hi<|end|>"}`},
		{name: "detokenize lax ints and served name", method: "POST", path: "/detokenize", body: `{"tokens":["2",4.0,true],"model":"tiny"}`,
			wantStatus: 200, wantBody: `{"prompt":"hi hii"}`},
		{name: "detokenize empty", method: "POST", path: "/detokenize", body: `{"tokens":[]}`,
			wantStatus: 200, wantBody: `{"prompt":""}`},
		{name: "detokenize out of vocabulary", method: "POST", path: "/detokenize", body: `{"tokens":[2,999,8,1000000]}`,
			wantStatus: 400, wantBody: `{"error":{"message":"Token id 1000000 is out of vocabulary","type":"BadRequestError","param":null,"code":400}}`},
		{name: "detokenize first id past the vocabulary", method: "POST", path: "/detokenize", body: `{"tokens":[8]}`,
			wantStatus: 400, wantBody: `{"error":{"message":"Token id 8 is out of vocabulary","type":"BadRequestError","param":null,"code":400}}`},
		{name: "detokenize negative id", method: "POST", path: "/detokenize", body: `{"tokens":[1,-1]}`,
			wantStatus: 400, wantBody: `{"error":{"message":"1 validation error:\n  {'type': 'greater_than_equal', 'loc': 'body.tokens.1', 'msg': 'Input should be greater than or equal to 0', 'input': '-1', 'ctx': {'ge': 0}}","type":"Bad Request","param":"body.tokens.1","code":400}}`},
		{name: "detokenize id past int64", method: "POST", path: "/detokenize", body: `{"tokens":[9223372036854775808]}`,
			wantStatus: 400, wantBody: `{"error":{"message":"1 validation error:\n  {'type': 'less_than_equal', 'loc': 'body.tokens.0', 'msg': 'Input should be less than or equal to 9223372036854775807', 'input': '9223372036854775808', 'ctx': {'le': 9223372036854775807}}","type":"Bad Request","param":"body.tokens.0","code":400}}`},
		{name: "detokenize largest id", method: "POST", path: "/detokenize", body: `{"tokens":[9223372036854775807]}`,
			wantStatus: 400, wantBody: `{"error":{"message":"Token id 9223372036854775807 is out of vocabulary","type":"BadRequestError","param":null,"code":400}}`},
		{name: "detokenize missing tokens", method: "POST", path: "/detokenize", body: `{"prompt":"x"}`,
			wantStatus: 400, wantBody: `{"error":{"message":"1 validation error:\n  {'type': 'missing', 'loc': 'body.tokens', 'msg': 'Field required', 'input': '<dict of 1 items>'}","type":"Bad Request","param":"body.tokens","code":400}}`},
		{name: "detokenize tokens not a list", method: "POST", path: "/detokenize", body: `{"tokens":"2 4"}`,
			wantStatus: 400, wantBody: `{"error":{"message":"1 validation error:\n  {'type': 'list_type', 'loc': 'body.tokens', 'msg': 'Input should be a valid list', 'input': '2 4'}","type":"Bad Request","param":"body.tokens","code":400}}`},
		{name: "detokenize unknown model", method: "POST", path: "/detokenize", body: `{"tokens":[2],"model":"other"}`,
			wantStatus: 404, wantBody: "{\"error\":{\"message\":\"The model `other` does not exist.\",\"type\":\"NotFoundError\",\"param\":\"model\",\"code\":404}}"},
		{name: "detokenize empty body", method: "POST", path: "/detokenize", body: "", wantStatus: 400, wantBody: errMissingBody},
		{name: "detokenize form content type", method: "POST", path: "/detokenize", contentType: "application/x-www-form-urlencoded", body: "tokens=1",
			wantStatus: 400, wantBody: errUnsupportedMedia},

		{name: "unknown route", method: "GET", path: "/v1/nope", wantStatus: 404,
			wantBody: `{"error":{"message":"Not Found","type":"Not Found","param":null,"code":404}}`},
		{name: "wrong method", method: "GET", path: "/tokenize", wantStatus: 405,
			wantBody: `{"error":{"message":"Method Not Allowed","type":"Method Not Allowed","param":null,"code":405}}`},
		{name: "head health", method: "HEAD", path: "/health", wantStatus: 200, wantBody: ""},
		{name: "post to health", method: "POST", path: "/health", wantStatus: 405,
			wantBody: `{"error":{"message":"Method Not Allowed","type":"Method Not Allowed","param":null,"code":405}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestDefaultServedNameIsModelPath(t *testing.T) {
	h, _ := testServer(t, func(c *Config) { c.ServedModelNames = nil; c.ModelPath = "/models/tiny" })
	httpCase{method: "POST", path: "/tokenize", body: `{"prompt":"hi","model":"/models/tiny"}`,
		wantStatus: 200, wantBody: `{"count":1,"max_model_len":128,"tokens":[2],"token_strs":null}`}.run(t, h)
	httpCase{method: "GET", path: "/v1/models", wantStatus: 200, wantRegexp: true,
		wantBody: `\{"object":"list","data":\[\{"id":"/models/tiny","object":"model","created":\d+,"owned_by":"vllm","root":"/models/tiny",.*\]\}\]\}`}.run(t, h)
	// vLLM sanitises paths out of error messages, even this one.
	httpCase{method: "POST", path: "/tokenize", body: `{"prompt":"hi","model":"/home/x/y"}`,
		wantStatus: 404, wantBody: "{\"error\":{\"message\":\"The model `<path>` does not exist.\",\"type\":\"NotFoundError\",\"param\":\"model\",\"code\":404}}"}.run(t, h)
}

func TestNewRejectsBadConfig(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New without a model succeeded")
	}
	if _, err := New(Config{Model: tinyModel(t), ServedModelNames: []string{"a", ""}}); err == nil {
		t.Error("New with an empty served name succeeded")
	}
}

func TestDetokenizeCleansUpSpacesWhenConfigured(t *testing.T) {
	yes := true
	h, _ := testServer(t, func(c *Config) { c.Model.TokenizerConfig.CleanUpTokenizationSpaces = &yes })
	// " ." is Ġ. (6): transformers' clean-up removes the space.
	httpCase{method: "POST", path: "/detokenize", body: `{"tokens":[2,6,4]}`, wantStatus: 200, wantBody: `{"prompt":"hi. hi"}`}.run(t, h)
	h, _ = testServer(t, nil)
	httpCase{method: "POST", path: "/detokenize", body: `{"tokens":[2,6,4]}`, wantStatus: 200, wantBody: `{"prompt":"hi . hi"}`}.run(t, h)
}

func TestRequestID(t *testing.T) {
	h, _ := testServer(t, nil)
	req := httptest.NewRequest("GET", "/health", nil)
	req.Header.Set("X-Request-Id", "client-chosen-id")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if got := rec.Header().Get("X-Request-Id"); got != "client-chosen-id" {
		t.Errorf("echoed X-Request-Id = %q", got)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/nowhere", nil))
	if got := rec.Header().Get("X-Request-Id"); !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(got) {
		t.Errorf("generated X-Request-Id = %q, want 32 hex digits", got)
	}
}

func TestAccessLogHasNoBodies(t *testing.T) {
	h, logs := testServer(t, nil)
	const secret = "hi hi hi hi hi"
	req := httptest.NewRequest("POST", "/tokenize?prompt=leak", strings.NewReader(`{"prompt":"`+secret+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "rid-1")
	h.ServeHTTP(httptest.NewRecorder(), req)
	req = httptest.NewRequest("POST", "/tokenize", strings.NewReader(`{"prompt":5,"x":"`+secret+`"}`))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(httptest.NewRecorder(), req)

	out := logs.String()
	for _, want := range []string{`"msg":"request"`, `"request_id":"rid-1"`, `"method":"POST"`, `"path":"/tokenize"`, `"status":200`, `"status":400`} {
		if !strings.Contains(out, want) {
			t.Errorf("access log lacks %s:\n%s", want, out)
		}
	}
	for _, leak := range []string{secret, "leak", "4,4,4"} {
		if strings.Contains(out, leak) {
			t.Errorf("access log contains request data %q:\n%s", leak, out)
		}
	}
}

func TestPanicBecomes500(t *testing.T) {
	s, err := newServer(Config{Model: tinyModel(t), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	logs := &bytes.Buffer{}
	s.log = slog.New(slog.NewTextHandler(logs, nil))
	h := requestID(s.accessLog(s.recoverPanics(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom")
	}))))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 500 {
		t.Fatalf("status = %d", rec.Code)
	}
	want := `{"error":{"message":"Internal Server Error","type":"InternalServerError","param":null,"code":500}}`
	if rec.Body.String() != want {
		t.Errorf("body = %s", rec.Body)
	}
	if !strings.Contains(logs.String(), "handler panic") || !strings.Contains(logs.String(), "status=500") {
		t.Errorf("panic not logged with its 500:\n%s", logs)
	}

	// http.ErrAbortHandler keeps its meaning: the panic propagates.
	abort := s.recoverPanics(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }))
	func() {
		defer func() {
			if v := recover(); v != http.ErrAbortHandler {
				t.Errorf("recovered %v, want http.ErrAbortHandler", v)
			}
		}()
		abort.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	}()
}

func TestModelsCreatedIsRequestTime(t *testing.T) {
	s, err := newServer(Config{Model: tinyModel(t), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return time.Unix(1700000000, 0) }
	rec := httptest.NewRecorder()
	s.routes().ServeHTTP(rec, httptest.NewRequest("GET", "/v1/models", nil))
	if n := strings.Count(rec.Body.String(), `"created":1700000000`); n != 2 {
		t.Errorf("want card and permission created at request time, got %d matches: %s", n, rec.Body)
	}
}

func TestDisableAccessLogKeepsErrorsAndMetrics(t *testing.T) {
	s, err := newServer(Config{Model: tinyModel(t), DisableAccessLog: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	logs := &bytes.Buffer{}
	s.log = slog.New(slog.NewTextHandler(logs, nil))
	h := requestID(s.accessLog(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/v1/models", nil))
	if strings.Contains(logs.String(), "msg=request") {
		t.Fatalf("access log line despite DisableAccessLog:\n%s", logs)
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/fail", nil))
	if !strings.Contains(logs.String(), "status=503") {
		t.Fatalf("5xx not logged with DisableAccessLog:\n%s", logs)
	}
	var m bytes.Buffer
	if err := s.writeMetrics(&m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.String(), "vrender_requests_total{") {
		t.Fatalf("requests not counted with DisableAccessLog:\n%s", m.String())
	}
}
