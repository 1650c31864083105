package model

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// defaultTemplate is the name transformers gives the template used when none is asked for.
const defaultTemplate = "default"

// loadChatTemplates collects a tokenizer directory's chat templates by name, with transformers'
// precedence:
//  1. chat_template.jinja ("default") and additional_chat_templates/<name>.jinja: when any exists they
//     replace whatever tokenizer_config.json says;
//  2. else tokenizer_config.json's chat_template, a string ("default") or a list of {name, template};
//  3. chat_template.json, the older processor file, fills in "default" when neither gave one
//     (vLLM reads it through the processor of multimodal models).
func loadChatTemplates(dir string, tokCfg map[string]any) (map[string]string, error) {
	templates, err := templateFiles(dir)
	if err != nil {
		return nil, err
	}
	if len(templates) == 0 {
		if templates, err = configTemplates(tokCfg["chat_template"]); err != nil {
			return nil, fmt.Errorf("%s: chat_template: %w", filepath.Join(dir, tokenizerConfigFile), err)
		}
	}
	if _, ok := templates[defaultTemplate]; !ok {
		path := filepath.Join(dir, chatTemplateJSONFile)
		obj, err := readJSONObject(path)
		if err != nil {
			return nil, err
		}
		if obj != nil {
			legacy, err := configTemplates(obj["chat_template"])
			if err != nil {
				return nil, fmt.Errorf("%s: chat_template: %w", path, err)
			}
			if tmpl, ok := legacy[defaultTemplate]; ok {
				if templates == nil {
					templates = map[string]string{}
				}
				templates[defaultTemplate] = tmpl
			}
		}
	}
	return templates, nil
}

// templateFiles reads chat_template.jinja and additional_chat_templates/*.jinja; nil when there are none.
func templateFiles(dir string) (map[string]string, error) {
	var templates map[string]string
	add := func(name, path string) error {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if templates == nil {
			templates = map[string]string{}
		}
		templates[name] = string(data)
		return nil
	}
	defaultPath := filepath.Join(dir, chatTemplateFile)
	if isFile(defaultPath) {
		if err := add(defaultTemplate, defaultPath); err != nil {
			return nil, err
		}
	}
	extraDir := filepath.Join(dir, chatTemplatesDir)
	entries, err := os.ReadDir(extraDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".jinja")
		if !ok || name == "" {
			continue
		}
		if err := add(name, filepath.Join(extraDir, e.Name())); err != nil {
			return nil, err
		}
	}
	return templates, nil
}

// configTemplates reads a chat_template value: absent, a string, or a list of {"name", "template"}.
func configTemplates(v any) (map[string]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return map[string]string{defaultTemplate: v}, nil
	case []any:
		out := make(map[string]string, len(v))
		for i, item := range v {
			obj, ok := item.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("entry %d: want an object, got %s", i, jsonType(item))
			}
			name, okName := obj["name"].(string)
			tmpl, okTmpl := obj["template"].(string)
			if !okName || !okTmpl {
				return nil, fmt.Errorf("entry %d: want string \"name\" and \"template\"", i)
			}
			out[name] = tmpl
		}
		return out, nil
	default:
		return nil, fmt.Errorf("want a string or a list of {name, template}, got %s", jsonType(v))
	}
}
