package responses

import (
	"context"

	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// What the server's route table calls for /v1/responses and
// /v1/responses/render, beside DecodeRequest and Serve.

// errHarmony is the 400 of a Responses request to a Harmony model.
const errHarmony = "The Responses API (/v1/responses, /v1/responses/render) is not implemented for Harmony models " +
	"(gpt-oss) in vrender yet; /v1/chat/completions, /v1/completions and /v1/messages serve them."

// CheckGenerator refuses a Responses request to a Harmony model: vLLM
// renders a gpt-oss Responses request with openai_harmony's own Responses
// conversion, not through the chat template; vrender has not built that
// path, and the chat template route would fail with a misleading template
// error.
func CheckGenerator(g *render.Generator, _ *Request) error {
	if g.Renderer().Harmony() {
		return &ParamError{Message: errHarmony}
	}
	return nil
}

// Limits are what the server checks of r: the model it names, its input
// items and its tools.
func Limits(r *Request) (model *string, items, tools int) {
	return r.Model, len(r.InputItems), len(r.Tools)
}

// RenderAnswer is Render for the render route: the prompt's token count
// and the GenerateRequest.
func RenderAnswer(ctx context.Context, g *render.Generator, r *Request) (int, protocol.Appender, error) {
	gr, err := Render(ctx, g, r)
	if err != nil {
		return 0, nil, err
	}
	return len(gr.TokenIDs), gr, nil
}
