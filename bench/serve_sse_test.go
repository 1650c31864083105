package bench

import (
	"encoding/json"
	"testing"
)

func TestScanChunk(t *testing.T) {
	cases := []struct {
		name       string
		payload    string
		wantKind   chunkKind
		wantTokens int
		wantUsage  bool
	}{
		{"chat role chunk", `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`, chunkChoices, 0, false},
		{"chat content with usage null", `{"id":"x","choices":[{"index":0,"delta":{"content":"hi"}}],"usage":null}`, chunkChoices, 0, false},
		{"content that quotes the keys", `{"choices":[{"delta":{"content":"\"usage\": {\"completion_tokens\": 99}, \"choices\": []"}}]}`, chunkChoices, 0, false},
		{"continuous usage on a token chunk", `{"choices":[{"index":0,"text":"a"}],"usage":{"prompt_tokens":3,"total_tokens":5,"completion_tokens":2}}`, chunkChoices, 2, true},
		{"final usage chunk", `{"id":"x","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":1024,"total_tokens":1280,"completion_tokens":256}}`, chunkUsage, 256, true},
		{"usage chunk with spaces", `{"choices": [ ], "usage": {"prompt_tokens": 1, "completion_tokens": 17}}`, chunkUsage, 17, true},
		{"usage without choices", `{"usage":{"completion_tokens":3}}`, chunkUsage, 3, true},
		{"error event", `{"error":{"message":"engine dropped","type":"BadGatewayError","param":null,"code":502}}`, chunkError, 0, false},
		{"old error event", `{"object":"error","message":"boom","type":"InternalServerError"}`, chunkError, 0, false},
		{"empty choices and no usage", `{"choices":[]}`, chunkOther, 0, false},
		{"reasoning delta", `{"choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]}`, chunkChoices, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !json.Valid([]byte(tc.payload)) {
				t.Fatalf("test payload is not JSON")
			}
			got := scanChunk([]byte(tc.payload))
			if got.kind != tc.wantKind || got.completionTokens != tc.wantTokens || got.hasUsage != tc.wantUsage {
				t.Errorf("scanChunk = %+v, want kind %d tokens %d usage %v", got, tc.wantKind, tc.wantTokens, tc.wantUsage)
			}
		})
	}
}

func TestChunkTextAndErrorMessage(t *testing.T) {
	if got := chunkText([]byte(`{"choices":[{"delta":{"content":"h\u00e9"}}]}`)); got != "hé" {
		t.Errorf("chat chunkText = %q", got)
	}
	if got := chunkText([]byte(`{"choices":[{"text":"abc"}]}`)); got != "abc" {
		t.Errorf("completion chunkText = %q", got)
	}
	if got := errorMessage([]byte(`{"error":{"message":"engine down"}}`)); got != "engine down" {
		t.Errorf("errorMessage = %q", got)
	}
}

func BenchmarkScanChunk(b *testing.B) {
	p := []byte(`{"id":"chatcmpl-abcdef0123456789","object":"chat.completion.chunk","created":1700000000,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}]}`)
	for b.Loop() {
		scanChunk(p)
	}
}
