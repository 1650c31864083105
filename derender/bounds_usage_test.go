package derender

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
)

func TestUsageCountsBounded(t *testing.T) {
	e := &Engine{model: &model.Model{MaxModelLen: 100}, cfg: Config{MaxNSequences: 4, MaxLogprobs: 20}}
	cases := []struct {
		name string
		err  error
		want string // "" accepts
	}{
		{name: "prompt ok", err: checkUsageCount("prompt_tokens", new(1<<20))},
		{name: "prompt nil", err: checkUsageCount("prompt_tokens", nil)},
		{name: "prompt at limit", err: checkUsageCount("prompt_tokens", new(maxUsageTokens))},
		{name: "prompt max int", err: checkUsageCount("prompt_tokens", new(math.MaxInt64)), want: "prompt_tokens (9223372036854775807) is out of range"},
		{name: "prompt min int", err: checkUsageCount("prompt_tokens", new(math.MinInt64)), want: "out of range"},
		{name: "completion list", err: checkPromptTokens(3, math.MaxInt64), want: "prompt_tokens (9223372036854775807)"},
		{name: "chunk usage", err: e.checkBounds([]*protocol.GenerateResponse{{Usage: &protocol.GenerateUsage{CompletionTokens: new(math.MaxInt64)}}}),
			want: "usage.completion_tokens (9223372036854775807) is out of range"},
		{name: "chunk usage ok", err: e.checkBounds([]*protocol.GenerateResponse{{Usage: &protocol.GenerateUsage{PromptTokens: new(7), CompletionTokens: new(3)}}})},
	}
	for _, tc := range cases {
		if tc.want == "" {
			if tc.err != nil {
				t.Errorf("%s: %v", tc.name, tc.err)
			}
			continue
		}
		var be *BadRequestError
		if !errors.As(tc.err, &be) || !strings.Contains(be.Message, tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, tc.err, tc.want)
		}
	}
	// The bound keeps the sum the usage reports representable.
	if u := protocol.NewUsage(maxUsageTokens*4, maxUsageTokens); u.TotalTokens != maxUsageTokens*5 {
		t.Errorf("total %d", u.TotalTokens)
	}
}
