package enginesim

import (
	"net/http"
	"strings"
	"testing"
)

func TestGenerateValidation(t *testing.T) {
	_, srv := newServer(t, Config{MaxNumSeqs: 4, ServedModelAliases: []string{"qwen3-alias"}})
	url := srv.URL + "/inference/v1/generate"
	tests := []struct {
		name       string
		body       string
		wantStatus int
		want       string // exact body when it starts with '{', else a substring
	}{
		{"missing token_ids", `{"sampling_params":{}}`, 400,
			`"param":"body.token_ids"`},
		{"empty token_ids", `{"token_ids":[],"sampling_params":{}}`, 400,
			`'type': 'too_short', 'loc': 'body.token_ids', 'msg': 'List should have at least 1 item after validation, not 0'`},
		{"negative token id", `{"token_ids":[1,-2],"sampling_params":{}}`, 400,
			`'msg': 'Value error, token_ids must not contain negative values'`},
		{"token id not an int", `{"token_ids":[1,"x"],"sampling_params":{}}`, 400,
			`'loc': 'body.token_ids.1'`},
		{"missing sampling_params", `{"token_ids":[1]}`, 400,
			`'type': 'missing', 'loc': 'body.sampling_params', 'msg': 'Field required'`},
		{"bad temperature", `{"token_ids":[1],"sampling_params":{"temperature":-1}}`, 400,
			`temperature must be non-negative, got -1.0. (parameter=temperature, value=-1.0)`},
		{"bad output_mode literal", `{"token_ids":[1],"sampling_params":{},"output_mode":"words"}`, 400,
			`Input should be 'tokens' or 'text'`},
		{"reasoning_parser_kwargs extra", `{"token_ids":[1],"sampling_params":{},"reasoning_parser_kwargs":{"x":1}}`, 400,
			`'type': 'extra_forbidden', 'loc': 'body.reasoning_parser_kwargs.x'`},
		{"stop strings", `{"token_ids":[1],"sampling_params":{"stop":["x"]}}`, 400,
			`{"error":{"message":"stop strings are not supported on a --tokens-only server because detokenization is disabled. Check stop strings on the coordinator, or use stop_token_ids.","type":"BadRequestError","param":null,"code":400}}`},
		{"n above max_num_seqs", `{"token_ids":[1],"sampling_params":{"n":5}}`, 400,
			`{"error":{"message":"sampling_params.n must be at most the server's max_num_seqs (4), got 5.","type":"BadRequestError","param":null,"code":400}}`},
		{"output_mode text", `{"token_ids":[1],"sampling_params":{},"output_mode":"text"}`, 400,
			`"message":"output_mode='text' requires a tokenizer, but this server does not load one`},
		{"text without detokenize", `{"token_ids":[1],"sampling_params":{"detokenize":false},"output_mode":"text"}`, 400,
			`output_mode='text' requires sampling_params.detokenize to be true`},
		{"out of vocabulary", `{"token_ids":[1,999999999],"sampling_params":{}}`, 400,
			`{"error":{"message":"Token id 999999999 is out of vocabulary","type":"BadRequestError","param":null,"code":400}}`},
		{"unknown model", `{"token_ids":[1],"sampling_params":{},"model":"gpt-4"}`, 404,
			`{"error":{"message":"The model ` + "`gpt-4`" + ` does not exist.","type":"NotFoundError","param":"model","code":404}}`},
		{"invalid JSON", `{"token_ids":[1],`, 400, `'type': 'json_invalid'`},
		{"not an object", `[1,2]`, 400, `Input should be a valid dictionary or instance of GenerateRequest`},
		{"unknown fields ignored", `{"token_ids":[1],"sampling_params":{"max_tokens":1},"whatever":true}`, 200, `"finish_reason":"length"`},
		{"served model accepted", `{"token_ids":[1],"sampling_params":{"max_tokens":1},"model":"qwen3"}`, 200, `"model":"qwen3"`},
		{"alias accepted, first name reported", `{"token_ids":[1],"sampling_params":{"max_tokens":1},"model":"qwen3-alias"}`, 200, `"model":"qwen3"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := post(t, url, tc.body)
			if status != tc.wantStatus {
				t.Fatalf("status %d, want %d; body %s", status, tc.wantStatus, body)
			}
			if strings.HasPrefix(tc.want, "{") {
				if body != tc.want {
					t.Fatalf("body\n got %s\nwant %s", body, tc.want)
				}
			} else if !strings.Contains(body, tc.want) {
				t.Fatalf("body %s\nlacks %s", body, tc.want)
			}
		})
	}
}

func TestGenerateRejectsNonJSONContentType(t *testing.T) {
	_, srv := newServer(t, Config{})
	resp, err := http.Post(srv.URL+"/inference/v1/generate", "text/plain", strings.NewReader(`{"token_ids":[1],"sampling_params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", resp.StatusCode)
	}
}

func TestAbortEndpointValidation(t *testing.T) {
	_, srv := newServer(t, Config{})
	for _, path := range []string{"/inference/v1/abort_requests", "/abort_requests"} {
		status, _, body := post(t, srv.URL+path, `{}`)
		if status != 400 || body != `{"error":{"message":"Missing 'request_ids' in request body","type":"Bad Request","param":null,"code":400}}` {
			t.Errorf("%s without request_ids: %d %s", path, status, body)
		}
		status, _, body = post(t, srv.URL+path, `{"request_ids":["generate-tokens-x"]}`)
		if status != 200 || body != "" {
			t.Errorf("%s: %d %q, want empty 200", path, status, body)
		}
	}
}
