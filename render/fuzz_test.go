package render

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/vrender/vrender/internal/testmodel"
)

// FuzzRenderChat feeds random chat requests to the Qwen3 template in both
// content formats: rendering must never panic and every failure must be a
// 400 (*BadRequestError).
func FuzzRenderChat(f *testing.F) {
	for _, c := range loadConversations(f) {
		f.Add([]byte(c.Request))
	}
	f.Add([]byte(`{"messages":[{"role":"assistant","tool_calls":[{"function":{"arguments":"[1,"}}]}]}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":7}]}],"continue_final_message":true}`))
	f.Add([]byte(`{"messages":[],"continue_final_message":true,"documents":{"a":1}}`))
	m := testmodel.Load(f, "qwen3")
	var renderers []*Renderer
	for _, format := range []string{FormatAuto, FormatOpenAI} {
		r, err := New(m, Config{ContentFormat: format})
		if err != nil {
			f.Fatal(err)
		}
		renderers = append(renderers, r)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var q testRequest
		if json.Unmarshal(data, &q) != nil {
			return
		}
		for _, r := range renderers {
			_, err := r.RenderChat(context.Background(), q.input())
			var br *BadRequestError
			if err != nil && !errors.As(err, &br) {
				t.Fatalf("error is %T, want *BadRequestError: %v", err, err)
			}
		}
	})
}
