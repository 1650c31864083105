package model

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestEOSTokenIDs(t *testing.T) {
	vocab := map[string]int{"</s>": 2, "<|eot|>": 7}
	lookup := func(s string) (int, bool) { id, ok := vocab[s]; return id, ok }
	tests := []struct {
		name      string
		genConfig string
		config    string
		eosToken  string
		want      []int
		wantErr   string
	}{
		{name: "generation_config list (Llama 3.1)", genConfig: `{"eos_token_id": [128001, 128008, 128009]}`, config: `{"eos_token_id": 128001}`, eosToken: "</s>", want: []int{128001, 128008, 128009}},
		{name: "generation_config int", genConfig: `{"eos_token_id": 151645}`, eosToken: "</s>", want: []int{151645}},
		{name: "config.json when generation_config has none", genConfig: `{"temperature": 0.6}`, config: `{"eos_token_id": [1, 106]}`, eosToken: "</s>", want: []int{1, 106}},
		{name: "null falls through", genConfig: `{"eos_token_id": null}`, config: `{"eos_token_id": null}`, eosToken: "<|eot|>", want: []int{7}},
		{name: "empty list falls through", genConfig: `{"eos_token_id": []}`, eosToken: "</s>", want: []int{2}},
		{name: "tokenizer eos_token", eosToken: "</s>", want: []int{2}},
		{name: "nothing", want: nil},
		{name: "eos_token not in vocabulary", eosToken: "<nope>", wantErr: `eos_token "<nope>" is not in the tokenizer's vocabulary`},
		{name: "bad type", genConfig: `{"eos_token_id": "2"}`, wantErr: "generation_config.json: eos_token_id: want an integer or a list of integers, got string"},
		{name: "bad list entry", config: `{"eos_token_id": [2, "x"]}`, wantErr: "config.json: eos_token_id: entry 1: want an integer, got string"},
		{name: "fraction", config: `{"eos_token_id": 2.5}`, wantErr: "2.5 is not a token id"},
		{name: "negative", genConfig: `{"eos_token_id": [-1]}`, wantErr: "entry 0: -1 is not a token id"},
	}
	decode := func(t *testing.T, s string) map[string]any {
		t.Helper()
		if s == "" {
			return nil
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := eosTokenIDs(decode(t, tt.genConfig), decode(t, tt.config), tt.eosToken, lookup)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("eos ids = %v, want %v", got, tt.want)
			}
		})
	}
}
