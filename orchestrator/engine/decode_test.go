package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/vrender/vrender/protocol"
)

// Events as vLLM's tokens-only engine writes them (vllm-api.md §4.1).
var (
	eventOneToken = `{"request_id":"generate-tokens-chatcmpl-8c1d","usage":null,"output_mode":"tokens","choices":[{"index":0,"finish_reason":null,"token_ids":[151667],"weight_versions":null,"logprobs":null,"routed_experts":null,"sampling_mask":null}],"prompt_token_ids":null,"kv_transfer_params":null}`
	eventFinish   = `{"request_id":"generate-tokens-chatcmpl-8c1d","usage":null,"output_mode":"tokens","choices":[{"index":0,"finish_reason":"stop","token_ids":[13,151645],"weight_versions":[{"version":"default","start":0,"end":21}],"logprobs":null}]}`
	eventUsage    = `{"request_id":"generate-tokens-chatcmpl-8c1d","choices":[],"usage":{"prompt_tokens":15,"total_tokens":36,"completion_tokens":21,"prompt_tokens_details":{"cached_tokens":0}}}`
	eventLogprobs = `{"request_id":"r","choices":[{"index":1,"finish_reason":null,"token_ids":[262],"logprobs":{"content":[{"token_id":262,"logprob":-0.1,"rank":1,"top_logprobs":[{"token_id":262,"logprob":-0.1,"rank":1},{"token_id":7,"logprob":-2.5,"rank":2}]}]}}]}`
	eventOldLogps = `{"request_id":"r","choices":[{"index":0,"token_ids":[5],"logprobs":{"content":[{"token":"token_id:5","logprob":-9999.0,"bytes":null,"top_logprobs":[]}]}}]}`
	eventEcho     = `{"request_id":"r","choices":[{"index":0,"token_ids":[1,2,3]}],"prompt_token_ids":[9,8,7],"kv_transfer_params":{"do_remote_decode":true,"remote_host":"10.0.0.1"},"metrics":{"ttft":0.01},"prompt_logprobs":[null,{"1":{"logprob":-1}}]}`
)

// marshalForCompare renders a response for comparison: GenerateChoice
// carries an unexported flag the fast path cannot set (and streaming
// never reads), so values are compared by their JSON.
func marshalForCompare(t testing.TB, r *protocol.GenerateResponse) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDecodeFastMatchesEncodingJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		fast bool // whether the fast path must take it
	}{
		{"one token", eventOneToken, true},
		{"finish with weight versions", eventFinish, true},
		{"usage", eventUsage, true},
		{"new logprobs", eventLogprobs, true},
		{"old logprobs", eventOldLogps, true},
		{"echoes and raw members", eventEcho, true},
		{"whitespace", " {\n \"request_id\" : \"r\" ,\t\"choices\" : [ { \"index\" : 0 , \"token_ids\" : [ 1 , 2 ] } ] }\r\n", true},
		{"empty object", `{}`, true},
		{"empty token list", `{"choices":[{"token_ids":[]}]}`, true},
		{"null members", `{"request_id":null,"choices":null,"usage":null,"output_mode":null,"prompt_token_ids":null}`, true},
		{"null inside usage", `{"usage":{"prompt_tokens":null,"completion_tokens":3}}`, true},
		{"negative zero index", `{"choices":[{"index":-0}]}`, true},
		{"unicode request id", `{"request_id":"généré"}`, true},
		{"unknown nested member", `{"x":{"a":[1,2.5e-3,true,false,null,"s\"\\\u00e9"]},"choices":[]}`, true},
		{"many choices", `{"choices":[{"index":0,"token_ids":[1]},{"index":1,"token_ids":[2],"finish_reason":"length"}]}`, true},
		{"logprob nulls", `{"choices":[{"logprobs":{"content":[{"token_id":1,"logprob":null,"rank":null,"top_logprobs":null},{"token":null,"bytes":[]}]}}]}`, true},
		{"logprobs content null", `{"choices":[{"logprobs":{"content":null}}]}`, true},
		{"logprob exponent", `{"choices":[{"logprobs":{"content":[{"token_id":1,"logprob":-1.5e-3,"top_logprobs":[{"token_id":2,"logprob":-0}]}]}}]}`, true},
		{"logprob out of range", `{"choices":[{"logprobs":{"content":[{"logprob":1e400}]}}]}`, false},
		{"escaped logprob token", `{"choices":[{"logprobs":{"content":[{"token":"\u0041","logprob":-1}]}}]}`, true},
		{"escaped request id", `{"request_id":"a\nb"}`, true},
		{"surrogates", `{"request_id":"\ud83d\ude00\ud800\u0041\udc00"}`, true},
		{"escaped key", `{"request\u005fid":"x"}`, true},
		{"upper-case key", `{"Request_ID":"x"}`, false},
		{"kelvin sign key", "{\"\u212a\":1}", false},
		{"duplicate member", `{"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}}`, false},
		{"float token id", `{"choices":[{"token_ids":[1.0]}]}`, false},
		{"invalid utf-8 id", "{\"request_id\":\"a\xffb\xed\xa0\x80\"}", true},
		{"null choice element", `{"choices":[null]}`, false},
		{"top-level null", `null`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d eventDecoder
			fastResp := new(protocol.GenerateResponse)
			fastErr := d.fast([]byte(tt.in), fastResp)
			if tt.fast && fastErr != nil {
				t.Fatalf("fast path declined: %v", fastErr)
			}
			if !tt.fast && fastErr == nil {
				t.Fatalf("fast path accepted input it must leave to encoding/json")
			}
			got, err := d.decode([]byte(tt.in))
			want := new(protocol.GenerateResponse)
			wantErr := json.Unmarshal([]byte(tt.in), want)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("decode err = %v, encoding/json err = %v", err, wantErr)
			}
			if err == nil && marshalForCompare(t, got) != marshalForCompare(t, want) {
				t.Errorf("decode = %s\nencoding/json = %s", marshalForCompare(t, got), marshalForCompare(t, want))
			}
		})
	}
}

func TestDecodeValues(t *testing.T) {
	var d eventDecoder
	r, err := d.decode([]byte(eventFinish))
	if err != nil {
		t.Fatal(err)
	}
	if r.RequestID != "generate-tokens-chatcmpl-8c1d" || len(r.Choices) != 1 || *r.Choices[0].FinishReason != "stop" ||
		len(r.Choices[0].TokenIDs) != 2 || r.Choices[0].TokenIDs[1] != 151645 || *r.OutputMode != "tokens" {
		t.Errorf("decoded %+v", r)
	}
	u, err := d.decode([]byte(eventUsage))
	if err != nil {
		t.Fatal(err)
	}
	if u.Usage == nil || *u.Usage.PromptTokens != 15 || *u.Usage.CompletionTokens != 21 || u.Choices == nil || len(u.Choices) != 0 {
		t.Errorf("usage event decoded %+v", u)
	}
	// Decoded values must not alias the event buffer, which the SSE
	// reader reuses.
	buf := []byte(eventEcho)
	e, err := d.decode(buf)
	if err != nil {
		t.Fatal(err)
	}
	before := marshalForCompare(t, e)
	for i := range buf {
		buf[i] = ' '
	}
	if after := marshalForCompare(t, e); after != before {
		t.Errorf("response changed with the buffer: %s", after)
	}
}

func TestDecodeErrorEvents(t *testing.T) {
	tests := []struct {
		name         string
		in           string
		status       int
		engineStatus int
		msg          string
	}{
		{"vllm 500", `{"error":{"message":"engine died","type":"InternalServerError","param":null,"code":500}}`, http.StatusBadGateway, 500, "engine died"},
		{"vllm 400", `{"error":{"message":"bad token","type":"BadRequestError","param":null,"code":400}}`, http.StatusBadRequest, 400, "bad token"},
		{"no code", `{"error":{"message":"oops"}}`, http.StatusBadGateway, 0, "oops"},
		{"string code", `{"error":{"message":"busy","code":"503"}}`, http.StatusServiceUnavailable, 503, "busy"},
		{"string error", `{"error":"Unauthorized"}`, http.StatusBadGateway, 0, "Unauthorized"},
		{"malformed error", `{"error":[1]}`, http.StatusBadGateway, 0, "malformed error event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d eventDecoder
			_, err := d.decode([]byte(tt.in))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.Status != tt.status || e.EngineStatus != tt.engineStatus || !bytes.Contains([]byte(e.Message), []byte(tt.msg)) {
				t.Errorf("got %+v", e)
			}
		})
	}
}

func TestDecodeMalformedEvent(t *testing.T) {
	for _, in := range []string{`{"choices":[{"token_ids":["a"]}]}`, `{"request_id":`, `[1]`, `not json`} {
		var d eventDecoder
		_, err := d.decode([]byte(in))
		var e *Error
		if !errors.As(err, &e) || e.Status != http.StatusBadGateway {
			t.Errorf("decode(%q) err = %v, want 502 *Error", in, err)
		}
	}
}
