package model

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// tinyTokenizer is a five-token byte-level BPE (plus <s>, </s>, <|eot|> as ids 5–7) that the reference
// binding loads and encodes "hi hi" as [2 4].
func tinyTokenizer(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "tiny", tokenizerFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// modelDir writes files (relative path → content) into a fresh directory.
func modelDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		mustWrite(t, filepath.Join(dir, filepath.FromSlash(name)), content)
	}
	return dir
}

func TestLoad(t *testing.T) {
	tok := tinyTokenizer(t)
	full := modelDir(t, map[string]string{
		tokenizerFile:        tok,
		tokenizerConfigFile:  `{"bos_token": "<s>", "eos_token": {"__type": "AddedToken", "content": "</s>"}, "model_max_length": 1e30, "chat_template": "{{ bos_token }}"}`,
		configFile:           `{"model_type": "llama", "max_position_embeddings": 4096, "eos_token_id": 6}`,
		generationConfigFile: `{"eos_token_id": [6, 7], "temperature": 0.6}`,
	})
	bare := modelDir(t, map[string]string{
		tokenizerFile:       tok,
		tokenizerConfigFile: `{"eos_token": "<|eot|>", "model_max_length": 2048}`,
	})
	noLimit := modelDir(t, map[string]string{
		tokenizerFile:       tok,
		tokenizerConfigFile: `{"eos_token": "</s>", "model_max_length": 1e30}`,
	})
	onlyTokenizer := modelDir(t, map[string]string{tokenizerFile: tok})
	configOnly := modelDir(t, map[string]string{configFile: `{"max_position_embeddings": 512}`})
	brokenTokenizer := modelDir(t, map[string]string{tokenizerFile: `{"model": {"type": "NoSuchModel"}}`, configFile: `{"max_position_embeddings": 8}`})

	h := newFakeHub(t)
	snap := h.snapshot("acme/tiny", "0123abcd", map[string]string{
		tokenizerFile:       tok,
		tokenizerConfigFile: `{"eos_token": "</s>"}`,
		configFile:          `{"max_position_embeddings": 1024}`,
		chatTemplateFile:    "T",
	})
	h.ref("acme/tiny", "main", "0123abcd")
	hfHome := filepath.Dir(h.hub)

	tests := []struct {
		name      string
		path      string
		opts      Options
		wantDir   string
		wantTok   string // TokenizerDir; "" = wantDir
		wantLen   int
		wantEOS   []int
		wantTmpl  map[string]string
		wantErr   string
		checkFunc func(t *testing.T, m *Model)
	}{
		{
			name: "full local directory", path: full, wantDir: full, wantLen: 4096, wantEOS: []int{6, 7},
			wantTmpl: map[string]string{"default": "{{ bos_token }}"},
			checkFunc: func(t *testing.T, m *Model) {
				if m.TokenizerConfig.BOSToken != "<s>" || m.TokenizerConfig.EOSToken != "</s>" {
					t.Errorf("special tokens = %q, %q", m.TokenizerConfig.BOSToken, m.TokenizerConfig.EOSToken)
				}
				if m.GenerationConfig["temperature"] != 0.6 || m.Config["model_type"] != "llama" {
					t.Errorf("configs = %v, %v", m.GenerationConfig, m.Config)
				}
				if got := m.Tokenizer.Encode("hi hi", false); !slices.Equal(got, []int{2, 4}) {
					t.Errorf(`Encode("hi hi") = %v, want [2 4]`, got)
				}
			},
		},
		{name: "requested length", path: full, opts: Options{MaxModelLen: 1000}, wantDir: full, wantLen: 1000, wantEOS: []int{6, 7},
			wantTmpl: map[string]string{"default": "{{ bos_token }}"}},
		{name: "requested length above config", path: full, opts: Options{MaxModelLen: 5000},
			wantErr: "user-specified max_model_len (5000) is greater than the derived max_model_len (max_position_embeddings=4096"},
		{name: "negative length", path: full, opts: Options{MaxModelLen: -1}, wantErr: "max_model_len must be positive"},
		{name: "no config.json: tokenizer limit, tokenizer eos", path: bare, wantDir: bare, wantLen: 2048, wantEOS: []int{7}},
		{name: "no config.json, no limit", path: noLimit, wantErr: "pass --max-model-len"},
		{name: "no config.json, no limit, requested", path: noLimit, opts: Options{MaxModelLen: 300}, wantDir: noLimit, wantLen: 300, wantEOS: []int{6}},
		{
			name: "only tokenizer.json", path: onlyTokenizer, opts: Options{MaxModelLen: 64}, wantDir: onlyTokenizer, wantLen: 64,
			checkFunc: func(t *testing.T, m *Model) {
				if m.TokenizerConfig.Raw != nil || m.ChatTemplates != nil || m.Config != nil || m.GenerationConfig != nil {
					t.Errorf("want empty configs, got %+v", m)
				}
			},
		},
		{name: "model ID from the HF cache", path: "acme/tiny", opts: Options{HFHome: hfHome}, wantDir: snap, wantLen: 1024, wantEOS: []int{6},
			wantTmpl: map[string]string{"default": "T"}},
		{name: "model ID at a commit", path: "acme/tiny", opts: Options{HFHome: hfHome, Revision: "0123abcd"}, wantDir: snap, wantLen: 1024, wantEOS: []int{6},
			wantTmpl: map[string]string{"default": "T"}},
		{name: "separate tokenizer directory", path: configOnly, opts: Options{TokenizerPath: bare}, wantDir: configOnly, wantTok: bare, wantLen: 512, wantEOS: []int{7}},
		{name: "separate tokenizer from the HF cache", path: configOnly, opts: Options{TokenizerPath: "acme/tiny", HFHome: hfHome}, wantDir: configOnly, wantTok: snap,
			wantLen: 512, wantEOS: []int{6}, wantTmpl: map[string]string{"default": "T"}},
		{name: "model without tokenizer.json", path: configOnly, wantErr: "tokenizer.json not found; looked in: " + configOnly + " (local directory without tokenizer.json)"},
		{name: "separate tokenizer, model without config.json", path: onlyTokenizer, opts: Options{TokenizerPath: bare}, wantErr: "config.json not found"},
		{name: "missing model ID", path: "acme/absent", opts: Options{HFHome: hfHome},
			wantErr: `model "acme/absent": tokenizer.json not found; looked in: `},
		{name: "broken tokenizer.json", path: brokenTokenizer, wantErr: "load " + filepath.Join(brokenTokenizer, tokenizerFile)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Load(context.Background(), tt.path, tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantTok := tt.wantTok
			if wantTok == "" {
				wantTok = tt.wantDir
			}
			if m.Path != tt.path || m.Dir != tt.wantDir || m.TokenizerDir != wantTok {
				t.Errorf("Path, Dir, TokenizerDir = %q, %q, %q; want %q, %q, %q", m.Path, m.Dir, m.TokenizerDir, tt.path, tt.wantDir, wantTok)
			}
			if m.MaxModelLen != tt.wantLen {
				t.Errorf("MaxModelLen = %d, want %d", m.MaxModelLen, tt.wantLen)
			}
			if !slices.Equal(m.EOSTokenIDs, tt.wantEOS) {
				t.Errorf("EOSTokenIDs = %v, want %v", m.EOSTokenIDs, tt.wantEOS)
			}
			if len(m.ChatTemplates) != len(tt.wantTmpl) {
				t.Errorf("ChatTemplates = %q, want %q", m.ChatTemplates, tt.wantTmpl)
			}
			for name, want := range tt.wantTmpl {
				if m.ChatTemplates[name] != want {
					t.Errorf("ChatTemplates[%q] = %q, want %q", name, m.ChatTemplates[name], want)
				}
			}
			if m.Tokenizer == nil {
				t.Error("Tokenizer is nil")
			}
			if tt.checkFunc != nil {
				tt.checkFunc(t, m)
			}
		})
	}
}

func TestLoadCanceled(t *testing.T) {
	dir := modelDir(t, map[string]string{tokenizerFile: tinyTokenizer(t), configFile: `{"max_position_embeddings": 8}`})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Load(ctx, dir, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

// TestLoadCachedModels loads the five models `make models` fetches (tokenizer.json and
// tokenizer_config.json from npm, config.json written by scripts/fetch-models.sh).
func TestLoadCachedModels(t *testing.T) {
	tests := []struct {
		name         string
		maxModelLen  int
		eosToken     string
		eos          []int
		hasTemplate  bool
		addBOS       *bool
		extraSpecial string // a token expected among AdditionalSpecialTokens or ExtraSpecialTokens values
	}{
		{name: "qwen3", maxModelLen: 40960, eosToken: "<|im_end|>", eos: []int{151645}, hasTemplate: true, addBOS: new(false), extraSpecial: "<|im_start|>"},
		{name: "llama3_1", maxModelLen: 131072, eosToken: "<|eot_id|>", eos: []int{128009}, hasTemplate: true},
		{name: "deepseek_v3", maxModelLen: 163840, eosToken: "<｜end▁of▁sentence｜>", eos: []int{1}, hasTemplate: true, addBOS: new(true)},
		{name: "gptoss", maxModelLen: 131072, eosToken: "<|return|>", eos: []int{200002}},
		{name: "gemma3", maxModelLen: 131072, eosToken: "<end_of_turn>", eos: []int{106}, hasTemplate: true, addBOS: new(true), extraSpecial: "<image_soft_token>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := testenv.ModelDir(t, tt.name)
			if !isFile(filepath.Join(dir, configFile)) {
				t.Fatalf("%s has no config.json: run `make models` (scripts/fetch-models.sh writes it)", dir)
			}
			m, err := Load(context.Background(), dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if m.MaxModelLen != tt.maxModelLen {
				t.Errorf("MaxModelLen = %d, want %d", m.MaxModelLen, tt.maxModelLen)
			}
			if m.TokenizerConfig.EOSToken != tt.eosToken {
				t.Errorf("EOSToken = %q, want %q", m.TokenizerConfig.EOSToken, tt.eosToken)
			}
			if !slices.Equal(m.EOSTokenIDs, tt.eos) {
				t.Errorf("EOSTokenIDs = %v, want %v", m.EOSTokenIDs, tt.eos)
			}
			if _, ok := m.ChatTemplates["default"]; ok != tt.hasTemplate {
				t.Errorf("has default chat template = %v, want %v", ok, tt.hasTemplate)
			}
			if (m.TokenizerConfig.AddBOSToken == nil) != (tt.addBOS == nil) ||
				(tt.addBOS != nil && *m.TokenizerConfig.AddBOSToken != *tt.addBOS) {
				t.Errorf("AddBOSToken = %v, want %v", m.TokenizerConfig.AddBOSToken, tt.addBOS)
			}
			if tt.extraSpecial != "" && !slices.Contains(m.TokenizerConfig.AdditionalSpecialTokens, tt.extraSpecial) &&
				!slices.Contains(slices.Collect(maps.Values(m.TokenizerConfig.ExtraSpecialTokens)), tt.extraSpecial) {
				t.Errorf("%q is not among the additional or extra special tokens", tt.extraSpecial)
			}
			if id, ok := m.Tokenizer.TokenToID(tt.eosToken); !ok || id != tt.eos[0] {
				t.Errorf("Tokenizer.TokenToID(%q) = %d, %v; want %d", tt.eosToken, id, ok, tt.eos[0])
			}
		})
	}
}
