package model

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadChatTemplates(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string // relative path → content
		tokCfg  string            // tokenizer_config.json content, "" = none
		want    map[string]string
		wantErr string
	}{
		{
			name:   "string in tokenizer_config",
			tokCfg: `{"chat_template": "{{ messages }}"}`,
			want:   map[string]string{"default": "{{ messages }}"},
		},
		{
			name:   "named list in tokenizer_config",
			tokCfg: `{"chat_template": [{"name": "default", "template": "D"}, {"name": "tool_use", "template": "T"}]}`,
			want:   map[string]string{"default": "D", "tool_use": "T"},
		},
		{
			name:   "chat_template.jinja replaces tokenizer_config's",
			files:  map[string]string{chatTemplateFile: "J\n"},
			tokCfg: `{"chat_template": [{"name": "default", "template": "D"}, {"name": "rag", "template": "R"}]}`,
			want:   map[string]string{"default": "J\n"},
		},
		{
			name: "additional_chat_templates directory",
			files: map[string]string{
				chatTemplateFile: "J",
				"additional_chat_templates/tool_use.jinja": "T",
				"additional_chat_templates/notes.txt":      "ignored",
			},
			want: map[string]string{"default": "J", "tool_use": "T"},
		},
		{
			name:   "only additional templates, legacy json fills default",
			files:  map[string]string{"additional_chat_templates/rag.jinja": "R", chatTemplateJSONFile: `{"chat_template": "P"}`},
			tokCfg: `{"chat_template": "ignored: files win"}`,
			want:   map[string]string{"rag": "R", "default": "P"},
		},
		{
			name:  "chat_template.json alone",
			files: map[string]string{chatTemplateJSONFile: `{"chat_template": "P"}`},
			want:  map[string]string{"default": "P"},
		},
		{
			name:   "chat_template.json does not override tokenizer_config",
			files:  map[string]string{chatTemplateJSONFile: `{"chat_template": "P"}`},
			tokCfg: `{"chat_template": "D"}`,
			want:   map[string]string{"default": "D"},
		},
		{
			name:   "no template",
			tokCfg: `{"eos_token": "</s>"}`,
			want:   nil,
		},
		{name: "template of wrong type", tokCfg: `{"chat_template": 3}`, wantErr: "chat_template: want a string or a list"},
		{name: "list entry of wrong type", tokCfg: `{"chat_template": ["x"]}`, wantErr: "entry 0: want an object, got string"},
		{name: "list entry without template", tokCfg: `{"chat_template": [{"name": "x"}]}`, wantErr: `entry 0: want string "name" and "template"`},
		{name: "bad chat_template.json", files: map[string]string{chatTemplateJSONFile: `{"chat_template": false}`}, wantErr: "chat_template.json: chat_template"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				mustWrite(t, filepath.Join(dir, filepath.FromSlash(name)), content)
			}
			var tokCfg map[string]any
			if tt.tokCfg != "" {
				if err := json.Unmarshal([]byte(tt.tokCfg), &tokCfg); err != nil {
					t.Fatal(err)
				}
			}
			got, err := loadChatTemplates(dir, tokCfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("templates = %q, want %q", got, tt.want)
			}
		})
	}
}
