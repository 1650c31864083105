package server

import (
	"testing"

	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/render"
)

// TestResponsesHarmonyRefused: a Responses request to a Harmony model
// (gpt-oss) is a 400 saying the path is not built, on the render route and
// the served one alike, never the chat template's error.
func TestResponsesHarmonyRefused(t *testing.T) {
	m := testmodel.Load(t, "gptoss")
	if !m.UsesHarmony() {
		t.Fatal("gptoss does not use Harmony")
	}
	r, err := render.New(m, render.Config{Harmony: &render.HarmonyConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	gen := render.NewGenerator(r, m.MaxModelLen, render.GeneratorConfig{})
	h, err := New(Config{Model: m, ServedModelNames: []string{"m"}, Logger: discardLogger(), Generator: gen})
	if err != nil {
		t.Fatal(err)
	}
	const msg = "The Responses API (/v1/responses, /v1/responses/render) is not implemented for Harmony models " +
		"(gpt-oss) in vrender yet; /v1/chat/completions, /v1/completions and /v1/messages serve them."
	want := `{"error":{"message":"` + msg + `","type":"BadRequestError","param":null,"code":400}}`
	for _, path := range []string{"/v1/responses/render", "/v1/responses"} {
		t.Run(path, func(t *testing.T) {
			httpCase{method: "POST", path: path, body: `{"model": "m", "input": "Hi"}`, wantStatus: 400, wantBody: want}.run(t, h)
		})
	}
}
