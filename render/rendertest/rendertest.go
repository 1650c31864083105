// Package rendertest builds the render Generators that the front ends'
// tests render their converted requests with.
package rendertest

import (
	"testing"

	"github.com/vrender/vrender/internal/testmodel"
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
