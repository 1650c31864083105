package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/parsers"
)

// derenderServer serves qwen3 with a 64-token context, the qwen3 and hermes
// parsers and --max-logprobs 2, so every bound is cheap to cross.
func derenderServer(t *testing.T, withParser, compat bool) http.Handler {
	t.Helper()
	m, err := model.Load(context.Background(), testenv.ModelDir(t, "qwen3"), model.Options{MaxModelLen: 64})
	if err != nil {
		t.Fatal(err)
	}
	cfg := derender.Config{MaxLogprobs: 2, CacheSize: 8, ReasoningFieldCompat: compat}
	if withParser {
		cfg.Parsers = parsers.Config{ReasoningParser: "qwen3", ToolParser: "hermes", EnableAutoToolChoice: true}
	}
	d, err := derender.New(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Model: m, ServedModelNames: []string{"m"}, Logger: discardLogger(), Derender: d})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func post(h http.Handler, path, body string) (int, string) {
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

const (
	chatReq = `{"messages":[{"role":"user","content":"hi"}]}`
	gen1    = `{"request_id":"r","choices":[{"index":0,"token_ids":[9707,1879],"finish_reason":"stop"}]}`
)

func TestDerenderErrors(t *testing.T) {
	parsed := derenderServer(t, true, false)
	plain := derenderServer(t, false, false)
	long := strings.TrimSuffix(strings.Repeat("9707,", 65), ",")
	cases := []struct {
		name, path, body string
		plain            bool
		status           int
		want             string
	}{
		{"unknown model", "/v1/chat/completions/derender", `{"model":"x","chat_request":` + chatReq + `,"generate_response":` + gen1 + `}`, false, 404, "The model `x` does not exist."},
		{"missing generate_response", "/v1/chat/completions/derender", `{"chat_request":` + chatReq + `}`, false, 400, "generate_response"},
		{"missing chat_request with a parser", "/v1/chat/completions/derender", `{"generate_response":` + gen1 + `}`, false, 400, "chat_request is required"},
		{"empty token_ids", "/v1/chat/completions/derender", `{"chat_request":` + chatReq + `,"generate_response":{"request_id":"r","choices":[{"index":0,"token_ids":[]}]}}`, false, 400, "choice 0 has empty or null token_ids"},
		{"negative token id", "/v1/chat/completions/derender", `{"chat_request":` + chatReq + `,"generate_response":{"request_id":"r","choices":[{"index":0,"token_ids":[-1]}]}}`, false, 400, "token_ids must not contain negative values"},
		{"token_ids past max_model_len", "/v1/chat/completions/derender", `{"chat_request":` + chatReq + `,"generate_response":{"request_id":"r","choices":[{"index":0,"token_ids":[` + long + `]}]}}`, false, 400, "token_ids length (65) in choice 0 exceeds max_model_len (64)."},
		{"output_mode text", "/v1/chat/completions/derender", `{"chat_request":` + chatReq + `,"generate_response":{"request_id":"r","output_mode":"text","choices":[{"index":0,"token_ids":[1]}]}}`, false, 400, "output_mode"},
		{"top_logprobs past --max-logprobs", "/v1/chat/completions/derender", `{"chat_request":` + chatReq + `,"generate_response":{"request_id":"r","choices":[{"index":0,"token_ids":[1],"logprobs":{"content":[{"token_id":1,"logprob":-0.1,"top_logprobs":[{"token_id":1,"logprob":-0.1},{"token_id":2,"logprob":-2},{"token_id":3,"logprob":-3}]}]}}]}}`, false, 400, "top_logprobs count (3) in choice 0 exceeds max_logprobs (2)."},
		{"stream: two choices", "/v1/chat/completions/derender", `{"stream":true,"prompt_token_ids":[1],"chat_request":` + chatReq + `,"generate_chunk":{"request_id":"r","choices":[{"index":0,"token_ids":[1]},{"index":1,"token_ids":[2]}]}}`, false, 400, "derender_chat_stream expects at most one choice per chunk"},
		{"stream: missing chat_request", "/v1/chat/completions/derender", `{"stream":true,"prompt_token_ids":[1],"generate_chunk":{"request_id":"r","choices":[{"index":0,"token_ids":[1]}]}}`, false, 400, "chat_request is required for streaming chat derender"},
		{"stream: missing prompt_token_ids", "/v1/chat/completions/derender", `{"stream":true,"chat_request":` + chatReq + `,"generate_chunk":{"request_id":"r","choices":[{"index":0,"token_ids":[1]}]}}`, false, 400, "prompt_token_ids is required"},
		{"stream: chunk lens do not sum", "/v1/chat/completions/derender", `{"stream":true,"prompt_token_ids":[1],"chat_request":` + chatReq + `,"stream_state":{"output_token_ids":[1,2,3],"output_chunk_lens":[1,1]},"generate_chunk":{"request_id":"r","choices":[{"index":0,"token_ids":[1]}]}}`, false, 400, "output_chunk_lens sum (2) does not match output_token_ids length (3)"},
		{"stream: zero chunk len", "/v1/chat/completions/derender", `{"stream":true,"prompt_token_ids":[1],"chat_request":` + chatReq + `,"stream_state":{"output_token_ids":[],"output_chunk_lens":[0]},"generate_chunk":{"request_id":"r","choices":[]}}`, false, 400, "Input should be greater than 0"},
		{"stream: prompt+history+delta past max_model_len", "/v1/chat/completions/derender", `{"stream":true,"prompt_token_ids":[` + strings.TrimSuffix(strings.Repeat("1,", 60), ",") + `],"chat_request":` + chatReq + `,"stream_state":{"output_token_ids":[1,2,3],"output_chunk_lens":[3]},"generate_chunk":{"request_id":"r","choices":[{"index":0,"token_ids":[1,2]}]}}`, false, 400, "exceeds max_model_len (64)"},
		{"stream: prev_tokens too long", "/v1/chat/completions/derender", `{"stream":true,"stream_state":{"prev_tokens":[` + strings.TrimSuffix(strings.Repeat(`"a",`, 1025), ",") + `]},"generate_chunk":{"request_id":"r","choices":[]}}`, true, 400, "prev_tokens length (1025) exceeds maximum (1024)"},
		{"stream: corrupt detok offsets", "/v1/chat/completions/derender", `{"stream":true,"stream_state":{"prev_tokens":["a"],"prefix_offset":0,"read_offset":5},"generate_chunk":{"request_id":"r","choices":[{"index":0,"token_ids":[1]}]}}`, true, 400, "invalid stream_state"},
		{"completions: empty generate_responses", "/v1/completions/derender", `{"generate_responses":[]}`, true, 400, "generate_responses must not be empty"},
		{"completions: prompt_tokens length", "/v1/completions/derender", `{"generate_responses":[` + gen1 + `],"prompt_tokens":[1,2]}`, true, 400, "prompt_tokens length (2) must equal generate_responses length (1)"},
		{"completions stream: two choices", "/v1/completions/derender", `{"stream":true,"generate_chunk":{"request_id":"r","choices":[{"index":0,"token_ids":[1]},{"index":1,"token_ids":[2]}]}}`, true, 400, "derender_completion_stream expects at most one choice per chunk"},
		{"completions: unknown model", "/v1/completions/derender", `{"model":"x","generate_responses":[` + gen1 + `]}`, true, 404, "does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := parsed
			if c.plain {
				h = plain
			}
			status, body := post(h, c.path, c.body)
			if status != c.status || !strings.Contains(body, c.want) {
				t.Fatalf("got %d %s\nwant %d containing %q", status, body, c.status, c.want)
			}
		})
	}
}

func TestDerenderLogprobsAndShapes(t *testing.T) {
	h := derenderServer(t, false, false)
	// Both engine shapes: integer token_id and "token_id:N" placeholders.
	body := `{"generate_response":{"request_id":"r","choices":[{"index":0,"token_ids":[9707,1879],"finish_reason":"length",` +
		`"logprobs":{"content":[{"token_id":9707,"logprob":-0.5,"top_logprobs":[{"token_id":9707,"logprob":-0.5}]},` +
		`{"token":"token_id:1879","logprob":-1.5,"top_logprobs":[]}]}}]},"prompt_tokens":3}`
	status, got := post(h, "/v1/chat/completions/derender", body)
	want := `"choices":[{"index":0,"message":{"role":"assistant","content":"Hello world","refusal":null,"annotations":null,"audio":null,"function_call":null,"reasoning":null},` +
		`"logprobs":{"content":[{"token":"Hello","logprob":-0.5,"bytes":[72,101,108,108,111],"top_logprobs":[{"token":"Hello","logprob":-0.5,"bytes":[72,101,108,108,111]}]},` +
		`{"token":" world","logprob":-1.5,"bytes":[32,119,111,114,108,100],"top_logprobs":[]}]},"finish_reason":"length","stop_reason":null,"token_ids":null}],` +
		`"service_tier":null,"system_fingerprint":null,"usage":{"prompt_tokens":3,"total_tokens":5,"completion_tokens":2,"prompt_tokens_details":null}`
	if status != 200 || !strings.Contains(got, want) || !strings.HasPrefix(got, `{"id":"r","object":"chat.completion","created":`) {
		t.Fatalf("got %d %s\nwant %s", status, got, want)
	}

	// Completions stream: text_offset stays absolute across calls.
	status, got = post(h, "/v1/completions/derender", `{"stream":true,"generate_chunk":{"request_id":"r","choices":[{"index":0,"token_ids":[9707],"logprobs":{"content":[{"token_id":9707,"logprob":-1,"top_logprobs":[]}]}}]}}`)
	if status != 200 {
		t.Fatalf("%d %s", status, got)
	}
	var first struct {
		StreamState json.RawMessage `json:"stream_state"`
	}
	if err := json.Unmarshal([]byte(got), &first); err != nil {
		t.Fatal(err)
	}
	status, got = post(h, "/v1/completions/derender", `{"stream":true,"stream_state":`+string(first.StreamState)+
		`,"generate_chunk":{"request_id":"r","choices":[{"index":0,"token_ids":[1879],"finish_reason":"length","logprobs":{"content":[{"token_id":1879,"logprob":-2,"top_logprobs":[{"token_id":1879,"logprob":-2}]}]}}]}}`)
	want = `"choices":[{"index":0,"text":" world","logprobs":{"text_offset":[5],"token_logprobs":[-2],"tokens":[" world"],"top_logprobs":[{" world":-2}]},"finish_reason":"length","stop_reason":null,"token_ids":null}]`
	if status != 200 || !strings.Contains(got, want) || !strings.Contains(got, `"logprob_text_offset":11`) {
		t.Fatalf("got %d %s\nwant %s", status, got, want)
	}
}

func TestDerenderReasoningCompat(t *testing.T) {
	h := derenderServer(t, true, true)
	// "<think>a</think>b" in qwen3 ids: 151667 64 151668 65.
	status, got := post(h, "/v1/chat/completions/derender", `{"chat_request":`+chatReq+
		`,"generate_response":{"request_id":"r","choices":[{"index":0,"token_ids":[151667,64,151668,65,151645]}]}}`)
	if status != 200 || !strings.Contains(got, `"content":"b"`) || !strings.Contains(got, `"reasoning":"a","reasoning_content":"a"`) ||
		!strings.Contains(got, `"finish_reason":"stop"`) {
		t.Fatalf("got %d %s", status, got)
	}
}
