package model

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// maxLenKeys are the config.json keys vLLM's _get_and_verify_max_len takes the context length from
// (OPT, GPT-2, MPT, ChatGLM2, Command-R, Whisper, others); the smallest present wins.
var maxLenKeys = []string{
	"max_position_embeddings",
	"n_positions",
	"max_seq_len",
	"seq_length",
	"model_max_length",
	"max_target_positions",
	"max_sequence_length",
	"max_seq_length",
	"seq_len",
}

// textConfigKeys are where transformers' get_text_config finds the text part of a composite config.
var textConfigKeys = []string{"text_encoder", "decoder", "generator", "text_config"}

const (
	// defaultMaxModelLen is what vLLM assumes when config.json has none of maxLenKeys.
	defaultMaxModelLen = 2048
	// saneModelMaxLength bounds tokenizer_config.json's model_max_length: transformers writes 1e30
	// ("no limit") when a model does not set one.
	saneModelMaxLength = 1e9
	allowLongEnv       = "VLLM_ALLOW_LONG_MAX_MODEL_LEN"
)

// allowLongMaxModelLen reads vLLM's escape hatch for a --max-model-len above the derived one.
func allowLongMaxModelLen() bool {
	v := strings.ToLower(strings.TrimSpace(os.Getenv(allowLongEnv)))
	return v == "1" || v == "true"
}

// deriveMaxModelLen is vLLM's _get_and_verify_max_len for a generative model (vllm/config/model.py):
// the smallest length key of the text config, replaced by model_max_length when the config sets it,
// scaled by the RoPE factor; requested (--max-model-len, 0 = none) may not exceed it unless allowLong.
// The tokenizer config counts only without config.json, where vLLM would refuse to start at all.
func deriveMaxModelLen(ctx context.Context, config map[string]any, tok TokenizerConfig, requested int, allowLong bool) (int, error) {
	if config == nil {
		return maxLenWithoutConfig(tok, requested, allowLong)
	}
	text, err := textConfig(config)
	if err != nil {
		return 0, err
	}

	derived, key := math.Inf(1), ""
	for _, k := range maxLenKeys {
		v, ok, err := configNumber(text, k)
		if err != nil {
			return 0, err
		}
		if ok && v < derived {
			derived, key = v, k
		}
	}
	// Command-R / Cohere: model_max_length wins even over smaller keys.
	modelMaxLength, hasModelMaxLength, _ := configNumber(text, "model_max_length")
	if hasModelMaxLength && modelMaxLength != 0 {
		derived, key = modelMaxLength, "model_max_length"
	}
	if math.IsInf(derived, 1) {
		if requested > 0 {
			return requested, nil // vLLM takes it unverified: there is nothing to check it against
		}
		slog.WarnContext(ctx, "config.json has no context length key; assuming the default",
			"keys", maxLenKeys, "max_model_len", defaultMaxModelLen)
		derived = defaultMaxModelLen
	}

	rope, err := ropeParameters(text)
	if err != nil {
		return 0, err
	}
	// Gemma 3's max_position_embeddings already includes its RoPE scaling.
	if len(rope) > 0 && !strings.Contains(modelType(text, config), "gemma3") {
		scaling := 1.0
		for _, rp := range rope {
			if rp.ropeType == "longrope" || rp.ropeType == "llama3" {
				continue
			}
			if rp.hasFactor {
				scaling = rp.factor // vLLM assumes every layer type has the same factor
			}
			if rp.ropeType == "yarn" {
				if !rp.hasOriginalMax {
					return 0, fmt.Errorf("config.json: yarn rope scaling without original_max_position_embeddings")
				}
				derived = rp.originalMax
			}
		}
		derived *= scaling
	}

	if requested == 0 {
		// LongRoPE degrades short sequences past the original length: default to it.
		if slices.ContainsFunc(rope, func(rp ropeParams) bool { return rp.ropeType == "longrope" }) {
			if v, ok, _ := configNumber(text, "original_max_position_embeddings"); ok {
				return int(v), nil
			}
		}
		return int(derived), nil
	}
	if float64(requested) > derived && (!hasModelMaxLength || float64(requested) > modelMaxLength) {
		msg := fmt.Sprintf("user-specified max_model_len (%d) is greater than the derived max_model_len (%s=%s or model_max_length=%s in model's config.json)",
			requested, key, pyNumber(derived), optNumber(modelMaxLength, hasModelMaxLength))
		if !allowLong {
			return 0, fmt.Errorf("%s; to allow a longer context set %s=1 (positions past the derived length give wrong results with RoPE and fail with absolute position embeddings)", msg, allowLongEnv)
		}
		slog.WarnContext(ctx, msg, "env", allowLongEnv)
	}
	return requested, nil
}

// maxLenWithoutConfig handles a model directory without config.json (the npm-packaged tokenizers, a
// bare tokenizer directory): tokenizer_config.json's model_max_length stands in for the config.
func maxLenWithoutConfig(tok TokenizerConfig, requested int, allowLong bool) (int, error) {
	limit := tok.ModelMaxLength
	sane := limit > 0 && limit < saneModelMaxLength
	switch {
	case requested > 0 && sane && float64(requested) > limit && !allowLong:
		return 0, fmt.Errorf("user-specified max_model_len (%d) is greater than model_max_length=%s in tokenizer_config.json (there is no config.json); set %s=1 to allow it",
			requested, pyNumber(limit), allowLongEnv)
	case requested > 0:
		return requested, nil
	case sane:
		return int(limit), nil
	}
	return 0, fmt.Errorf("no config.json and no usable model_max_length in tokenizer_config.json (%s): pass --max-model-len",
		optNumber(limit, limit != 0))
}

// textConfig is transformers' get_text_config: the one nested text config of a composite (multimodal)
// config, else the config itself.
func textConfig(config map[string]any) (map[string]any, error) {
	var found []string
	var text map[string]any
	for _, k := range textConfigKeys {
		if sub, ok := config[k].(map[string]any); ok {
			found = append(found, k)
			text = sub
		}
	}
	switch len(found) {
	case 0:
		return config, nil
	case 1:
		return text, nil
	}
	return nil, fmt.Errorf("config.json: multiple text configs %v", found)
}

// modelType is the text config's model_type; a nested config that omits it gets the outer one (in
// transformers the sub-config class always carries one).
func modelType(text, config map[string]any) string {
	if t, ok := text["model_type"].(string); ok {
		return t
	}
	t, _ := config["model_type"].(string)
	return t
}

type ropeParams struct {
	ropeType       string
	factor         float64
	hasFactor      bool
	originalMax    float64
	hasOriginalMax bool
}

// ropeParameters reads the RoPE scaling of a text config as vLLM sees it after patch_rope_parameters:
// rope_scaling (the transformers v4 name, which wins) or rope_parameters, flat or one entry per layer
// type, "type" accepted for "rope_type", legacy "su" read as "longrope" and "mrope" as "default".
func ropeParameters(text map[string]any) ([]ropeParams, error) {
	key := "rope_scaling"
	raw := text[key]
	if raw == nil {
		key = "rope_parameters"
		raw = text[key]
	}
	if raw == nil {
		return nil, nil
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("config.json: %s: want an object, got %s", key, jsonType(raw))
	}
	if len(obj) == 0 {
		return nil, nil // vLLM reads {} as "per layer type, no layers"
	}
	layers := []map[string]any{obj}
	if isPerLayerType(obj) {
		layers = layers[:0]
		for _, name := range slices.Sorted(maps.Keys(obj)) {
			layers = append(layers, obj[name].(map[string]any))
		}
	}
	// vLLM's patch for transformers v4 copies a top-level original_max_position_embeddings over the
	// parameters' own.
	topOriginal, hasTopOriginal, err := configNumber(text, "original_max_position_embeddings")
	if err != nil {
		return nil, err
	}

	out := make([]ropeParams, 0, len(layers))
	for _, layer := range layers {
		rp, err := parseRopeParams(layer)
		if err != nil {
			return nil, fmt.Errorf("config.json: %s: %w", key, err)
		}
		if hasTopOriginal && len(layers) == 1 {
			rp.originalMax, rp.hasOriginalMax = topOriginal, true
		}
		out = append(out, rp)
	}
	return out, nil
}

// isPerLayerType tells {"full_attention": {…}, "sliding_attention": {…}} from a flat parameter set.
func isPerLayerType(obj map[string]any) bool {
	for _, v := range obj {
		if _, ok := v.(map[string]any); !ok {
			return false
		}
	}
	return true
}

func parseRopeParams(obj map[string]any) (ropeParams, error) {
	newType, hasNew := obj["rope_type"].(string)
	oldType, hasOld := obj["type"].(string)
	var rp ropeParams
	switch {
	case hasNew && hasOld && newType != oldType &&
		!(oldType == "su" && newType == "longrope") && !(oldType == "mrope" && newType == "default"):
		return rp, fmt.Errorf("conflicting rope_type=%q and type=%q", newType, oldType)
	case hasNew:
		rp.ropeType = newType
	case hasOld:
		rp.ropeType = oldType
	default:
		return rp, fmt.Errorf("no rope_type")
	}
	switch rp.ropeType {
	case "su":
		rp.ropeType = "longrope"
	case "mrope":
		rp.ropeType = "default"
	}
	var err error
	if rp.factor, rp.hasFactor, err = configNumber(obj, "factor"); err != nil {
		return rp, err
	}
	if rp.originalMax, rp.hasOriginalMax, err = configNumber(obj, "original_max_position_embeddings"); err != nil {
		return rp, err
	}
	return rp, nil
}

// configNumber reads an optional numeric key; null counts as absent, as getattr(config, key, None) does.
func configNumber(obj map[string]any, key string) (float64, bool, error) {
	switch v := obj[key].(type) {
	case nil:
		return 0, false, nil
	case float64:
		return v, true, nil
	default:
		return 0, false, fmt.Errorf("config.json: %s: want a number, got %s", key, jsonType(v))
	}
}

// pyNumber formats a length as Python prints it: integers without a fraction.
func pyNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e16 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func optNumber(v float64, ok bool) string {
	if !ok {
		return "None"
	}
	return pyNumber(v)
}
