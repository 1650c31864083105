// Package testmodel loads the cached test models (<repo>/.cache/models) once
// per test binary, so tests that share a model do not each pay for parsing
// its tokenizer.json. A missing model skips, or under CI=true fails, by
// internal/testenv's rules.
//
// It lives apart from testenv because it imports model and tokenizer, whose
// own tests use testenv.
//
// The values handed out are shared by every test of the binary: tests must
// treat them as read-only.
package testmodel

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/tokenizer"
)

// once holds one loader per key, so loading one model does not wait on
// another.
type once[T any] struct {
	mu    sync.Mutex
	loads map[string]func() (T, error)
}

func (o *once[T]) get(key string, load func() (T, error)) (T, error) {
	o.mu.Lock()
	f, ok := o.loads[key]
	if !ok {
		if o.loads == nil {
			o.loads = map[string]func() (T, error){}
		}
		f = sync.OnceValues(load)
		o.loads[key] = f
	}
	o.mu.Unlock()
	return f()
}

var (
	models     once[*model.Model]
	tokenizers once[*tokenizer.Tokenizer]
)

// Load returns the model .cache/models/<name> loaded with default options.
func Load(tb testing.TB, name string) *model.Model {
	tb.Helper()
	dir := testenv.ModelDir(tb, name)
	m, err := models.get(dir, func() (*model.Model, error) {
		return model.Load(context.Background(), dir, model.Options{})
	})
	if err != nil {
		tb.Fatalf("load model %s: %v", name, err)
	}
	return m
}

// Tokenizer returns the tokenizer of .cache/models/<name> alone, for tests
// that need no chat template or model config.
func Tokenizer(tb testing.TB, name string) *tokenizer.Tokenizer {
	tb.Helper()
	path := filepath.Join(testenv.ModelDir(tb, name), "tokenizer.json")
	tok, err := tokenizers.get(path, func() (*tokenizer.Tokenizer, error) {
		return tokenizer.Load(path)
	})
	if err != nil {
		tb.Fatalf("load tokenizer %s: %v", name, err)
	}
	return tok
}
