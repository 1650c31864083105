package engine

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const nonStreamResponse = `{"request_id":"generate-tokens-req-1","model":"qwen3","created":1,"output_mode":"tokens",
"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"prompt_tokens_details":null},
"prompt_logprobs":null,"prompt_token_id_logprobs":null,"prompt_token_ids":null,"mm_placeholders":null,"metrics":null,
"kv_transfer_params":{"remote_block_ids":[1]},"ec_transfer_params":null,
"choices":[{"index":0,"finish_reason":"length","token_ids":[7,8],"logprobs":null,"routed_experts":null,"sampling_mask":null,
"weight_versions":[{"version":"default","start":0,"end":2}]},{"index":1,"token_ids":[9]}]}`

func TestGenerate(t *testing.T) {
	es := newEngineServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, nonStreamResponse)
	})
	c := newTestClient(t, es.URL, Options{})
	resp, err := c.Generate(context.Background(), testRequest(), "req-1")
	if err != nil {
		t.Fatal(err)
	}
	if resp.RequestID != "generate-tokens-req-1" || len(resp.Choices) != 2 || *resp.Choices[0].FinishReason != "length" ||
		resp.Choices[0].TokenIDs[1] != 8 || *resp.Usage.CompletionTokens != 2 || string(resp.KVTransferParams) != `{"remote_block_ids":[1]}` {
		t.Errorf("resp = %+v", resp)
	}
	if resp.Choices[1].FinishReason == nil || *resp.Choices[1].FinishReason != "stop" {
		t.Errorf("choice without finish_reason: %v, want stop", resp.Choices[1].FinishReason)
	}
	b := es.body(0)
	if string(b["stream"]) != "false" || string(b["stream_options"]) != "null" || string(b["request_id"]) != `"req-1"` {
		t.Errorf("body: stream %s stream_options %s request_id %s", b["stream"], b["stream_options"], b["request_id"])
	}
	if h := es.header(0); h.Get("X-Request-Id") != "req-1" || h.Get("Authorization") != "" {
		t.Errorf("headers %v", h)
	}
}

func TestGenerateErrors(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		es := newEngineServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			io.WriteString(w, `{"request_id":`)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		})
		c := newTestClient(t, es.URL, Options{FirstEventTimeout: 100 * time.Millisecond})
		var err error
		within(t, 3*time.Second, "generate timeout", func() { _, err = c.Generate(context.Background(), testRequest(), "req-1") })
		if e := asError(t, err); e.Status != http.StatusGatewayTimeout || !strings.Contains(e.Message, "did not answer within") {
			t.Errorf("error = %+v", e)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		es := newEngineServer(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		c := newTestClient(t, es.URL, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		var err error
		within(t, 3*time.Second, "generate cancel", func() { _, err = c.Generate(ctx, testRequest(), "req-1") })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("truncated body", func(t *testing.T) {
		es := newEngineServer(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"request_id":"x","choi`)
		})
		c := newTestClient(t, es.URL, Options{})
		_, err := c.Generate(context.Background(), testRequest(), "req-1")
		if e := asError(t, err); e.Status != http.StatusBadGateway {
			t.Errorf("error = %+v", e)
		}
	})
	t.Run("error body with 200", func(t *testing.T) {
		es := newEngineServer(t, func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, `{"error":{"message":"bad","code":400}}`)
		})
		c := newTestClient(t, es.URL, Options{})
		_, err := c.Generate(context.Background(), testRequest(), "req-1")
		if e := asError(t, err); e.Status != http.StatusBadRequest || e.Message != "bad" {
			t.Errorf("error = %+v", e)
		}
	})
}
