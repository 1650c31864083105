package tokenizer

// vocab is a model vocabulary, held without a pointer per token (see
// strIndex): the token strings live in the index's arena and tokens holds
// each id's span of it.
type vocab struct {
	ids    *strIndex
	tokens []uint64 // by id: start<<32 | end in ids.keys.arena; meaningless where !present[id]
	// present is nil when the ids are dense (0..len-1), the usual case.
	present []bool
	size    int // number of distinct tokens, HF's get_vocab_size
}

// newVocab builds a vocab from concatenated token bytes; ends[i] is where
// token i ends in arena.
func newVocab(arenaBytes []byte, ends []int, ids []int32) *vocab {
	keys := strList{arena: string(arenaBytes), ends: make([]uint32, len(ends))}
	for i, end := range ends {
		keys.ends[i] = uint32(end)
	}
	maxID := int32(-1)
	for _, id := range ids {
		maxID = max(maxID, id)
	}
	// Later duplicates win, as when serde collects the object into a map.
	v := &vocab{ids: newStrIndex(keys, ids)}
	v.tokens = make([]uint64, maxID+1)
	seen := make([]bool, maxID+1)
	dense := v.ids.len() == int(maxID)+1
	for _, sl := range v.ids.slots {
		if sl == 0 {
			continue
		}
		k := int(uint32(sl)) - 1
		id := ids[k]
		if seen[id] {
			dense = false
		}
		start := uint32(0)
		if k > 0 {
			start = keys.ends[k-1]
		}
		v.tokens[id] = uint64(start)<<32 | uint64(keys.ends[k])
		seen[id] = true
	}
	if !dense {
		v.present = seen
	}
	v.size = v.ids.len()
	return v
}

func (v *vocab) token(id int) (string, bool) {
	if id < 0 || id >= len(v.tokens) {
		return "", false
	}
	if v.present != nil && !v.present[id] {
		return "", false
	}
	sp := v.tokens[id]
	return v.ids.keys.arena[sp>>32 : uint32(sp)], true
}

func (v *vocab) id(tok string) (int32, bool) {
	return v.ids.get(tok)
}
