package render

import (
	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/model"
)

// specialsOverride is the post-processor transformers builds from
// add_bos_token/add_eos_token: BOS before the text, EOS after it, each when
// set (nil otherwise).
type specialsOverride struct {
	bos, eos *int
}

// rebuildsPostProcessor are the tokenizer classes whose transformers
// implementation replaces tokenizer.json's post-processor with one built
// from add_bos_token (default true) and add_eos_token (default false).
// DeepSeek-V3 ships a ByteLevel-only post-processor under
// LlamaTokenizerFast, so the HF binding alone adds no BOS while transformers
// (and hence vLLM) does.
var rebuildsPostProcessor = map[string]bool{
	"LlamaTokenizer": true, "LlamaTokenizerFast": true,
	"CodeLlamaTokenizer": true, "CodeLlamaTokenizerFast": true,
	"GemmaTokenizer": true, "GemmaTokenizerFast": true,
}

func postProcessorOverride(m *model.Model) *specialsOverride {
	tc := m.TokenizerConfig
	if !rebuildsPostProcessor[tc.TokenizerClass] {
		return nil
	}
	addBOS, addEOS := true, false
	if tc.AddBOSToken != nil {
		addBOS = *tc.AddBOSToken
	}
	if tc.AddEOSToken != nil {
		addEOS = *tc.AddEOSToken
	}
	o := &specialsOverride{}
	if id, ok := m.Tokenizer.TokenToID(tc.BOSToken); addBOS && ok && tc.BOSToken != "" {
		o.bos = &id
	}
	if id, ok := m.Tokenizer.TokenToID(tc.EOSToken); addEOS && ok && tc.EOSToken != "" {
		o.eos = &id
	}
	return o
}

// TokenizePrompt encodes text as vLLM's renderer does: special tokens added
// by transformers' rules when addSpecialTokens, then truncation to
// *truncate tokens (-1 meaning max_model_len) from side ("left", the
// default vLLM gives its tokenizers, or "right").
func (r *Renderer) TokenizePrompt(text string, addSpecialTokens bool, truncate *int, side string) ([]int, error) {
	limit := -2 // no truncation
	if truncate != nil {
		switch t := *truncate; {
		case t == -1:
			limit = r.maxModelLen
		case t < -1:
			return nil, badParam("truncate_prompt_tokens", "truncate_prompt_tokens must be >= -1, got %d", t)
		case r.maxModelLen > 0 && t > r.maxModelLen:
			return nil, badParam("truncate_prompt_tokens", "truncate_prompt_tokens value (%d) is greater than max_model_len (%d). Please request a smaller truncation size.", t, r.maxModelLen)
		default:
			limit = t
		}
	}
	switch side {
	case "", "left", "right":
	default:
		return nil, badParam("truncation_side", "truncation_side must be 'left' or 'right', got %s", pyStrRepr(side))
	}

	st := r.stages.Load()
	defer st.Since(telemetry.StageTokenize, st.Start())
	var ids []int
	if addSpecialTokens && r.post != nil {
		body := r.tok.Encode(text, false)
		ids = make([]int, 0, len(body)+2)
		if r.post.bos != nil {
			ids = append(ids, *r.post.bos)
		}
		ids = append(ids, body...)
		if r.post.eos != nil {
			ids = append(ids, *r.post.eos)
		}
	} else {
		ids = r.tok.Encode(text, addSpecialTokens)
	}
	if limit >= 0 && len(ids) > limit {
		if side == "right" {
			ids = ids[:limit]
		} else {
			ids = ids[len(ids)-limit:]
		}
	}
	return ids, nil
}
