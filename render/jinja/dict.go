package jinja

import (
	"strconv"
	"strings"
)

// Dict is an insertion-ordered Python dict. Small dicts (the common case for
// chat messages) are searched linearly; an index is built past indexFrom keys.
type Dict struct {
	keys []Value
	vals []Value
	idx  map[string]int
}

const indexFrom = 8

// NewDict returns an empty dict with room for n keys.
func NewDict(n int) *Dict {
	return &Dict{keys: make([]Value, 0, n), vals: make([]Value, 0, n)}
}

// Len is len(d).
func (d *Dict) Len() int {
	if d == nil {
		return 0
	}
	return len(d.keys)
}

// hashKey encodes a hashable key so that keys Python considers equal (1,
// 1.0, True) encode the same. ok is false for unhashable values.
func hashKey(k Value) (string, bool) {
	switch k.kind {
	case KindStr:
		return "s" + k.s, true
	case KindNone:
		return "N", true
	case KindBool, KindInt:
		return "i" + strconv.FormatInt(k.n, 10), true
	case KindBigInt:
		return "i" + k.bigInt().String(), true
	case KindFloat:
		if k.fl() == float64(int64(k.fl())) {
			return "i" + strconv.FormatInt(int64(k.fl()), 10), true
		}
		return "f" + strconv.FormatFloat(k.fl(), 'g', -1, 64), true
	case KindTuple:
		var b strings.Builder
		b.WriteString("t(")
		for _, it := range k.items() {
			h, ok := hashKey(it)
			if !ok {
				return "", false
			}
			b.WriteString(strconv.Itoa(len(h)))
			b.WriteByte(':')
			b.WriteString(h)
		}
		return b.String(), true
	case KindUndefinedValue:
		return "U", true
	case KindCallable, KindNamespace, KindLoop:
		return "", false
	}
	return "", false
}

func unhashable(k Value) *TemplateError {
	return typeErr("unhashable type: '%s'", k.typeName())
}

func (d *Dict) find(k Value) (int, error) {
	if d == nil {
		return -1, nil
	}
	if d.idx == nil {
		if k.kind == KindStr {
			for i := range d.keys {
				if d.keys[i].kind == KindStr && d.keys[i].s == k.s {
					return i, nil
				}
			}
			return -1, nil
		}
		if _, ok := hashKey(k); !ok {
			return -1, unhashable(k)
		}
		for i := range d.keys {
			if pyEqual(d.keys[i], k) {
				return i, nil
			}
		}
		return -1, nil
	}
	h, ok := hashKey(k)
	if !ok {
		return -1, unhashable(k)
	}
	if i, ok := d.idx[h]; ok {
		return i, nil
	}
	return -1, nil
}

// Get returns d[k] and whether it was present.
func (d *Dict) Get(k Value) (Value, bool) {
	i, err := d.find(k)
	if err != nil || i < 0 {
		return Value{}, false
	}
	return d.vals[i], true
}

// GetStr is Get for a str key without building a Value.
func (d *Dict) GetStr(k string) (Value, bool) {
	if d == nil {
		return Value{}, false
	}
	if d.idx != nil {
		if i, ok := d.idx["s"+k]; ok {
			return d.vals[i], true
		}
		return Value{}, false
	}
	for i := range d.keys {
		if d.keys[i].kind == KindStr && d.keys[i].s == k {
			return d.vals[i], true
		}
	}
	return Value{}, false
}

// Set is d[k] = v; a new key goes last, an existing key keeps its place.
func (d *Dict) Set(k, v Value) error {
	i, err := d.find(k)
	if err != nil {
		return err
	}
	if i >= 0 {
		d.vals[i] = v
		return nil
	}
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
	if d.idx != nil {
		h, _ := hashKey(k)
		d.idx[h] = len(d.keys) - 1
	} else if len(d.keys) > indexFrom {
		d.idx = make(map[string]int, len(d.keys)*2)
		for j, kk := range d.keys {
			h, _ := hashKey(kk)
			d.idx[h] = j
		}
	}
	return nil
}

// SetStr is Set with a str key.
func (d *Dict) SetStr(k string, v Value) { _ = d.Set(Str(k), v) }

// Keys returns the keys in insertion order; the slice must not be modified.
func (d *Dict) Keys() []Value {
	if d == nil {
		return nil
	}
	return d.keys
}

// Values returns the values in insertion order; the slice must not be modified.
func (d *Dict) Values() []Value {
	if d == nil {
		return nil
	}
	return d.vals
}

func (d *Dict) copyDict() *Dict {
	n := NewDict(d.Len())
	for i := range d.keys {
		_ = n.Set(d.keys[i], d.vals[i])
	}
	return n
}

// itemsList is dict.items() materialised as a list of 2-tuples.
func (d *Dict) itemsList() []Value {
	out := make([]Value, d.Len())
	for i := range d.keys {
		out[i] = Tuple([]Value{d.keys[i], d.vals[i]})
	}
	return out
}
