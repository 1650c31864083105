package testmodel

import (
	"sync"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

func TestLoadOncePerProcess(t *testing.T) {
	a, b := Load(t, "qwen3"), Load(t, "qwen3")
	if a != b {
		t.Error("two loads of qwen3 gave two models")
	}
	if a.Tokenizer == nil {
		t.Fatal("qwen3 loaded without a tokenizer")
	}
}

func TestTokenizerOncePerProcess(t *testing.T) {
	a, b := Tokenizer(t, "qwen3"), Tokenizer(t, "qwen3")
	if a != b {
		t.Error("two loads of qwen3's tokenizer gave two tokenizers")
	}
	if ids := a.Encode("Hello world", false); len(ids) == 0 {
		t.Error("qwen3's tokenizer encoded nothing")
	}
}

// TestConcurrentLoads: tests running in parallel that ask for models at
// once all get the one shared copy of each.
func TestConcurrentLoads(t *testing.T) {
	names := []string{"qwen3", "gptoss", "qwen3", "gptoss", "qwen3", "gptoss"}
	for _, name := range names[:2] {
		testenv.ModelDir(t, name) // a missing model skips here, on the test's goroutine
	}
	got := make([]any, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { got[i] = Load(t, name) })
	}
	wg.Wait()
	for i := range names {
		if got[i] == nil || got[i] != got[i%2] {
			t.Fatalf("load %d of %s gave %p, want the shared %p", i, names[i], got[i], got[i%2])
		}
	}
	if got[0] == got[1] {
		t.Fatal("qwen3 and gptoss loaded as one model")
	}
}
