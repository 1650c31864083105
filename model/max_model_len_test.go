package model

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestDeriveMaxModelLen(t *testing.T) {
	tests := []struct {
		name      string
		config    string // config.json; "" = none
		tokMax    float64
		requested int
		allowLong bool
		want      int
		wantErr   string
	}{
		// Derivation from config.json, expected values worked out from vLLM's _get_and_verify_max_len.
		{name: "max_position_embeddings (Qwen3-8B)", config: `{"model_type": "qwen3", "max_position_embeddings": 40960}`, want: 40960},
		{name: "smallest key wins", config: `{"max_position_embeddings": 8192, "n_positions": 4096, "seq_len": 16384}`, want: 4096},
		{name: "GPT-2 n_positions", config: `{"n_positions": 1024}`, want: 1024},
		{name: "ChatGLM seq_length", config: `{"seq_length": 32768}`, want: 32768},
		{name: "null key is absent", config: `{"max_position_embeddings": null, "max_seq_len": 2048}`, want: 2048},
		{name: "model_max_length wins even when larger (Command-R)", config: `{"max_position_embeddings": 8192, "model_max_length": 131072}`, want: 131072},
		{name: "model_max_length zero counts as the smallest key (vLLM quirk)", config: `{"max_position_embeddings": 8192, "model_max_length": 0}`, want: 0},
		{name: "no key: default 2048", config: `{"model_type": "x"}`, want: 2048},
		{name: "no key: requested taken unverified", config: `{"model_type": "x"}`, requested: 100000, want: 100000},
		{name: "tokenizer model_max_length ignored with a config", config: `{"max_position_embeddings": 8192}`, tokMax: 1024, want: 8192},

		// RoPE scaling.
		{name: "yarn: original × factor (Qwen3 long context)", config: `{"max_position_embeddings": 40960, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}`, want: 131072},
		{name: "yarn (DeepSeek V3)", config: `{"model_type": "deepseek_v3", "max_position_embeddings": 163840, "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096, "beta_fast": 32}}`, want: 163840},
		{name: "yarn with top-level original (v4 patch)", config: `{"max_position_embeddings": 9999, "original_max_position_embeddings": 2048, "rope_scaling": {"rope_type": "yarn", "factor": 8, "original_max_position_embeddings": 4096}}`, want: 16384},
		{name: "yarn without original", config: `{"max_position_embeddings": 4096, "rope_scaling": {"rope_type": "yarn", "factor": 4}}`, wantErr: "yarn rope scaling without original_max_position_embeddings"},
		{name: "linear factor", config: `{"max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 2.0}}`, want: 8192},
		{name: "dynamic factor", config: `{"max_position_embeddings": 4096, "rope_scaling": {"type": "dynamic", "factor": 1.5}}`, want: 6144},
		{name: "llama3 rope is not scaled (Llama 3.1)", config: `{"model_type": "llama", "max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}}`, want: 131072},
		{name: "default rope without factor", config: `{"max_position_embeddings": 4096, "rope_parameters": {"rope_type": "default", "rope_theta": 10000}}`, want: 4096},
		{name: "mrope is default", config: `{"max_position_embeddings": 32768, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}`, want: 32768},
		{name: "rope_scaling wins over rope_parameters", config: `{"max_position_embeddings": 1000, "rope_scaling": {"type": "linear", "factor": 3}, "rope_parameters": {"rope_type": "linear", "factor": 5}}`, want: 3000},
		{name: "empty rope_scaling", config: `{"max_position_embeddings": 1000, "rope_scaling": {}}`, want: 1000},
		{name: "gemma3 is exempt", config: `{"model_type": "gemma3_text", "max_position_embeddings": 131072, "rope_scaling": {"rope_type": "linear", "factor": 8.0}}`, want: 131072},
		{name: "per layer type parameters", config: `{"max_position_embeddings": 1000, "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 4}, "sliding_attention": {"rope_type": "default"}}}`, want: 4000},
		{name: "longrope defaults to the original length (Phi-3)", config: `{"max_position_embeddings": 131072, "original_max_position_embeddings": 4096, "rope_scaling": {"type": "su", "long_factor": [1.0], "short_factor": [1.0]}}`, want: 4096},
		{name: "longrope with requested up to the derived length", config: `{"max_position_embeddings": 131072, "original_max_position_embeddings": 4096, "rope_scaling": {"type": "longrope"}}`, requested: 131072, want: 131072},
		{name: "conflicting rope types", config: `{"max_position_embeddings": 1000, "rope_scaling": {"type": "linear", "rope_type": "yarn"}}`, wantErr: `conflicting rope_type="yarn" and type="linear"`},
		{name: "su and longrope agree", config: `{"max_position_embeddings": 1000, "original_max_position_embeddings": 500, "rope_scaling": {"type": "su", "rope_type": "longrope"}}`, want: 500},
		{name: "rope without type", config: `{"max_position_embeddings": 1000, "rope_scaling": {"factor": 2}}`, wantErr: "no rope_type"},
		{name: "rope not an object", config: `{"max_position_embeddings": 1000, "rope_scaling": "linear"}`, wantErr: "rope_scaling: want an object, got string"},

		// Multimodal configs: the text config decides.
		{name: "text_config (Gemma 3 multimodal)", config: `{"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "max_position_embeddings": 131072, "rope_scaling": {"rope_type": "linear", "factor": 8}}, "vision_config": {"max_position_embeddings": 4096}}`, want: 131072},
		{name: "text_config without model_type takes the outer one", config: `{"model_type": "gemma3", "text_config": {"max_position_embeddings": 8192, "rope_scaling": {"rope_type": "linear", "factor": 8}}}`, want: 8192},
		{name: "text_config scaled", config: `{"model_type": "qwen2_vl", "max_position_embeddings": 1, "text_config": {"max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 2}}}`, want: 8192},
		{name: "null text_config is no text config", config: `{"max_position_embeddings": 4096, "text_config": null}`, want: 4096},
		{name: "two text configs", config: `{"decoder": {"max_position_embeddings": 1}, "text_config": {"max_position_embeddings": 2}}`, wantErr: "multiple text configs [decoder text_config]"},

		// --max-model-len against the derived length.
		{name: "requested below derived", config: `{"max_position_embeddings": 40960}`, requested: 8192, want: 8192},
		{name: "requested equal to derived", config: `{"max_position_embeddings": 40960}`, requested: 40960, want: 40960},
		{name: "requested above derived", config: `{"max_position_embeddings": 40960}`, requested: 65536,
			wantErr: "user-specified max_model_len (65536) is greater than the derived max_model_len (max_position_embeddings=40960 or model_max_length=None in model's config.json); to allow a longer context set VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"},
		{name: "requested above derived, allowed", config: `{"max_position_embeddings": 40960}`, requested: 65536, allowLong: true, want: 65536},
		{name: "requested above scaled yarn", config: `{"max_position_embeddings": 40960, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}`, requested: 131073,
			wantErr: "(max_position_embeddings=131072 or model_max_length=None"},
		{name: "requested above derived but within model_max_length", config: `{"max_position_embeddings": 4096, "model_max_length": 8192, "rope_scaling": {"rope_type": "yarn", "factor": 2, "original_max_position_embeddings": 1024}}`, requested: 8192,
			want: 8192},
		{name: "requested above derived and model_max_length", config: `{"max_position_embeddings": 4096, "model_max_length": 8192, "rope_scaling": {"rope_type": "yarn", "factor": 2, "original_max_position_embeddings": 1024}}`, requested: 8193,
			wantErr: "(model_max_length=2048 or model_max_length=8192 in model's config.json)"},
		{name: "wrong type of key", config: `{"max_position_embeddings": "4k"}`, wantErr: "max_position_embeddings: want a number, got string"},

		// No config.json: tokenizer_config.json's model_max_length when sane.
		{name: "no config: tokenizer model_max_length", tokMax: 131072, want: 131072},
		{name: "no config: requested", tokMax: 131072, requested: 4096, want: 4096},
		{name: "no config: requested above tokenizer limit", tokMax: 4096, requested: 8192, wantErr: "greater than model_max_length=4096 in tokenizer_config.json"},
		{name: "no config: requested above tokenizer limit, allowed", tokMax: 4096, requested: 8192, allowLong: true, want: 8192},
		{name: "no config: 1e30 means no limit", tokMax: 1e30, wantErr: "no usable model_max_length in tokenizer_config.json (1e+30): pass --max-model-len"},
		{name: "no config: 1e30 with requested", tokMax: 1e30, requested: 32768, want: 32768},
		{name: "no config, no limit", wantErr: "(None): pass --max-model-len"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var config map[string]any
			if tt.config != "" {
				if err := json.Unmarshal([]byte(tt.config), &config); err != nil {
					t.Fatal(err)
				}
			}
			got, err := deriveMaxModelLen(context.Background(), config, TokenizerConfig{ModelMaxLength: tt.tokMax}, tt.requested, tt.allowLong)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q (got %d)", err, tt.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("max_model_len = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestAllowLongMaxModelLen(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "1": true, "true": true, " TRUE ": true, "yes": false} {
		t.Setenv(allowLongEnv, v)
		if got := allowLongMaxModelLen(); got != want {
			t.Errorf("%s=%q: allowLongMaxModelLen = %v, want %v", allowLongEnv, v, got, want)
		}
	}
}
