package tokenizer

import "math/bits"

// mergeTable maps a pair of token ids to the rank of their merge and the
// merged id. It is an open-addressing table of 16-byte entries: a probe
// usually touches one cache line, where Go's map touches a control word,
// a slot and a second group on collisions, and memory latency dominates
// BPE on large vocabularies.
type mergeTable struct {
	entries []mergeEntry
	shift   uint // 64 - log2(len(entries))
}

type mergeEntry struct {
	key uint64 // left<<32 | right; emptyMergeKey when free
	val uint64 // rank<<32 | merged id
}

// emptyMergeKey cannot be a real key: ids are below 2^31.
const emptyMergeKey = ^uint64(0)

// newMergeTable builds the table from merges in rank order; with duplicate
// pairs the later merge wins, as when HF collects them into a map.
func newMergeTable(merges []mergeEntry) *mergeTable {
	size := 1 << bits.Len(uint(len(merges)*3/2+1))
	t := &mergeTable{entries: make([]mergeEntry, size), shift: uint(64 - bits.TrailingZeros(uint(size)))}
	for i := range t.entries {
		t.entries[i].key = emptyMergeKey
	}
	mask := uint64(size - 1)
	for _, m := range merges {
		i := t.slot(m.key)
		for t.entries[i].key != emptyMergeKey && t.entries[i].key != m.key {
			i = (i + 1) & mask
		}
		t.entries[i] = m
	}
	return t
}

func (t *mergeTable) slot(key uint64) uint64 {
	return (key * 0x9E3779B97F4A7C15) >> t.shift
}

// get returns the entry value of key.
func (t *mergeTable) get(key uint64) (uint64, bool) {
	mask := uint64(len(t.entries) - 1)
	for i := t.slot(key); ; i = (i + 1) & mask {
		e := &t.entries[i]
		if e.key == key {
			return e.val, true
		}
		if e.key == emptyMergeKey {
			return 0, false
		}
	}
}
