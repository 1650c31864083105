package server

import (
	"regexp"
	"strings"
	"testing"

	"github.com/vrender/vrender/enginesim"
)

// volatile matches what differs between two answers to one request: ids
// and creation times.
var volatile = regexp.MustCompile(`"(id|created|system_fingerprint)":("[^"]*"|\d+)`)

// TestEngineLogprobsShapesAnswerAlike drives the front end over a simulated
// engine writing each logprobs shape (vLLM's OpenAI-style placeholders and
// the GenerateLogProbs of vllm PR #58181): chat and completion answers,
// streamed and not, must be identical.
func TestEngineLogprobsShapesAnswerAlike(t *testing.T) {
	openai := newOpenAIEnvWith(t, "", envOptions{logprobsShape: enginesim.LogprobsShapeOpenAI})
	generate := newOpenAIEnvWith(t, "", envOptions{logprobsShape: enginesim.LogprobsShapeGenerate})
	for _, c := range []struct{ name, path, body string }{
		{"chat", "/v1/chat/completions", `{"model":"qwen","messages":[{"role":"user","content":"What is 2+2?"}],"logprobs":true,"top_logprobs":3,"max_tokens":12}`},
		{"chat stream", "/v1/chat/completions", `{"model":"qwen","messages":[{"role":"user","content":"What is 2+2?"}],"logprobs":true,"top_logprobs":2,"max_tokens":12,"stream":true}`},
		{"chat top_logprobs 0", "/v1/chat/completions", `{"model":"qwen","messages":[{"role":"user","content":"What is 2+2?"}],"logprobs":true,"max_tokens":5}`},
		{"completion", "/v1/completions", `{"model":"qwen","prompt":"Hello","logprobs":2,"max_tokens":8}`},
		{"completion stream", "/v1/completions", `{"model":"qwen","prompt":"Hello","logprobs":1,"max_tokens":8,"stream":true}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			codeA, a := openai.post(t, c.path, c.body)
			codeB, b := generate.post(t, c.path, c.body)
			if codeA != 200 || codeB != 200 {
				t.Fatalf("status %d / %d: %s / %s", codeA, codeB, a, b)
			}
			na := volatile.ReplaceAllString(string(a), `"$1":_`)
			nb := volatile.ReplaceAllString(string(b), `"$1":_`)
			if na != nb {
				t.Errorf("answers differ\nopenai shape:   %s\ngenerate shape: %s", na, nb)
			}
			if !strings.Contains(na, `logprobs":[`) || !strings.Contains(na, `logprob`) {
				t.Errorf("no logprobs in the answer: %s", na)
			}
		})
	}
}
