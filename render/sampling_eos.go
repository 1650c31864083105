package render

import (
	"slices"

	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
)

// EngineStops are the stop token ids a vLLM engine applies to a request
// once it arrives: the render tier sends stop_token_ids as the client gave
// them (plus server defaults), and the engine merges in the model's EOS ids
// (SamplingParams.update_from_generation_config).
type EngineStops struct {
	// EOS is the tokenizer's eos_token_id, or nil when the request ignores
	// EOS or the tokenizer has none; the engine stops on it separately.
	EOS *int
	// StopTokenIDs is stop_token_ids after the merge: the generation
	// config's eos_token_id ids other than the primary one, then the
	// request's, each once. vLLM builds it from a Python set, whose order
	// is not meaningful; this order is deterministic.
	StopTokenIDs []int
	// All is every id that ends generation (EOS included), ascending: the
	// engine's _all_stop_token_ids, which min_tokens holds back.
	All []int
}

// ApplyEngineStops computes EngineStops for p on model m: primary EOS from
// the tokenizer's eos_token, extra EOS ids from generation_config.json's
// eos_token_id (an int or a list).
func ApplyEngineStops(p protocol.SamplingParams, m *model.Model) EngineStops {
	var primary *int
	if id, ok := m.Tokenizer.TokenToID(m.TokenizerConfig.EOSToken); ok && m.TokenizerConfig.EOSToken != "" {
		primary = &id
	}
	return engineStops(p, primary, generationConfigEOS(m.GenerationConfig))
}

func engineStops(p protocol.SamplingParams, primary *int, genEOS []int) EngineStops {
	var out EngineStops
	all := slices.Clone(p.StopTokenIDs)
	if primary != nil {
		all = append(all, *primary)
		if !p.IgnoreEOS {
			out.EOS = primary
		}
	}
	var extra []int
	for _, id := range genEOS {
		if (primary == nil || id != *primary) && !slices.Contains(extra, id) {
			extra = append(extra, id)
		}
	}
	out.StopTokenIDs = slices.Clone(p.StopTokenIDs)
	if len(extra) > 0 {
		all = append(all, extra...)
		if !p.IgnoreEOS {
			merged := extra
			for _, id := range p.StopTokenIDs {
				if !slices.Contains(merged, id) {
					merged = append(merged, id)
				}
			}
			out.StopTokenIDs = merged
		}
	}
	slices.Sort(all)
	out.All = slices.Compact(all)
	return out
}

// generationConfigEOS reads eos_token_id (an int or a list of ints).
func generationConfigEOS(gc map[string]any) []int {
	switch v := gc["eos_token_id"].(type) {
	case float64:
		return []int{int(v)}
	case []any:
		ids := make([]int, 0, len(v))
		for _, x := range v {
			if f, ok := x.(float64); ok {
				ids = append(ids, int(f))
			}
		}
		return ids
	}
	return nil
}
