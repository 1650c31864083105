package model

import (
	"fmt"
	"strings"
)

// OutOfVocabularyError is a token id the model's tokenizer does not have.
type OutOfVocabularyError struct {
	ID int
}

// Error reads as vLLM's input check words it.
func (e *OutOfVocabularyError) Error() string {
	return fmt.Sprintf("Token id %d is out of vocabulary", e.ID)
}

// Decode returns the text of ids as vLLM's /detokenize computes it:
// transformers' tokenizer.decode, which is the tokenizer's decode followed
// by transformers' clean-up of spaces before punctuation when the model's
// tokenizer_config.json sets clean_up_tokenization_spaces (Llama 3 does).
// An id outside the vocabulary is an *OutOfVocabularyError naming the
// largest such id (a negative one first), as vLLM's input check does.
func (m *Model) Decode(ids []int, skipSpecialTokens bool) (string, error) {
	maxID, n := -1, m.Tokenizer.Len()
	for _, id := range ids {
		if id < 0 {
			return "", &OutOfVocabularyError{ID: id}
		}
		maxID = max(maxID, id)
	}
	if maxID >= n {
		return "", &OutOfVocabularyError{ID: maxID}
	}
	text := m.Tokenizer.Decode(ids, skipSpecialTokens)
	if c := m.TokenizerConfig.CleanUpTokenizationSpaces; c != nil && *c {
		text = cleanUpTokenization(text)
	}
	return text, nil
}

// cleanUpPairs are transformers' clean_up_tokenization replacements.
var cleanUpPairs = [][2]string{
	{" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"},
	{" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
}

// cleanUpTokenization is transformers' clean_up_tokenization. The pairs
// apply one after another, each to the previous one's output, as chained
// str.replace calls do; a one-pass strings.Replacer would differ.
func cleanUpTokenization(s string) string {
	for _, p := range cleanUpPairs {
		s = strings.ReplaceAll(s, p[0], p[1])
	}
	return s
}
