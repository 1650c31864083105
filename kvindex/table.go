package kvindex

// expiryTable maps block keys to their expiry (entry.expires) for Match,
// which probes every held block of a prompt on every engine: an open
// addressing table with linear probing, indexed by the key's own low bits
// (keys are already xxh3 output, so hashing them again buys nothing). A
// probe is one read of a 16-byte slot, several times cheaper than a Go
// map's. The LRU still owns the entries; this mirrors it. Key 0 marks an
// empty slot, so a block whose key is 0 (one in 2^64) is never matched,
// which costs that block a prefix hit and nothing else.
type expiryTable struct {
	slots []expirySlot
	n     int
}

type expirySlot struct {
	key     uint64
	expires int64
}

// get is the expiry of key and whether it is in the table.
func (t *expiryTable) get(key uint64) (int64, bool) {
	if len(t.slots) == 0 || key == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := key & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.key == key {
			return s.expires, true
		}
		if s.key == 0 {
			return 0, false
		}
	}
}

// put sets key's expiry, adding it when absent.
func (t *expiryTable) put(key uint64, expires int64) {
	if key == 0 {
		return
	}
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for i := key & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.key == key {
			s.expires = expires
			return
		}
		if s.key == 0 {
			*s = expirySlot{key, expires}
			t.n++
			return
		}
	}
}

func (t *expiryTable) grow() {
	old := t.slots
	t.slots = make([]expirySlot, max(16, 2*len(old)))
	t.n = 0
	for _, s := range old {
		if s.key != 0 {
			t.put(s.key, s.expires)
		}
	}
}

// remove deletes key by backward shifting: the slots after it that probed
// past its slot move back, so no tombstones are left to slow lookups.
func (t *expiryTable) remove(key uint64) {
	if len(t.slots) == 0 || key == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	i := key & mask
	for t.slots[i].key != key {
		if t.slots[i].key == 0 {
			return
		}
		i = (i + 1) & mask
	}
	t.n--
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := t.slots[j]
		if s.key == 0 {
			break
		}
		// s may fill the hole at i unless its home lies cyclically in (i, j].
		if home := s.key & mask; (j-home)&mask >= (j-i)&mask {
			t.slots[i] = s
			i = j
		}
	}
	t.slots[i] = expirySlot{}
}

// reset empties the table, keeping its memory.
func (t *expiryTable) reset() {
	clear(t.slots)
	t.n = 0
}
