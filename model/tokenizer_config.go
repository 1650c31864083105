package model

import (
	"fmt"
	"path/filepath"
	"slices"
)

// TokenizerConfig is the part of tokenizer_config.json that the tokenizer and the renderer read.
// Special tokens are given as their content strings, "" when absent or null.
type TokenizerConfig struct {
	BOSToken  string
	EOSToken  string
	UNKToken  string
	PADToken  string
	SEPToken  string
	CLSToken  string
	MaskToken string
	// ExtraSpecialTokens are the named extra tokens of extra_special_tokens written as an object
	// (Gemma 3's image_token, …).
	ExtraSpecialTokens map[string]string

	AdditionalSpecialTokens []string

	// Pointers because absent and false differ: transformers falls back to class defaults when absent.
	// Note that transformers ignores add_bos_token/add_eos_token for tokenizers loaded from
	// tokenizer.json (the post-processor decides); they are kept here for the renderer to judge.
	AddBOSToken               *bool
	AddEOSToken               *bool
	CleanUpTokenizationSpaces *bool

	// ModelMaxLength is model_max_length, 0 when absent; transformers writes 1e30 for "no limit".
	ModelMaxLength float64
	TokenizerClass string

	// Raw is the whole file, for anything not above (chat_template, added_tokens_decoder, …);
	// nil when the model has no tokenizer_config.json.
	Raw map[string]any
}

// specialTokenKeys are the named special tokens of transformers' SpecialTokensMixin.
var specialTokenKeys = []string{"bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token"}

func loadTokenizerConfig(dir string) (TokenizerConfig, error) {
	path := filepath.Join(dir, tokenizerConfigFile)
	raw, err := readJSONObject(path)
	if err != nil {
		return TokenizerConfig{}, err
	}
	if raw == nil {
		return TokenizerConfig{}, nil
	}
	cfg, err := parseTokenizerConfig(raw)
	if err != nil {
		return TokenizerConfig{}, fmt.Errorf("%s: %w", path, err)
	}

	// Legacy repos keep their special tokens in special_tokens_map.json; transformers lets it override
	// tokenizer_config.json only when the latter predates added_tokens_decoder.
	if _, modern := raw["added_tokens_decoder"]; modern {
		return cfg, nil
	}
	mapPath := filepath.Join(dir, specialTokensMapFile)
	stm, err := readJSONObject(mapPath)
	if err != nil || stm == nil {
		return cfg, err
	}
	if err := cfg.applySpecialTokensMap(stm); err != nil {
		return TokenizerConfig{}, fmt.Errorf("%s: %w", mapPath, err)
	}
	return cfg, nil
}

func parseTokenizerConfig(raw map[string]any) (TokenizerConfig, error) {
	cfg := TokenizerConfig{Raw: raw}
	for _, key := range specialTokenKeys {
		s, err := specialToken(raw[key], key)
		if err != nil {
			return TokenizerConfig{}, err
		}
		*cfg.field(key) = s
	}
	var err error
	if cfg.AdditionalSpecialTokens, err = specialTokenList(raw["additional_special_tokens"], "additional_special_tokens"); err != nil {
		return TokenizerConfig{}, err
	}
	var extra []string
	if cfg.ExtraSpecialTokens, extra, err = extraSpecialTokens(raw["extra_special_tokens"]); err != nil {
		return TokenizerConfig{}, err
	}
	cfg.appendAdditional(extra)
	if cfg.AddBOSToken, err = optBool(raw, "add_bos_token"); err != nil {
		return TokenizerConfig{}, err
	}
	if cfg.AddEOSToken, err = optBool(raw, "add_eos_token"); err != nil {
		return TokenizerConfig{}, err
	}
	if cfg.CleanUpTokenizationSpaces, err = optBool(raw, "clean_up_tokenization_spaces"); err != nil {
		return TokenizerConfig{}, err
	}
	switch v := raw["model_max_length"].(type) {
	case nil:
	case float64:
		cfg.ModelMaxLength = v
	default:
		return TokenizerConfig{}, fmt.Errorf("model_max_length: want a number, got %s", jsonType(v))
	}
	switch v := raw["tokenizer_class"].(type) {
	case nil:
	case string:
		cfg.TokenizerClass = v
	default:
		return TokenizerConfig{}, fmt.Errorf("tokenizer_class: want a string, got %s", jsonType(v))
	}
	return cfg, nil
}

// field returns the struct field of a special token key.
func (c *TokenizerConfig) field(key string) *string {
	switch key {
	case "bos_token":
		return &c.BOSToken
	case "eos_token":
		return &c.EOSToken
	case "unk_token":
		return &c.UNKToken
	case "pad_token":
		return &c.PADToken
	case "sep_token":
		return &c.SEPToken
	case "cls_token":
		return &c.CLSToken
	case "mask_token":
		return &c.MaskToken
	}
	panic("model: unknown special token key " + key)
}

// applySpecialTokensMap overrides the named tokens with the map's and appends its additional tokens that
// are not already listed, as transformers' legacy loading path does.
func (c *TokenizerConfig) applySpecialTokensMap(stm map[string]any) error {
	for _, key := range specialTokenKeys {
		v, ok := stm[key]
		if !ok {
			continue
		}
		s, err := specialToken(v, key)
		if err != nil {
			return err
		}
		*c.field(key) = s
	}
	extra, err := specialTokenList(stm["additional_special_tokens"], "additional_special_tokens")
	if err != nil {
		return err
	}
	c.appendAdditional(extra)
	return nil
}

func (c *TokenizerConfig) appendAdditional(tokens []string) {
	for _, tok := range tokens {
		if !slices.Contains(c.AdditionalSpecialTokens, tok) {
			c.AdditionalSpecialTokens = append(c.AdditionalSpecialTokens, tok)
		}
	}
}

// specialToken reads a special token written as a string or as a serialized AddedToken
// ({"__type": "AddedToken", "content": …} or a plain {"content": …}).
func specialToken(v any, key string) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case map[string]any:
		content, ok := v["content"].(string)
		if !ok {
			return "", fmt.Errorf("%s: AddedToken object without a string \"content\"", key)
		}
		return content, nil
	default:
		return "", fmt.Errorf("%s: want a string or an AddedToken object, got %s", key, jsonType(v))
	}
}

func specialTokenList(v any, key string) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an array, got %s", key, jsonType(v))
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		s, err := specialToken(item, fmt.Sprintf("%s[%d]", key, i))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// extraSpecialTokens reads extra_special_tokens, which transformers accepts as an object of named tokens
// (Gemma 3's image_token, …) or, in v5, as a list that takes the place of additional_special_tokens.
func extraSpecialTokens(v any) (named map[string]string, list []string, err error) {
	switch v := v.(type) {
	case nil:
		return nil, nil, nil
	case []any:
		list, err = specialTokenList(v, "extra_special_tokens")
		return nil, list, err
	case map[string]any:
		named = make(map[string]string, len(v))
		for name, item := range v {
			s, err := specialToken(item, "extra_special_tokens."+name)
			if err != nil {
				return nil, nil, err
			}
			named[name] = s
		}
		return named, nil, nil
	default:
		return nil, nil, fmt.Errorf("extra_special_tokens: want an object or an array, got %s", jsonType(v))
	}
}

func optBool(raw map[string]any, key string) (*bool, error) {
	switch v := raw[key].(type) {
	case nil:
		return nil, nil
	case bool:
		return &v, nil
	default:
		return nil, fmt.Errorf("%s: want a boolean, got %s", key, jsonType(v))
	}
}
