package parsers

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"reflect"
	"sort"
	"sync"
)

// A compact binary codec for machine state, driven by the Go types: the
// exported fields of a struct in declaration order, varints for integers,
// length-prefixed strings and byte slices, a presence byte for pointers,
// nil and empty kept apart for slices and maps. Unlike gob it sends no
// type descriptors and compiles nothing per message, so a checkpoint costs
// a few microseconds and a few hundred bytes. The layout is implied by the
// types, so the saved state carries a fingerprint of them (StateLayout):
// a checkpoint from a build whose machines differ is refused, not
// misread. Types implementing encoding.BinaryMarshaler encode themselves.

var (
	binaryMarshalerType   = reflect.TypeFor[encoding.BinaryMarshaler]()
	binaryUnmarshalerType = reflect.TypeFor[encoding.BinaryUnmarshaler]()
)

// maxStateLen bounds any length read from state, so hostile input cannot
// make a decoder allocate without limit (the state is also HMAC-checked
// by its user before it gets here).
const maxStateLen = 1 << 24

var errStateShort = errors.New("state truncated")

// typePlan is what the codec asks of a type on every value: computed once
// per type (reflect's Implements and Field cost more than encoding the
// value itself).
type typePlan struct {
	marshaler, unmarshaler bool
	fields                 []int // exported struct fields, in order
	names                  []string
	// fieldPlans are the fields' plans, looked up on first use (not in
	// planOf: a type may contain itself).
	fieldOnce  sync.Once
	fieldPlans []*typePlan
}

// fieldPlansOf returns the plans of t's exported fields; p is t's plan.
func (p *typePlan) fieldPlansOf(t reflect.Type) []*typePlan {
	p.fieldOnce.Do(func() {
		fps := make([]*typePlan, len(p.fields))
		for k, i := range p.fields {
			fps[k] = planOf(t.Field(i).Type)
		}
		p.fieldPlans = fps
	})
	return p.fieldPlans
}

// plans memoises typePlan per type: a pure function of the type, so the
// cache never changes an answer.
var plans sync.Map // reflect.Type -> *typePlan

func planOf(t reflect.Type) *typePlan {
	if p, ok := plans.Load(t); ok {
		return p.(*typePlan)
	}
	pt := reflect.PointerTo(t)
	p := &typePlan{marshaler: pt.Implements(binaryMarshalerType), unmarshaler: pt.Implements(binaryUnmarshalerType)}
	if t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() {
				p.fields = append(p.fields, i)
				p.names = append(p.names, t.String()+"."+f.Name)
			}
		}
	}
	plans.Store(t, p)
	return p
}

func appendState(buf []byte, v reflect.Value) ([]byte, error) {
	return appendValue(buf, v, planOf(v.Type()))
}

// appendValue is appendState with v's plan already looked up: elements of
// a slice or array share one (a lookup costs more than encoding a byte).
func appendValue(buf []byte, v reflect.Value, plan *typePlan) ([]byte, error) {
	if plan.marshaler && v.CanAddr() {
		b, err := v.Addr().Interface().(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			return nil, err
		}
		buf = binary.AppendUvarint(buf, uint64(len(b)))
		return append(buf, b...), nil
	}
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return append(buf, 1), nil
		}
		return append(buf, 0), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.AppendVarint(buf, v.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return binary.AppendUvarint(buf, v.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return binary.LittleEndian.AppendUint64(buf, math.Float64bits(v.Float())), nil
	case reflect.String:
		buf = binary.AppendUvarint(buf, uint64(v.Len()))
		return append(buf, v.String()...), nil
	case reflect.Slice:
		if v.IsNil() {
			return append(buf, 0), nil
		}
		buf = binary.AppendUvarint(buf, uint64(v.Len())+1)
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return append(buf, v.Bytes()...), nil
		}
		return appendElems(buf, v)
	case reflect.Array:
		return appendElems(buf, v)
	case reflect.Map:
		return appendMap(buf, v)
	case reflect.Struct:
		var err error
		fps := plan.fieldPlansOf(v.Type())
		for k, i := range plan.fields {
			if buf, err = appendValue(buf, v.Field(i), fps[k]); err != nil {
				return nil, fmt.Errorf("%s: %w", plan.names[k], err)
			}
		}
		return buf, nil
	case reflect.Pointer:
		if v.IsNil() {
			return append(buf, 0), nil
		}
		return appendState(append(buf, 1), v.Elem())
	case reflect.Interface, reflect.Func, reflect.Chan:
		if v.IsNil() {
			return append(buf, 0), nil
		}
	}
	return nil, fmt.Errorf("cannot encode a %s (give the type MarshalBinary)", v.Type())
}

func appendElems(buf []byte, v reflect.Value) ([]byte, error) {
	var err error
	plan := planOf(v.Type().Elem())
	for i := range v.Len() {
		if buf, err = appendValue(buf, v.Index(i), plan); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// appendMap writes entries sorted by their encoded key, so equal maps
// encode equally.
func appendMap(buf []byte, v reflect.Value) ([]byte, error) {
	if v.IsNil() {
		return append(buf, 0), nil
	}
	type entry struct{ k, v []byte }
	entries := make([]entry, 0, v.Len())
	it := v.MapRange()
	for it.Next() {
		// Map keys and values are not addressable; copy them so
		// MarshalBinary on a pointer receiver is found.
		k, err := appendState(nil, addressable(it.Key()))
		if err != nil {
			return nil, err
		}
		e, err := appendState(nil, addressable(it.Value()))
		if err != nil {
			return nil, err
		}
		entries = append(entries, entry{k, e})
	}
	sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i].k, entries[j].k) < 0 })
	buf = binary.AppendUvarint(buf, uint64(len(entries))+1)
	for _, e := range entries {
		buf = append(append(buf, e.k...), e.v...)
	}
	return buf, nil
}

func addressable(v reflect.Value) reflect.Value {
	p := reflect.New(v.Type()).Elem()
	p.Set(v)
	return p
}

// stateReader reads what appendState wrote.
type stateReader struct{ b []byte }

func (r *stateReader) uvarint() (uint64, error) {
	n, k := binary.Uvarint(r.b)
	if k <= 0 {
		return 0, errStateShort
	}
	r.b = r.b[k:]
	return n, nil
}

func (r *stateReader) length() (int, error) {
	n, err := r.uvarint()
	if err != nil {
		return 0, err
	}
	if n > maxStateLen || n > uint64(len(r.b))+1 {
		return 0, fmt.Errorf("state length %d past the end", n)
	}
	return int(n), nil
}

func (r *stateReader) bytes(n int) ([]byte, error) {
	if n > len(r.b) {
		return nil, errStateShort
	}
	b := r.b[:n:n]
	r.b = r.b[n:]
	return b, nil
}

// readState decodes into v (settable), leaving unexported struct fields
// (the factory's configuration) as they are.
func readState(r *stateReader, v reflect.Value) error {
	return readValue(r, v, planOf(v.Type()))
}

// readValue is readState with v's plan already looked up.
func readValue(r *stateReader, v reflect.Value, plan *typePlan) error {
	if plan.unmarshaler && v.CanAddr() {
		n, err := r.length()
		if err != nil {
			return err
		}
		b, err := r.bytes(n)
		if err != nil {
			return err
		}
		return v.Addr().Interface().(encoding.BinaryUnmarshaler).UnmarshalBinary(bytes.Clone(b))
	}
	switch v.Kind() {
	case reflect.Bool:
		b, err := r.bytes(1)
		if err != nil {
			return err
		}
		if b[0] > 1 {
			return errors.New("bad bool in state")
		}
		v.SetBool(b[0] == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, k := binary.Varint(r.b)
		if k <= 0 {
			return errStateShort
		}
		r.b = r.b[k:]
		if v.OverflowInt(n) {
			return fmt.Errorf("%d overflows %s", n, v.Type())
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := r.uvarint()
		if err != nil {
			return err
		}
		if v.OverflowUint(n) {
			return fmt.Errorf("%d overflows %s", n, v.Type())
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		b, err := r.bytes(8)
		if err != nil {
			return err
		}
		v.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(b)))
	case reflect.String:
		n, err := r.length()
		if err != nil {
			return err
		}
		b, err := r.bytes(n)
		if err != nil {
			return err
		}
		v.SetString(string(b))
	case reflect.Slice:
		n, err := r.length()
		if err != nil {
			return err
		}
		if n == 0 {
			v.SetZero()
			return nil
		}
		n--
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b, err := r.bytes(n)
			if err != nil {
				return err
			}
			v.SetBytes(bytes.Clone(b))
			return nil
		}
		if n > len(r.b) {
			// Every element takes at least one byte.
			return errStateShort
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		ep := planOf(v.Type().Elem())
		for i := range n {
			if err := readValue(r, s.Index(i), ep); err != nil {
				return err
			}
		}
		v.Set(s)
	case reflect.Array:
		ep := planOf(v.Type().Elem())
		for i := range v.Len() {
			if err := readValue(r, v.Index(i), ep); err != nil {
				return err
			}
		}
	case reflect.Map:
		n, err := r.length()
		if err != nil {
			return err
		}
		if n == 0 {
			v.SetZero()
			return nil
		}
		n--
		m := reflect.MakeMapWithSize(v.Type(), min(n, len(r.b)))
		for range n {
			k := reflect.New(v.Type().Key()).Elem()
			if err := readState(r, k); err != nil {
				return err
			}
			e := reflect.New(v.Type().Elem()).Elem()
			if err := readState(r, e); err != nil {
				return err
			}
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		fps := plan.fieldPlansOf(v.Type())
		for k, i := range plan.fields {
			if err := readValue(r, v.Field(i), fps[k]); err != nil {
				return fmt.Errorf("%s: %w", plan.names[k], err)
			}
		}
	case reflect.Pointer:
		b, err := r.bytes(1)
		if err != nil {
			return err
		}
		switch b[0] {
		case 0:
			v.SetZero()
			return nil
		case 1:
		default:
			return errors.New("bad pointer flag in state")
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return readState(r, v.Elem())
	case reflect.Interface, reflect.Func, reflect.Chan:
		b, err := r.bytes(1)
		if err != nil {
			return err
		}
		if b[0] != 0 {
			return fmt.Errorf("cannot decode a %s", v.Type())
		}
		v.SetZero()
	default:
		return fmt.Errorf("cannot decode a %s", v.Type())
	}
	return nil
}

// StateLayout fingerprints the encoded layout of t: field names, kinds and
// element types, recursively. Two builds whose machines encode alike have
// the same fingerprint.
func StateLayout(t reflect.Type) uint64 {
	h := fnv.New64a()
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		fmt.Fprintf(h, "%s/%d(", t.Name(), t.Kind())
		defer h.Write([]byte{')'})
		if seen[t] {
			return
		}
		seen[t] = true
		if reflect.PointerTo(t).Implements(binaryMarshalerType) {
			return
		}
		switch t.Kind() {
		case reflect.Struct:
			for i := range t.NumField() {
				if f := t.Field(i); f.IsExported() {
					h.Write([]byte(f.Name))
					walk(f.Type)
				}
			}
		case reflect.Slice, reflect.Array, reflect.Pointer:
			walk(t.Elem())
		case reflect.Map:
			walk(t.Key())
			walk(t.Elem())
		}
	}
	walk(t)
	return h.Sum64()
}
