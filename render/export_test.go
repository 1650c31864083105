package render

import (
	"context"

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
