package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/parsers"
)

const ckptBenchChatRequest = `{"messages":[{"role":"user","content":"write it"}],"tools":[{"type":"function","function":{"name":"write_file","parameters":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}}}]}`

var ckptBenchPrompt = []int{151644, 872, 198, 4934, 432, 151645, 198, 151644, 77091, 198}

// ckptBenchOutput is about n qwen3 tokens: reasoning, then a hermes call
// with a long argument, then <|im_end|>.
func ckptBenchOutput(m *model.Model, n int) []int {
	build := func(k int) []int {
		var b strings.Builder
		b.WriteString("<think>\n")
		for i := range k {
			fmt.Fprintf(&b, "Step %d: check the file layout. ", i)
		}
		b.WriteString("\n</think>\n\n<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"main.go\", \"content\": \"")
		for i := range k {
			fmt.Fprintf(&b, "x%d := f(%d)\\n", i, i)
		}
		b.WriteString("\"}}\n</tool_call>")
		return append(m.Tokenizer.Encode(b.String(), false), 151645)
	}
	per := len(build(100)) / 100
	return build(n / per)
}

func ckptBenchHandler(b *testing.B) (http.Handler, *model.Model) {
	m := testmodel.Load(b, "qwen3")
	d, err := derender.New(m, derender.Config{Parsers: parsers.Config{ReasoningParser: "qwen3", ToolParser: "hermes",
		EnableAutoToolChoice: true}, MaxLogprobs: 20})
	if err != nil {
		b.Fatal(err)
	}
	h, err := New(Config{Model: m, ServedModelNames: []string{"m"}, Logger: discardLogger(), Derender: d})
	if err != nil {
		b.Fatal(err)
	}
	return h, m
}

func ckptPost(b *testing.B, h http.Handler, body []byte) []byte {
	req := httptest.NewRequest("POST", "/v1/chat/completions/derender", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
	return rec.Body.Bytes()
}

// BenchmarkDerenderHTTPCheckpoint streams whole outputs one token per
// call through the HTTP handler in process (httptest: no sockets, so this is
// the handler's cost, not what a client pays over HTTP) on the checkpoint path (the client echoes
// only the checkpoint, no history, no prompt after the first call), beside
// the batch endpoint for the same output.
func BenchmarkDerenderHTTPCheckpoint(b *testing.B) {
	h, m := ckptBenchHandler(b)
	for _, n := range []int{1 << 10, 16 << 10} {
		ids := ckptBenchOutput(m, n)
		b.Run(fmt.Sprintf("batch/%dk", n>>10), func(b *testing.B) {
			body, _ := json.Marshal(map[string]any{"model": "m", "prompt_token_ids": ckptBenchPrompt,
				"chat_request":      json.RawMessage(ckptBenchChatRequest),
				"generate_response": map[string]any{"request_id": "r", "choices": []any{map[string]any{"index": 0, "token_ids": ids, "finish_reason": "stop"}}}})
			for b.Loop() {
				ckptPost(b, h, body)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ids)), "ns/token")
		})
		b.Run(fmt.Sprintf("stream-checkpoint/%dk", n>>10), func(b *testing.B) {
			maxBody := 0
			// Only the server is timed: the client's request building and
			// reply decoding run with the timer stopped.
			for b.Loop() {
				b.StopTimer()
				state := json.RawMessage("null")
				for i, id := range ids {
					body := map[string]any{"stream": true, "model": "m", "chat_request": json.RawMessage(ckptBenchChatRequest),
						"stream_state": state}
					var fr any
					if i == len(ids)-1 {
						fr = "stop"
					}
					body["generate_chunk"] = map[string]any{"request_id": "r", "choices": []any{map[string]any{"index": 0, "token_ids": []int{id}, "finish_reason": fr}}}
					if i == 0 {
						body["prompt_token_ids"] = ckptBenchPrompt
					}
					raw, _ := json.Marshal(body)
					maxBody = max(maxBody, len(raw))
					b.StartTimer()
					reply := ckptPost(b, h, raw)
					b.StopTimer()
					var res struct {
						StreamState struct {
							Checkpoint string `json:"vrender_checkpoint"`
						} `json:"stream_state"`
					}
					if err := json.Unmarshal(reply, &res); err != nil {
						b.Fatal(err)
					}
					state, _ = json.Marshal(map[string]string{"vrender_checkpoint": res.StreamState.Checkpoint})
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ids)), "ns/token")
			b.ReportMetric(float64(maxBody), "max-body-bytes")
		})
	}
}
