package main

import (
	"context"
	"fmt"

	"github.com/vrender/vrender/model"
)

// modelFlags are the vLLM flags that choose and load a model.
type modelFlags struct {
	model       string
	tokenizer   string
	revision    string
	maxModelLen humanInt
}

func (m *modelFlags) register(c *command, withMaxLen bool) {
	c.fs.StringVar(&m.model, "model", "", "the `MODEL`: a local directory in Hugging Face layout or a model ID in the HF cache")
	c.fs.StringVar(&m.tokenizer, "tokenizer", "", "take the tokenizer files from `DIR_OR_ID` instead of the model's")
	c.fs.StringVar(&m.revision, "revision", "", "snapshot of a cached model ID: a branch, tag or commit `REVISION` (default: main)")
	if withMaxLen {
		c.fs.Var(&m.maxModelLen, "max-model-len", "context length `N`; 32k, 25.6k and 32K forms accepted; auto or -1 derives it from config.json (default auto)")
	}
}

// load loads the model the flags name.
func (m *modelFlags) load(ctx context.Context) (*model.Model, error) {
	if m.model == "" {
		return nil, usagef("a model is required (--model)")
	}
	md, err := model.Load(ctx, m.model, model.Options{
		MaxModelLen:   int(m.maxModelLen),
		Revision:      m.revision,
		TokenizerPath: m.tokenizer,
	})
	if err != nil {
		return nil, fmt.Errorf("load model: %w", err)
	}
	return md, nil
}
