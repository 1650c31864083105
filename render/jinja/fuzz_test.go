package jinja

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// FuzzCompileRender feeds random template text and random JSON contexts
// through Compile and Render: errors are fine, panics (which Compile and
// Render turn into "internal" errors) and runaway work are not.
func FuzzCompileRender(f *testing.F) {
	for _, fc := range featureCases {
		f.Add(fc.tmpl, fc.ctx)
	}
	for _, pc := range parityContexts[:5] {
		f.Add("{% for m in messages %}{{ m.role }}: {{ m.content }}{% endfor %}", pc.json)
	}
	limits := Limits{MaxOutputBytes: 1 << 16, MaxSteps: 20000, MaxDepth: 64}
	f.Fuzz(func(t *testing.T, src, ctxJSON string) {
		tmpl, err := Compile(src, Options{Limits: limits})
		if err != nil {
			assertNotInternal(t, src, err)
			return
		}
		vars, err := FromJSON([]byte(ctxJSON))
		if err != nil || vars.Kind() != KindDict {
			vars = DictValue(NewDict(0))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		out, err := tmpl.Render(ctx, vars, func() time.Time { return parityClock })
		if err != nil {
			assertNotInternal(t, src, err)
			return
		}
		if len(out) > limits.MaxOutputBytes {
			t.Fatalf("output of %d bytes exceeds the limit", len(out))
		}
	})
}

func assertNotInternal(t *testing.T, src string, err error) {
	t.Helper()
	var te *TemplateError
	if !errors.As(err, &te) {
		t.Fatalf("%q: error is %T, not *TemplateError: %v", src, err, err)
	}
	if te.PyType == "InternalError" || strings.Contains(te.Message, "internal compiler error") {
		t.Fatalf("%q: %v", src, err)
	}
}
