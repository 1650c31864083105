package enginesim

import (
	"slices"

	"github.com/vrender/vrender/protocol"
)

// choicePlan is one choice's whole output, decided before it is sent.
type choicePlan struct {
	tokens     []int
	finish     string // "stop" or "length"
	stopReason int    // the stop token id when hasStop
	hasStop    bool
}

// planLimits are the request's stopping rules.
type planLimits struct {
	maxTokens int   // output budget, already capped by the context window
	minTokens int   // EOS and stop tokens are suppressed before this many tokens
	ignoreEOS bool  // the model's EOS does not stop (stop_token_ids still do)
	stopIDs   []int // stop_token_ids, plus the model's other EOS ids unless ignore_eos
}

// limitsFor derives the stopping rules vLLM applies: max_tokens (or the
// room left in the context when absent), min_tokens, ignore_eos, and
// stop_token_ids to which generation_config's secondary EOS ids are added
// unless ignore_eos (SamplingParams.update_from_generation_config).
func (k *answerKit) limitsFor(p *protocol.SamplingParams, maxTokensSet bool, promptLen, maxModelLen int) planLimits {
	room := 1 << 30
	if maxModelLen > 0 {
		room = max(maxModelLen-promptLen, 1)
	}
	budget := room
	if maxTokensSet && p.MaxTokens != nil {
		budget = min(*p.MaxTokens, room)
	}
	l := planLimits{maxTokens: budget, minTokens: p.MinTokens, ignoreEOS: p.IgnoreEOS, stopIDs: p.StopTokenIDs}
	if !p.IgnoreEOS && len(k.otherEOS) > 0 {
		l.stopIDs = append(slices.Clone(p.StopTokenIDs), k.otherEOS...)
	}
	return l
}

// plan runs the answer through vLLM's stop checks (check_stop order:
// min_tokens, EOS, stop token, length). base is what the model "wants" to
// say; eos means it then ends with the model's EOS. With ignore_eos, or
// while min_tokens is not reached, filler text extends the answer; an EOS
// or stop token sampled before min_tokens is dropped, as the sampler masks
// them.
func (k *answerKit) plan(base []int, eos bool, l planLimits) choicePlan {
	out := make([]int, 0, min(l.maxTokens, len(base)+1))
	endsWithEOS := eos && k.hasEOS && !l.ignoreEOS
	i, fill := 0, 0
	for len(out) < l.maxTokens {
		var t int
		switch {
		case i < len(base):
			t = base[i]
			i++
		case (l.ignoreEOS || len(out) < l.minTokens) && len(k.filler) > 0:
			t = k.filler[fill%len(k.filler)]
			fill++
		case endsWithEOS && len(out) >= l.minTokens:
			t = k.eos
		default:
			// A scripted answer without EOS simply ends.
			return choicePlan{tokens: out, finish: "stop"}
		}
		isEOS := k.hasEOS && !l.ignoreEOS && t == k.eos
		isStop := slices.Contains(l.stopIDs, t)
		if (isEOS || isStop) && len(out) < l.minTokens {
			continue
		}
		out = append(out, t)
		switch {
		case isEOS:
			return choicePlan{tokens: out, finish: "stop"}
		case isStop:
			return choicePlan{tokens: out, finish: "stop", stopReason: t, hasStop: true}
		}
	}
	return choicePlan{tokens: out, finish: "length"}
}
