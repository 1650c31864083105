package protocol

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
)

// TestRenderRequestGolden checks chat and completion request validation
// against testdata/render_validation_golden.jsonl, produced with pydantic by
// testdata/gen_render_golden.py from models declared as vLLM declares
// ChatCompletionRequest and CompletionRequest: the exact error body for
// refused bodies, the validated value of a few fields for accepted ones.
func TestRenderRequestGolden(t *testing.T) {
	n := 0
	for _, c := range loadGolden(t, "testdata/render_validation_golden.jsonl") {
		n++
		t.Run(c.Name, func(t *testing.T) {
			var shown map[string]any
			var err error
			switch c.Endpoint {
			case "chat":
				var r *ChatCompletionRequest
				if r, err = DecodeChatCompletionRequest([]byte(c.Body)); err == nil {
					shown = chatShown(r)
				}
			case "completion":
				var r *CompletionRequest
				if r, err = DecodeCompletionRequest([]byte(c.Body)); err == nil {
					shown = completionShown(r)
				}
			default:
				t.Fatalf("unknown endpoint %q", c.Endpoint)
			}
			if c.Result.Error != nil {
				verr, ok := err.(*pylax.ValidationError)
				if !ok {
					t.Fatalf("err = %v, want a validation error", err)
				}
				got := NewValidationErrorResponse(verr).Error
				if got.Message != c.Result.Error.Message {
					t.Errorf("message\n got: %s\nwant: %s", got.Message, c.Result.Error.Message)
				}
				if !reflect.DeepEqual(got.Param, c.Result.Error.Param) {
					t.Errorf("param = %v, want %v", deref(got.Param), deref(c.Result.Error.Param))
				}
				return
			}
			if err != nil {
				t.Fatalf("refused a valid body: %v", err)
			}
			for key, raw := range c.Result.Dump {
				var want any
				_ = json.Unmarshal(raw, &want)
				want = normalizeGolden(key, want)
				if got := shown[key]; !reflect.DeepEqual(got, want) {
					t.Errorf("%s = %#v, want %#v", key, got, want)
				}
			}
		})
	}
	if n < 60 {
		t.Fatalf("only %d golden cases", n)
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// asJSON turns a Go value into what json.Unmarshal makes of its JSON, for
// comparison with the golden dumps.
func asJSON(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func chatShown(r *ChatCompletionRequest) map[string]any {
	var toolChoice any
	_ = json.Unmarshal(r.ToolChoice.AppendJSON(nil), &toolChoice)
	return map[string]any{
		"stop": asJSON(r.Stop), "tool_choice": toolChoice, "stop_token_ids": asJSON(r.StopTokenIDs), "max_tokens": asJSON(r.MaxTokens),
		"truncate_prompt_tokens": asJSON(r.TruncatePromptTokens), "thinking_token_budget": asJSON(r.ThinkingTokenBudget),
		"n": asJSON(r.N), "temperature": asJSON(r.Temperature), "top_k": asJSON(r.TopK), "seed": asJSON(r.Seed),
		"priority": asJSON(r.Priority), "bad_words": asJSON(r.BadWords), "reasoning_effort": asJSON(r.ReasoningEffort),
	}
}

func completionShown(r *CompletionRequest) map[string]any {
	prompts := []any{}
	for _, p := range r.Prompts {
		if p.Text != nil {
			prompts = append(prompts, *p.Text)
		} else {
			prompts = append(prompts, asJSON(p.TokenIDs))
		}
	}
	return map[string]any{
		"stop": asJSON(r.Stop), "stop_token_ids": asJSON(r.StopTokenIDs), "max_tokens": asJSON(r.MaxTokens),
		"truncate_prompt_tokens": asJSON(r.TruncatePromptTokens), "thinking_token_budget": asJSON(r.ThinkingTokenBudget),
		"prompt": prompts, "n": asJSON(r.N), "temperature": asJSON(r.Temperature), "top_k": asJSON(r.TopK),
		"seed": asJSON(r.Seed), "priority": asJSON(r.Priority), "bad_words": asJSON(r.BadWords),
	}
}

// normalizeGolden puts a pydantic value in vrender's representation: stop
// and prompt as lists (a string stop is one stop; a string or a flat ID list
// is one prompt).
func normalizeGolden(key string, v any) any {
	switch key {
	case "stop":
		if s, ok := v.(string); ok {
			return []any{s}
		}
	case "prompt":
		switch p := v.(type) {
		case string:
			return []any{p}
		case []any:
			flat := true
			for _, item := range p {
				if _, ok := item.(float64); !ok {
					flat = false
				}
			}
			if flat {
				return []any{p}
			}
		}
	}
	return v
}
