package tokenizer

// vocab is a model vocabulary. Token strings live in one arena string that
// the map keys and the id table share, instead of one allocation per token.
type vocab struct {
	ids    map[string]int32
	tokens []string // by id; meaningless where !present[id]
	// present is nil when the ids are dense (0..len-1), the usual case.
	present []bool
	size    int // number of distinct tokens, HF's get_vocab_size
}

// newVocab builds a vocab from concatenated token bytes; ends[i] is where
// token i ends in arena.
func newVocab(arenaBytes []byte, ends []int, ids []int32) *vocab {
	arena := string(arenaBytes)
	maxID := int32(-1)
	for _, id := range ids {
		maxID = max(maxID, id)
	}
	v := &vocab{ids: make(map[string]int32, len(ids))}
	start := 0
	for i, end := range ends {
		// Later duplicates win, as when serde collects the object into a map.
		v.ids[arena[start:end]] = ids[i]
		start = end
	}
	v.tokens = make([]string, maxID+1)
	seen := make([]bool, maxID+1)
	dense := len(v.ids) == int(maxID)+1
	for s, id := range v.ids {
		if seen[id] {
			dense = false
		}
		v.tokens[id] = s
		seen[id] = true
	}
	if !dense {
		v.present = seen
	}
	v.size = len(v.ids)
	return v
}

func (v *vocab) token(id int) (string, bool) {
	if id < 0 || id >= len(v.tokens) {
		return "", false
	}
	if v.present != nil && !v.present[id] {
		return "", false
	}
	return v.tokens[id], true
}

func (v *vocab) id(tok string) (int32, bool) {
	id, ok := v.ids[tok]
	return id, ok
}
