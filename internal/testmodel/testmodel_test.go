package testmodel

import "testing"

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
