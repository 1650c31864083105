package derender

import "github.com/vrender/vrender/protocol"

// maxUsageTokens bounds every token count a client may hand in (the
// request's prompt_tokens, a chunk's usage): vLLM's Python ints never
// wrap, Go's int64 sums would, so absurd counts are refused instead.
// 2^40 is far past any context length, and at most max_n of them plus
// the token ids' lengths stay far below 2^63.
const maxUsageTokens = 1 << 40

// checkUsageCount refuses a count outside ±maxUsageTokens.
func checkUsageCount(name string, v *int) error {
	if v != nil && (*v > maxUsageTokens || *v < -maxUsageTokens) {
		return badRequest("%s (%d) is out of range: token counts must be within ±%d.", name, *v, maxUsageTokens)
	}
	return nil
}

// checkPromptTokens applies checkUsageCount to the request's
// prompt_tokens.
func checkPromptTokens(counts ...int) error {
	for i := range counts {
		if err := checkUsageCount("prompt_tokens", &counts[i]); err != nil {
			return err
		}
	}
	return nil
}

// checkBounds is vLLM's _validate_derender_bounds: it runs before any
// decoding so oversized payloads cost nothing.
func (e *Engine) checkBounds(gens []*protocol.GenerateResponse) error {
	maxN, maxLen, maxLP := e.cfg.MaxNSequences, e.model.MaxModelLen, e.cfg.MaxLogprobs
	if len(gens) > maxN {
		return badRequest("generate_responses count (%d) exceeds server maximum (%d). Set VLLM_MAX_N_SEQUENCES to increase this limit.", len(gens), maxN)
	}
	for _, g := range gens {
		if g.OutputMode != nil && *g.OutputMode == "text" {
			return badRequest("derender requires generate output_mode 'tokens'; got 'text'")
		}
		if len(g.Choices) > maxN {
			return badRequest("choices count (%d) in response '%s' exceeds server maximum (%d).", len(g.Choices), g.RequestID, maxN)
		}
		for _, c := range g.Choices {
			if len(c.TokenIDs) > maxLen {
				return badRequest("token_ids length (%d) in choice %d exceeds max_model_len (%d).", len(c.TokenIDs), c.Index, maxLen)
			}
			if c.Logprobs == nil {
				continue
			}
			if len(c.Logprobs.Content) > maxLen {
				return badRequest("logprobs.content length (%d) in choice %d exceeds max_model_len (%d).", len(c.Logprobs.Content), c.Index, maxLen)
			}
			for _, entry := range c.Logprobs.Content {
				if maxLP >= 0 && len(entry.TopLogprobs) > maxLP {
					return badRequest("top_logprobs count (%d) in choice %d exceeds max_logprobs (%d).", len(entry.TopLogprobs), c.Index, maxLP)
				}
			}
		}
		if u := g.Usage; u != nil {
			if err := checkUsageCount("usage.prompt_tokens", u.PromptTokens); err != nil {
				return err
			}
			if err := checkUsageCount("usage.completion_tokens", u.CompletionTokens); err != nil {
				return err
			}
		}
		if n := promptLogprobsLen(g); n > maxLen {
			return badRequest("prompt_logprobs length (%d) in response '%s' exceeds max_model_len (%d).", n, g.RequestID, maxLen)
		}
	}
	return nil
}

func promptLogprobsLen(g *protocol.GenerateResponse) int {
	if len(g.PromptLogprobs) == 0 || g.PromptLogprobs[0] != '[' {
		return 0
	}
	n, depth, inStr, esc := 0, 0, false, false
	for _, c := range g.PromptLogprobs {
		switch {
		case inStr:
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == ',' && depth == 1:
			n++
		}
	}
	if string(g.PromptLogprobs) != "[]" {
		n++
	}
	return n
}
