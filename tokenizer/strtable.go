package tokenizer

import (
	"hash/maphash"
	"math"
)

// A vocabulary held as map[string]int32 and []string is a pointer per
// token, and the garbage collector follows every one of them on every cycle:
// qwen3's vocabulary maps and token lists made each cycle cost ~10 ms of
// marking, 8-12% of a render server's CPU. strList and strIndex hold the same
// strings in one arena with integer offsets, which the collector sees as a
// handful of objects it need not look into.

// strList is a list of strings stored in one arena.
type strList struct {
	arena string
	ends  []uint32 // string i is arena[ends[i-1]:ends[i]], ends[-1] being 0
}

func (l *strList) len() int { return len(l.ends) }

func (l *strList) at(i int) string {
	start := uint32(0)
	if i > 0 {
		start = l.ends[i-1]
	}
	return l.arena[start:l.ends[i]]
}

// strListBuilder appends strings to a strList.
type strListBuilder struct {
	buf  []byte
	ends []uint32
}

func (b *strListBuilder) add(s string) {
	b.buf = append(b.buf, s...)
	b.ends = append(b.ends, uint32(len(b.buf)))
}

func (b *strListBuilder) list() strList {
	if len(b.buf) > math.MaxUint32 {
		panic("tokenizer: string arena over 4 GiB")
	}
	return strList{arena: string(b.buf), ends: b.ends}
}

// strIndex maps strings to int32 values: an open-addressing table of key
// indexes into a strList, probed linearly.
type strIndex struct {
	keys  strList
	vals  []int32
	slots []uint64 // hash<<32 | (key index + 1); 0: empty
	mask  uint64
	size  int
	seed  maphash.Seed
}

// newStrIndex indexes keys[i] → vals[i]. Of equal keys the last one wins,
// as when serde collects a JSON object into a map.
func newStrIndex(keys strList, vals []int32) *strIndex {
	n := 8
	for n < 2*keys.len() {
		n <<= 1
	}
	x := &strIndex{keys: keys, vals: vals, slots: make([]uint64, n), mask: uint64(n - 1), seed: maphash.MakeSeed()}
	for i := range keys.len() {
		s := keys.at(i)
		h := maphash.String(x.seed, s)
		tag := h &^ (1<<32 - 1)
		for j := h & x.mask; ; j = (j + 1) & x.mask {
			sl := x.slots[j]
			if sl == 0 {
				x.slots[j] = tag | uint64(i+1)
				x.size++
				break
			}
			if sl&^(1<<32-1) == tag && keys.at(int(uint32(sl))-1) == s {
				x.slots[j] = tag | uint64(i+1)
				break
			}
		}
	}
	return x
}

func (x *strIndex) get(s string) (int32, bool) {
	h := maphash.String(x.seed, s)
	tag := h &^ (1<<32 - 1)
	for j := h & x.mask; ; j = (j + 1) & x.mask {
		sl := x.slots[j]
		if sl == 0 {
			return 0, false
		}
		if sl&^(1<<32-1) == tag {
			if k := int(uint32(sl)) - 1; x.keys.at(k) == s {
				return x.vals[k], true
			}
		}
	}
}

// len is the number of distinct keys.
func (x *strIndex) len() int { return x.size }

// all yields every distinct key with its value, in no particular order.
func (x *strIndex) all(yield func(string, int32) bool) {
	for _, sl := range x.slots {
		if sl == 0 {
			continue
		}
		k := int(uint32(sl)) - 1
		if !yield(x.keys.at(k), x.vals[k]) {
			return
		}
	}
}
