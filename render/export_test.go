package render

import (
	"context"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// ChatPromptText is the prompt text req renders to, for tests of the
// front ends' conversions outside the package.
func ChatPromptText(ctx context.Context, g *Generator, req *protocol.ChatCompletionRequest) (string, error) {
	p, err := g.renderChatPrompt(ctx, req, promptLimits{}, true)
	if err != nil {
		return "", err
	}
	return p.Text, nil
}

// ResponsesToolDicts are the dicts the template gets for the tools of a
// converted Responses request, as compact JSON.
func ResponsesToolDicts(req *protocol.ChatCompletionRequest) []string {
	out := make([]string, len(req.Tools))
	for i := range req.Tools {
		out[i] = string(wire.AppendNode(nil, responsesToolDict(&req.Tools[i])))
	}
	return out
}
