package tokenizer

import "strings"

// addedTokenDecoder is vLLM's _convert_tokens_to_string_with_added_encoders,
// the detokenizer's string conversion for slow tokenizers: runs of ordinary
// tokens go through the decoder, added tokens are kept verbatim, and the
// pieces are joined with a space when spaces_between_special_tokens is set.
type addedTokenDecoder struct {
	added     map[string]bool // get_added_vocab(): contents of all added tokens
	isSpecial func(id int) bool
}

func newAddedTokenDecoder(v detokVocab, isSpecial func(id int) bool) *addedTokenDecoder {
	added := v.AddedTokens()
	a := &addedTokenDecoder{added: make(map[string]bool, len(added)), isSpecial: isSpecial}
	for _, t := range added {
		a.added[t.Content] = true
	}
	return a
}

// isSpecialToken is membership in all_special_tokens, the string form of
// the special ids.
func (a *addedTokenDecoder) isSpecialToken(v detokVocab, tok string) bool {
	id, ok := v.TokenToID(tok)
	return ok && a.isSpecial(id)
}

func (a *addedTokenDecoder) tokensToString(d *Detokenizer, tokens []string) string {
	var pieces, run []string
	for _, tok := range tokens {
		// A skipped special token does not end the current run: vLLM
		// continues without flushing it.
		if d.opts.SkipSpecialTokens && a.isSpecialToken(d.vocab, tok) {
			continue
		}
		if !a.added[tok] {
			run = append(run, tok)
			continue
		}
		if len(run) > 0 {
			pieces = append(pieces, d.vocab.TokensToString(run))
			run = nil
		}
		pieces = append(pieces, tok)
	}
	if len(run) > 0 {
		pieces = append(pieces, d.vocab.TokensToString(run))
	}
	if d.opts.SpacesBetweenSpecialTokens {
		return strings.Join(pieces, " ")
	}
	return strings.Join(pieces, "")
}
