package tokenizer

import "fmt"

// segmentPolicy decides whether the segments between added tokens may be
// cached, and whether the first one needs a key of its own.
//
// HF's AddedVocabulary cuts the raw text around non-normalized added tokens
// (single_word, lstrip and rstrip are settled on the whole text first, so the
// stripped whitespace belongs to the token, not to a segment), then
// normalizes each segment alone and cuts normalized added tokens inside it;
// pre-tokenizers and the model then see pieces of one segment only. So a
// segment's ids are a function of its text and of one position fact: whether
// it starts at offset 0 of the input (Metaspace prepend_scheme "first"
// prepends only there). Every component known here is checked for that; a
// component this function does not know disables the cache, so a new
// pre-tokenizer or normalizer cannot silently make the cache wrong.
func segmentPolicy(norm normalizer, pre []preTokenizer) (firstKeyed bool, err error) {
	if err := normalizerIsLocal(norm); err != nil {
		return false, err
	}
	for i, p := range pre {
		switch pt := p.(type) {
		case *metaspacePreTok:
			if pt.scheme == prependFirst {
				firstKeyed = true
			}
		case *splitPreTok, *byteLevelPreTok, *digitsPreTok, whitespacePreTok, whitespaceSplitPreTok,
			*punctuationPreTok, bertPreTok, *charDelimiterPreTok:
		default:
			return false, fmt.Errorf("pre-tokenizer %d (%T) is not known to work per segment", i, p)
		}
	}
	return firstKeyed, nil
}

func normalizerIsLocal(n normalizer) error {
	switch nt := n.(type) {
	case nil:
		return nil
	case normalizerSeq:
		for _, x := range nt {
			if err := normalizerIsLocal(x); err != nil {
				return err
			}
		}
		return nil
	case unicodeNormalizer, lowercaseNormalizer, replaceNormalizer, prependNormalizer, stripNormalizer,
		stripAccentsNormalizer, byteLevelNormalizer, bertNormalizer:
		return nil
	default:
		return fmt.Errorf("normalizer %T is not known to work per segment", n)
	}
}
