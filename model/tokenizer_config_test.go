package model

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadTokenizerConfig(t *testing.T) {
	tests := []struct {
		name    string
		config  string // tokenizer_config.json; "" = no file
		stm     string // special_tokens_map.json; "" = no file
		want    TokenizerConfig
		wantErr string
	}{
		{
			name:   "strings (Qwen3 style)",
			config: `{"bos_token": null, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "unk_token": null, "add_bos_token": false, "clean_up_tokenization_spaces": false, "model_max_length": 131072, "tokenizer_class": "Qwen2Tokenizer", "additional_special_tokens": ["<|im_start|>", "<|im_end|>"], "added_tokens_decoder": {}}`,
			want: TokenizerConfig{
				EOSToken: "<|im_end|>", PADToken: "<|endoftext|>",
				AdditionalSpecialTokens:   []string{"<|im_start|>", "<|im_end|>"},
				AddBOSToken:               new(false),
				CleanUpTokenizationSpaces: new(false),
				ModelMaxLength:            131072,
				TokenizerClass:            "Qwen2Tokenizer",
			},
		},
		{
			name: "AddedToken objects (DeepSeek V3 style)",
			config: `{"add_bos_token": true, "add_eos_token": false,
				"bos_token": {"__type": "AddedToken", "content": "<｜begin▁of▁sentence｜>", "lstrip": false, "normalized": true, "rstrip": false, "single_word": false},
				"eos_token": {"__type": "AddedToken", "content": "<｜end▁of▁sentence｜>", "lstrip": false, "normalized": true, "rstrip": false, "single_word": false},
				"unk_token": null, "model_max_length": 1e30}`,
			want: TokenizerConfig{
				BOSToken: "<｜begin▁of▁sentence｜>", EOSToken: "<｜end▁of▁sentence｜>",
				AddBOSToken: new(true), AddEOSToken: new(false), ModelMaxLength: 1e30,
			},
		},
		{
			name:   "plain content objects in every named slot and the list",
			config: `{"sep_token": {"content": "[SEP]"}, "cls_token": "[CLS]", "mask_token": {"content": "[MASK]"}, "additional_special_tokens": [{"content": "<a>"}, "<b>"]}`,
			want: TokenizerConfig{
				SEPToken: "[SEP]", CLSToken: "[CLS]", MaskToken: "[MASK]",
				AdditionalSpecialTokens: []string{"<a>", "<b>"},
			},
		},
		{
			name:   "extra_special_tokens as named object (Gemma 3)",
			config: `{"eos_token": "<end_of_turn>", "extra_special_tokens": {"boi_token": "<start_of_image>", "image_token": {"content": "<image_soft_token>"}}}`,
			want: TokenizerConfig{
				EOSToken:           "<end_of_turn>",
				ExtraSpecialTokens: map[string]string{"boi_token": "<start_of_image>", "image_token": "<image_soft_token>"},
			},
		},
		{
			name:   "extra_special_tokens as list joins the additional tokens",
			config: `{"additional_special_tokens": ["<a>"], "extra_special_tokens": ["<a>", "<b>"]}`,
			want:   TokenizerConfig{AdditionalSpecialTokens: []string{"<a>", "<b>"}},
		},
		{
			name:   "legacy special_tokens_map overrides and extends",
			config: `{"eos_token": "</s>", "bos_token": "<s>", "additional_special_tokens": ["<x>"]}`,
			stm:    `{"eos_token": {"content": "<eot>", "lstrip": false}, "additional_special_tokens": ["<x>", "<y>"]}`,
			want: TokenizerConfig{
				BOSToken: "<s>", EOSToken: "<eot>", AdditionalSpecialTokens: []string{"<x>", "<y>"},
			},
		},
		{
			name:   "modern config ignores special_tokens_map",
			config: `{"eos_token": "</s>", "added_tokens_decoder": {}}`,
			stm:    `{"eos_token": "<eot>"}`,
			want:   TokenizerConfig{EOSToken: "</s>"},
		},
		{name: "no file", want: TokenizerConfig{}},
		{name: "special token of wrong type", config: `{"eos_token": 2}`, wantErr: "eos_token: want a string or an AddedToken object, got number"},
		{name: "AddedToken without content", config: `{"bos_token": {"__type": "AddedToken"}}`, wantErr: `bos_token: AddedToken object without a string "content"`},
		{name: "bad list entry", config: `{"additional_special_tokens": ["<a>", 3]}`, wantErr: "additional_special_tokens[1]: want a string"},
		{name: "list not a list", config: `{"additional_special_tokens": "<a>"}`, wantErr: "additional_special_tokens: want an array, got string"},
		{name: "bool of wrong type", config: `{"add_bos_token": "yes"}`, wantErr: "add_bos_token: want a boolean, got string"},
		{name: "model_max_length of wrong type", config: `{"model_max_length": "4k"}`, wantErr: "model_max_length: want a number, got string"},
		{name: "extra_special_tokens of wrong type", config: `{"extra_special_tokens": 1}`, wantErr: "extra_special_tokens: want an object or an array, got number"},
		{name: "bad special_tokens_map", config: `{"eos_token": "</s>"}`, stm: `{"eos_token": false}`, wantErr: "special_tokens_map.json: eos_token"},
		{name: "not JSON", config: `{"eos_token": `, wantErr: "parse "},
		{name: "null document", config: `null`, wantErr: "want a JSON object, got null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.config != "" {
				mustWrite(t, filepath.Join(dir, tokenizerConfigFile), tt.config)
			}
			if tt.stm != "" {
				mustWrite(t, filepath.Join(dir, specialTokensMapFile), tt.stm)
			}
			got, err := loadTokenizerConfig(dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got.Raw == nil) != (tt.config == "") {
				t.Errorf("Raw = %v, want it set exactly when the file exists", got.Raw)
			}
			got.Raw = nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
