package server

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// servedChat is the part of a non-streaming chat answer these tests read.
type servedChat struct {
	PromptTokenIDs []int `json:"prompt_token_ids"`
	Choices        []struct {
		Message struct {
			Reasoning *string `json:"reasoning"`
		} `json:"message"`
		Logprobs json.RawMessage `json:"logprobs"`
		TokenIDs []int           `json:"token_ids"`
	} `json:"choices"`
}

// TestChatIncludeReasoningHidesMetadata pins vLLM bf578e1's chat server:
// with a parser and include_reasoning false, logprobs and the choice's
// token_ids are withheld (they would spell out the hidden reasoning),
// streaming and not; prompt_token_ids stay.
func TestChatIncludeReasoningHidesMetadata(t *testing.T) {
	env := newOpenAIEnv(t, "")
	const req = `{"model":"qwen","messages":[{"role":"user","content":"What is 2+2?"}],
		"logprobs":true,"top_logprobs":1,"return_token_ids":true,"include_reasoning":%s%s}`
	body := func(include, stream string) string {
		return strings.Replace(strings.Replace(req, "%s", include, 1), "%s", stream, 1)
	}
	for _, include := range []string{"true", "false"} {
		status, b := env.post(t, "/v1/chat/completions", body(include, ""))
		if status != 200 {
			t.Fatalf("include_reasoning %s: status %d: %s", include, status, b)
		}
		var res servedChat
		if err := json.Unmarshal(b, &res); err != nil || len(res.Choices) != 1 {
			t.Fatalf("answer %s: %v", b, err)
		}
		c := res.Choices[0]
		if len(res.PromptTokenIDs) == 0 {
			t.Errorf("include_reasoning %s: prompt_token_ids missing", include)
		}
		hidden := include == "false"
		if got := string(c.Logprobs) == "null"; got != hidden {
			t.Errorf("include_reasoning %s: logprobs %s", include, c.Logprobs)
		}
		if got := c.TokenIDs == nil; got != hidden {
			t.Errorf("include_reasoning %s: token_ids %v", include, c.TokenIDs)
		}
		if got := c.Message.Reasoning == nil; got != hidden {
			t.Errorf("include_reasoning %s: reasoning %v", include, c.Message.Reasoning)
		}

		// The stream: with the metadata shown, every generated id comes
		// in some chunk's token_ids, also those the parser made no delta
		// of (<think>, </think>); hidden, none carries logprobs or ids.
		var ids []int
		for _, ev := range env.events(t, "/v1/chat/completions", body(include, `,"stream":true`)) {
			var chunk struct {
				Choices []struct {
					Logprobs json.RawMessage `json:"logprobs"`
					TokenIDs []int           `json:"token_ids"`
				} `json:"choices"`
			}
			if err := json.Unmarshal([]byte(ev), &chunk); err != nil {
				t.Fatalf("chunk %s: %v", ev, err)
			}
			for _, ch := range chunk.Choices {
				if hidden && (ch.TokenIDs != nil || len(ch.Logprobs) > 0 && string(ch.Logprobs) != "null") {
					t.Errorf("include_reasoning false: chunk carries metadata: %s", ev)
				}
				ids = append(ids, ch.TokenIDs...)
			}
		}
		if !hidden {
			if want := c.TokenIDs; !slices.Equal(ids, want) {
				t.Errorf("streamed token_ids %v, want %v", ids, want)
			}
		}
	}
}
