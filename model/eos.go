package model

import (
	"fmt"
	"math"
)

// eosTokenIDs picks the end-of-sequence ids: generation_config.json's eos_token_id, else config.json's,
// else the id of the tokenizer's eos_token. Each may be an int or a list of ints; null counts as absent.
func eosTokenIDs(genConfig, config map[string]any, eosToken string, tokenToID func(string) (int, bool)) ([]int, error) {
	for _, src := range []struct {
		file string
		obj  map[string]any
	}{{generationConfigFile, genConfig}, {configFile, config}} {
		ids, err := tokenIDs(src.obj["eos_token_id"])
		if err != nil {
			return nil, fmt.Errorf("%s: eos_token_id: %w", src.file, err)
		}
		if len(ids) > 0 {
			return ids, nil
		}
	}
	if eosToken == "" {
		return nil, nil
	}
	id, ok := tokenToID(eosToken)
	if !ok {
		return nil, fmt.Errorf("%s: eos_token %q is not in the tokenizer's vocabulary", tokenizerConfigFile, eosToken)
	}
	return []int{id}, nil
}

// tokenIDs reads an int or a list of ints.
func tokenIDs(v any) ([]int, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case float64:
		id, err := tokenID(v)
		if err != nil {
			return nil, err
		}
		return []int{id}, nil
	case []any:
		ids := make([]int, 0, len(v))
		for i, item := range v {
			f, ok := item.(float64)
			if !ok {
				return nil, fmt.Errorf("entry %d: want an integer, got %s", i, jsonType(item))
			}
			id, err := tokenID(f)
			if err != nil {
				return nil, fmt.Errorf("entry %d: %w", i, err)
			}
			ids = append(ids, id)
		}
		return ids, nil
	default:
		return nil, fmt.Errorf("want an integer or a list of integers, got %s", jsonType(v))
	}
}

func tokenID(f float64) (int, error) {
	if f != math.Trunc(f) || f < 0 || f > math.MaxInt32 {
		return 0, fmt.Errorf("%v is not a token id", f)
	}
	return int(f), nil
}
