package parity

import (
	"context"
	"testing"

	golden "github.com/vrender/vrender/internal/parity"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
)

// TestEngineFinishGolden: the engine's finish_reason recovered from vLLM's
// answer and the output ids is the golden set's finish_reason_engine for
// every case, "tool_calls" over truncated output included.
func TestEngineFinishGolden(t *testing.T) {
	names, sets := golden.Load(t)
	models := map[string]*model.Model{}
	for _, name := range names {
		for _, c := range sets[name] {
			m := models[c.Tokenizer]
			if m == nil {
				opts := model.Options{}
				if c.Tokenizer == "llama3_1" {
					opts.MaxModelLen = golden.Llama31MaxModelLen
				}
				var err error
				if m, err = model.Load(context.Background(), golden.ModelDir(t, c.Tokenizer), opts); err != nil {
					t.Fatal(err)
				}
				models[c.Tokenizer] = m
			}
			r := &runner{cfg: Config{Model: m}}
			req, err := protocol.DecodeChatCompletionRequest(c.ChatRequest)
			if err != nil {
				t.Fatal(err)
			}
			stop := r.stopConfig(req, nil)
			if got := r.engineFinish(c.Expect.FinishReason, c.OutputTokenIDs, stop); got != c.FinishReasonEngine {
				t.Errorf("%s %s: engine finish %q from vLLM's %q, want %q", name, c.ID, got, c.Expect.FinishReason, c.FinishReasonEngine)
			}
		}
	}
}
