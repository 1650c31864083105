package main

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/vrender/vrender/protocol"
)

// TestLoRAModulesFlag: --lora-modules is read as vLLM's LoRAParserAction
// reads it (the accepted forms of vllm tests/entrypoints/openai/
// test_cli_args.py, and its error messages), and checked as vLLM's
// init_static_loras would load the adapters.
func TestLoRAModulesFlag(t *testing.T) {
	const module2 = `{"name": "module2", "path": "/path/to/module2", "base_model_name": "llama"}`
	tests := []struct {
		name    string
		args    []string
		want    []protocol.LoRAModulePath
		wantErr string
	}{
		{name: "name=path", args: []string{"--enable-lora", "--lora-modules", "module1=/path/to/module1"},
			want: []protocol.LoRAModulePath{{Name: "module1", Path: "/path/to/module1"}}},
		{name: "JSON", args: []string{"--enable-lora", "--lora-modules", module2},
			want: []protocol.LoRAModulePath{{Name: "module2", Path: "/path/to/module2", BaseModelName: "llama"}}},
		{name: "several, both forms, space-separated", args: []string{"--enable-lora", "--lora-modules", "module1=/path/to/module1", module2},
			want: []protocol.LoRAModulePath{{Name: "module1", Path: "/path/to/module1"},
				{Name: "module2", Path: "/path/to/module2", BaseModelName: "llama"}}},
		{name: "repeated flag adds", args: []string{"--lora-modules", "a=/a", "--enable-lora", "--lora-modules=b=/b"},
			want: []protocol.LoRAModulePath{{Name: "a", Path: "/a"}, {Name: "b", Path: "/b"}}},
		{name: "underscore spelling", args: []string{"--enable_lora", "--lora_modules", "a=/a"},
			want: []protocol.LoRAModulePath{{Name: "a", Path: "/a"}}},
		{name: "empty value is no adapter", args: []string{"--lora-modules", ""}},
		{name: "None is no adapter", args: []string{"--lora-modules", "None"}},
		{name: "JSON null base model, 3d flag ignored", args: []string{"--enable-lora", "--lora-modules",
			`{"name": "a", "path": "/a", "base_model_name": null, "is_3d_lora_weight": true}`},
			want: []protocol.LoRAModulePath{{Name: "a", Path: "/a"}}},
		{name: "JSON without a comma is name=path", args: []string{"--enable-lora", "--lora-modules", `{"name":"a=b"}`},
			want: []protocol.LoRAModulePath{{Name: `{"name":"a`, Path: `b"}`}}},

		{name: "needs --enable-lora", args: []string{"--lora-modules", "a=/a"},
			wantErr: `--lora-modules needs --enable-lora (vLLM: "LoRA is not enabled. Use --enable-lora to enable LoRA.")`},
		{name: "invalid JSON", args: []string{"--enable-lora", "--lora-modules", `{"name": "module3", "path": "/path/to/module3"`},
			wantErr: `Invalid JSON format for --lora-modules: {"name": "module3", "path": "/path/to/module3"`},
		{name: "neither form", args: []string{"--enable-lora", "--lora-modules", "invalid_format"},
			wantErr: `Invalid JSON format for --lora-modules: invalid_format`},
		{name: "name=path with a comma is JSON", args: []string{"--enable-lora", "--lora-modules", "a=/x,y"},
			wantErr: `Invalid JSON format for --lora-modules: a=/x,y`},
		{name: "missing path", args: []string{"--enable-lora", "--lora-modules", `{"name": "module4"}`},
			wantErr: `Invalid fields for --lora-modules: {"name": "module4"} - LoRAModulePath.__init__() missing 1 required positional argument: 'path'`},
		{name: "missing both", args: []string{"--enable-lora", "--lora-modules", `{"base_model_name": "x", "x": 1}`},
			wantErr: `Invalid fields for --lora-modules: {"base_model_name": "x", "x": 1} - LoRAModulePath.__init__() got an unexpected keyword argument 'x'`},
		{name: "empty object", args: []string{"--enable-lora", "--lora-modules", `{}`},
			wantErr: `- LoRAModulePath.__init__() missing 2 required positional arguments: 'name' and 'path'`},
		{name: "JSON list", args: []string{"--enable-lora", "--lora-modules", `[{"name": "a", "path": "/a"}]`},
			wantErr: `- LoRAModulePath() argument after ** must be a mapping, not list`},
		{name: "name not a string", args: []string{"--enable-lora", "--lora-modules", `{"name": 5, "path": "/a"}`},
			wantErr: `- name must be a string, not int`},
		{name: "two '='", args: []string{"--enable-lora", "--lora-modules", "a=/x=y"},
			wantErr: `invalid --lora-modules value a=/x=y: name=path takes one '='`},
		{name: "empty name", args: []string{"--enable-lora", "--lora-modules", "=/a"},
			wantErr: `--lora-modules: adapter "" needs a name and a path`},
		{name: "empty path", args: []string{"--enable-lora", "--lora-modules", "a="},
			wantErr: `--lora-modules: adapter "a" needs a name and a path`},
		{name: "duplicate name", args: []string{"--enable-lora", "--lora-modules", "a=/a", `{"name": "a", "path": "/b", "base_model_name": "qwen"}`},
			wantErr: `--lora-modules: the lora adapter 'a' is given twice`},
		{name: "served model's name", args: []string{"--enable-lora", "--lora-modules", "qwen-alias=/a"},
			wantErr: `--lora-modules: the lora adapter 'qwen-alias' has the name of a served model (--served-model-name)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCommand("serve", "", "")
			var f loraFlags
			f.register(c)
			if _, err := c.parse(tc.args, io.Discard); err != nil {
				t.Fatalf("parse %q: %v", tc.args, err)
			}
			got, err := f.adapters([]string{"qwen", "qwen-alias"})
			if tc.wantErr != "" {
				var usage usageError
				if !errors.As(err, &usage) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want a usage error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("adapters %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestServeLoRAUsageErrors: serve and engine-sim refuse bad --lora-modules
// with exit status 2 before loading anything.
func TestServeLoRAUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "/nonexistent/model", "--lora-modules", "a=/a"},
		{"serve", "/nonexistent/model", "--enable-lora", "--lora-modules", "{bad"},
		{"serve", "/nonexistent/model", "--served-model-name", "qwen", "--enable-lora", "--lora-modules", "qwen=/a"},
		{"engine-sim", "--model", "/nonexistent/model", "--enable-lora", "--lora-modules", "a=/a", "a=/b"},
	} {
		var stderr strings.Builder
		if code := run(t.Context(), args, strings.NewReader(""), io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "lora") {
			t.Errorf("%q: exit %d, want 2 with a --lora-modules message; stderr:\n%s", args, code, stderr.String())
		}
	}
}
