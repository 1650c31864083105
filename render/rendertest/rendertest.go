// Package rendertest builds the render Generators that the front ends'
// tests render their converted requests with.
package rendertest

import (
	"context"
	"fmt"
	"testing"

	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// Hermes is a Generator for the Qwen3 test model with automatic tool
// choice and the hermes tool parser, as the render golden servers run.
func Hermes(tb testing.TB) *render.Generator {
	tb.Helper()
	m := testmodel.Load(tb, "qwen3")
	r, err := render.New(m, render.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	return render.NewGenerator(r, m.MaxModelLen, render.GeneratorConfig{EnableAutoToolChoice: true, ToolCallParser: "hermes"})
}

// SameMessages reports where two conversions of one request's messages
// differ: as written (protocol.Message's JSON) or as rendered by g (the
// prompt, or the error). norm rewrites both texts before they are
// compared (nil: none), for parts a conversion makes up, such as ids.
func SameMessages(g *render.Generator, got, want []protocol.Message, norm func(string) string) error {
	if norm == nil {
		norm = func(s string) string { return s }
	}
	if g, w := norm(messagesJSON(got)), norm(messagesJSON(want)); g != w {
		return fmt.Errorf("messages\n got  %s\n want %s", g, w)
	}
	ctx := context.Background()
	pg, errG := g.Renderer().RenderChat(ctx, render.ChatInput{Messages: got, AddGenerationPrompt: true})
	pw, errW := g.Renderer().RenderChat(ctx, render.ChatInput{Messages: want, AddGenerationPrompt: true})
	switch {
	case (errG == nil) != (errW == nil) || errG != nil && errG.Error() != errW.Error():
		return fmt.Errorf("render error %v, want %v", errG, errW)
	case errG == nil && norm(pg.Text) != norm(pw.Text):
		return fmt.Errorf("prompt\n got  %q\n want %q", pg.Text, pw.Text)
	}
	return nil
}

func messagesJSON(msgs []protocol.Message) string {
	b := []byte{'['}
	for i := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = msgs[i].AppendJSON(b)
	}
	return string(append(b, ']'))
}
