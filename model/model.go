// Package model loads a model directory the way vLLM does for its CPU tier: the tokenizer, its
// tokenizer_config.json, chat templates, generation_config.json and config.json, and from them the
// context length (max_model_len) and the end-of-sequence token ids.
//
// A model is a local directory in Hugging Face layout or a model ID (ORG/NAME) already present in the
// Hugging Face cache ($HF_HOME/hub/models--ORG--NAME/snapshots/<commit>/). Nothing is downloaded.
package model

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/vrender/vrender/tokenizer"
)

// Options are the vLLM flags that change how a model is loaded.
type Options struct {
	// MaxModelLen is --max-model-len; 0 derives it from config.json as vLLM does.
	MaxModelLen int
	// Revision selects a snapshot of a model ID in the HF cache: a branch or tag under refs/, or a
	// commit hash. "" means the ref "main", or the only snapshot when there is no such ref.
	Revision string
	// HFHome is the Hugging Face home; "" means $HF_HOME, else $XDG_CACHE_HOME/huggingface, else
	// ~/.cache/huggingface. The hub cache is HFHome/hub when HFHome is set here, else $HF_HUB_CACHE, else
	// <home>/hub.
	HFHome string
	// TokenizerPath is --tokenizer: another local directory or model ID to take the tokenizer files
	// (tokenizer.json, tokenizer_config.json, chat templates) from; "" means the model directory.
	TokenizerPath string
}

// Model is a loaded model directory. It is immutable after Load and safe for concurrent use.
type Model struct {
	// Path is what the user passed (vLLM's model "root").
	Path string
	// Dir is the resolved local directory of the model (config.json, generation_config.json).
	Dir string
	// TokenizerDir is the directory the tokenizer files came from: Dir unless Options.TokenizerPath is set.
	TokenizerDir string

	Tokenizer       *tokenizer.Tokenizer
	TokenizerConfig TokenizerConfig
	// ChatTemplates maps a template name to its source; "default" is the one used when a request names
	// none. Empty when the model ships no template.
	ChatTemplates map[string]string
	// GenerationConfig is generation_config.json, or nil when there is none.
	GenerationConfig map[string]any
	// Config is config.json, or nil when there is none.
	Config map[string]any

	MaxModelLen int
	// EOSTokenIDs come from generation_config.json's eos_token_id (an int or a list), else config.json's,
	// else the tokenizer's eos_token. Empty when none of them names a token.
	EOSTokenIDs []int
}

// Load resolves nameOrPath to a directory, reads its files and loads its tokenizer.
func Load(ctx context.Context, nameOrPath string, opts Options) (*Model, error) {
	if opts.MaxModelLen < 0 {
		return nil, fmt.Errorf("model %q: max_model_len must be positive, got %d", nameOrPath, opts.MaxModelLen)
	}
	hub := hubCacheDir(opts.HFHome, os.Getenv)

	// With a separate tokenizer the model path only contributes config.json (vLLM requires it too).
	modelFile := tokenizerFile
	if opts.TokenizerPath != "" {
		modelFile = configFile
	}
	dir, err := resolveDir(nameOrPath, opts.Revision, hub, modelFile)
	if err != nil {
		return nil, err
	}
	tokDir := dir
	if opts.TokenizerPath != "" {
		if tokDir, err = resolveDir(opts.TokenizerPath, opts.Revision, hub, tokenizerFile); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	m := &Model{Path: nameOrPath, Dir: dir, TokenizerDir: tokDir}
	if m.Config, err = readJSONObject(filepath.Join(dir, configFile)); err != nil {
		return nil, err
	}
	if m.GenerationConfig, err = readJSONObject(filepath.Join(dir, generationConfigFile)); err != nil {
		return nil, err
	}
	if m.TokenizerConfig, err = loadTokenizerConfig(tokDir); err != nil {
		return nil, err
	}
	if m.TokenizerConfig.Raw == nil {
		slog.WarnContext(ctx, "model has no tokenizer_config.json: no chat template or special token names",
			"dir", tokDir)
	}
	if m.ChatTemplates, err = loadChatTemplates(tokDir, m.TokenizerConfig.Raw); err != nil {
		return nil, err
	}
	if m.MaxModelLen, err = deriveMaxModelLen(ctx, m.Config, m.TokenizerConfig, opts.MaxModelLen, allowLongMaxModelLen()); err != nil {
		return nil, fmt.Errorf("model %q: %w", nameOrPath, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	tokPath := filepath.Join(tokDir, tokenizerFile)
	if m.Tokenizer, err = tokenizer.Load(tokPath); err != nil {
		return nil, fmt.Errorf("model %q: load %s: %w", nameOrPath, tokPath, err)
	}
	if m.EOSTokenIDs, err = eosTokenIDs(m.GenerationConfig, m.Config, m.TokenizerConfig.EOSToken, m.Tokenizer.TokenToID); err != nil {
		return nil, fmt.Errorf("model %q: %w", nameOrPath, err)
	}
	return m, nil
}

// ModelType is config.json's model_type ("" when absent).
func (m *Model) ModelType() string {
	t, _ := m.Config["model_type"].(string)
	return t
}

// UsesHarmony reports whether vLLM serves the model with Harmony (gpt-oss):
// model_type gpt_oss, as OnlineRenderer and OnlineDerenderer decide.
func (m *Model) UsesHarmony() bool { return m.ModelType() == "gpt_oss" }
