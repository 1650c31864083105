package derender

import "github.com/vrender/vrender/protocol"

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
