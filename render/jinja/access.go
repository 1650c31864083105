package jinja

import (
	"strings"
	"unicode/utf8"
)

// Callable is a function value: a global, a bound method or a macro.
type Callable struct {
	name  string
	self  *Value // receiver of a bound method
	macro *macroDef
	fn    func(r *renderer, args []Value, kw []kwArg) (Value, error)
}

type kwArg struct {
	name string
	val  Value
}

func callableValue(c *Callable) Value { return Value{kind: KindCallable, ref: c} }

// isDunder reports Python special names, which the sandbox never exposes.
func isDunder(name string) bool {
	return strings.HasPrefix(name, "_")
}

// getattr is the sandboxed environment's getattr: Python attribute first
// (methods), then item lookup, then Undefined.
func (r *renderer) getattr(obj Value, name string) (Value, error) {
	switch obj.kind {
	case KindUndefinedValue:
		return Value{}, obj.undefinedError()
	case KindDict:
		if m, ok := lookupMethod(obj, name); ok {
			return m, nil
		}
		if v, ok := obj.dict().GetStr(name); ok {
			return v, nil
		}
	case KindStr, KindList, KindTuple:
		if m, ok := lookupMethod(obj, name); ok {
			return m, nil
		}
		if obj.kind == KindTuple && obj.s != "" {
			for i, f := range strings.Fields(obj.s) {
				if f == name {
					return obj.items()[i], nil
				}
			}
		}
	case KindNamespace:
		if v, ok := obj.ref.(*Namespace).attrs.GetStr(name); ok {
			return v, nil
		}
	case KindLoop:
		if v, ok := obj.ref.(*loopCtx).attr(name); ok {
			return v, nil
		}
	}
	return undefinedAttr(obj, Str(name)), nil
}

// lookupMethod returns a bound method of a str, dict, list or tuple, or an
// unsafe Undefined for methods the immutable sandbox refuses.
func lookupMethod(obj Value, name string) (Value, bool) {
	if isDunder(name) {
		if pyHasDunder(obj, name) {
			return unsafeUndefined(obj, name), true
		}
		return Value{}, false
	}
	table := methodTable(obj.kind)
	if m, ok := table[name]; ok {
		self := obj
		return callableValue(&Callable{name: name, self: &self, fn: func(r *renderer, args []Value, kw []kwArg) (Value, error) {
			if self.kind == KindStr {
				return callStrMethod(r, name, m, self, args, kw)
			}
			return m(r, self, args, kw)
		}}), true
	}
	if mutatingMethod(obj.kind, name) {
		return unsafeUndefined(obj, name), true
	}
	return Value{}, false
}

// pyHasDunder approximates whether Python objects of obj's type have the
// special attribute name (they all have __class__, __doc__, ...).
func pyHasDunder(obj Value, name string) bool {
	return strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__") && len(name) > 4
}

func mutatingMethod(k Kind, name string) bool {
	switch k {
	case KindDict:
		switch name {
		case "clear", "pop", "popitem", "setdefault", "update":
			return true
		}
	case KindList:
		switch name {
		case "append", "clear", "pop", "reverse", "insert", "sort", "extend", "remove":
			return true
		}
	}
	return false
}

// getitem is the sandboxed environment's getitem: item first, then attribute
// for str keys, then Undefined.
func (r *renderer) getitem(obj, key Value) (Value, error) {
	switch obj.kind {
	case KindUndefinedValue:
		return Value{}, obj.undefinedError()
	case KindList, KindTuple:
		if key.kind == KindInt || key.kind == KindBool {
			items := obj.items()
			i := key.n
			if i < 0 {
				i += int64(len(items))
			}
			if i >= 0 && i < int64(len(items)) {
				return items[i], nil
			}
			return undefinedAttr(obj, key), nil
		}
	case KindStr:
		if key.kind == KindInt || key.kind == KindBool {
			if c, ok := runeAt(obj.s, key.n); ok {
				return Str(c), nil
			}
			return undefinedAttr(obj, key), nil
		}
	case KindDict:
		i, err := obj.dict().find(key)
		if err != nil {
			return undefinedAttr(obj, key), nil
		}
		if i >= 0 {
			return obj.dict().vals[i], nil
		}
	}
	if key.kind == KindStr {
		return r.getattr(obj, key.s)
	}
	return undefinedAttr(obj, key), nil
}

// runeAt indexes s by code point like Python's str[i].
func runeAt(s string, i int64) (string, bool) {
	if i < 0 {
		i += int64(utf8.RuneCountInString(s))
		if i < 0 {
			return "", false
		}
	}
	n := int64(0)
	for p, c := range s {
		if n == i {
			return s[p : p+utf8.RuneLen(c)], true
		}
		n++
	}
	return "", false
}

// sliceIndices is Python's slice.indices(length).
func sliceIndices(start, stop, step Value, length int) (int, int, int, error) {
	st := 1
	if step.kind != KindNone && step.kind != KindUndefinedValue {
		if !step.isIntLike() {
			return 0, 0, 0, typeErr("slice indices must be integers or None or have an __index__ method")
		}
		st = clampIndex(step)
		if st == 0 {
			return 0, 0, 0, valueErr("slice step cannot be zero")
		}
	}
	var lo, hi int
	if st > 0 {
		lo, hi = 0, length
	} else {
		lo, hi = length-1, -1
	}
	conv := func(v Value, def int) (int, error) {
		if v.kind == KindNone || v.kind == KindUndefinedValue {
			return def, nil
		}
		if !v.isIntLike() {
			return 0, typeErr("slice indices must be integers or None or have an __index__ method")
		}
		i := clampIndex(v)
		if i < 0 {
			i += length
			if i < 0 {
				if st < 0 {
					return -1, nil
				}
				return 0, nil
			}
		} else if i >= length {
			if st < 0 {
				return length - 1, nil
			}
			return length, nil
		}
		return i, nil
	}
	a, err := conv(start, lo)
	if err != nil {
		return 0, 0, 0, err
	}
	b, err := conv(stop, hi)
	if err != nil {
		return 0, 0, 0, err
	}
	return a, b, st, nil
}

func clampIndex(v Value) int {
	if v.kind == KindBigInt {
		if v.bigInt().Sign() < 0 {
			return -1 << 40
		}
		return 1 << 40
	}
	const lim = 1 << 40
	switch {
	case v.n > lim:
		return lim
	case v.n < -lim:
		return -lim
	}
	return int(v.n)
}

// sliceLen is the number of indices a slice a:b:st visits.
func sliceLen(a, b, st int) int {
	switch {
	case st > 0 && b > a:
		return (b - a + st - 1) / st
	case st < 0 && a > b:
		return (a - b - st - 1) / -st
	}
	return 0
}

func (r *renderer) slice(obj, start, stop, step Value) (Value, error) {
	switch obj.kind {
	case KindUndefinedValue:
		return Value{}, obj.undefinedError()
	case KindList, KindTuple:
		items := obj.items()
		a, b, st, err := sliceIndices(start, stop, step, len(items))
		if err != nil {
			return Value{}, err
		}
		n := sliceLen(a, b, st)
		out := make([]Value, n)
		for k, i := 0, a; k < n; k, i = k+1, i+st {
			out[k] = items[i]
		}
		return Value{kind: obj.kind, ref: &out}, nil
	case KindStr:
		if isASCII(obj.s) {
			a, b, st, err := sliceIndices(start, stop, step, len(obj.s))
			if err != nil {
				return Value{}, err
			}
			if st == 1 {
				if b > a {
					return Str(obj.s[a:b]), nil
				}
				return emptyStr, nil
			}
			n := sliceLen(a, b, st)
			buf := make([]byte, n)
			for k, i := 0, a; k < n; k, i = k+1, i+st {
				buf[k] = obj.s[i]
			}
			return Str(string(buf)), nil
		}
		runes := []rune(obj.s)
		a, b, st, err := sliceIndices(start, stop, step, len(runes))
		if err != nil {
			return Value{}, err
		}
		n := sliceLen(a, b, st)
		out := make([]rune, n)
		for k, i := 0, a; k < n; k, i = k+1, i+st {
			out[k] = runes[i]
		}
		return Str(string(out)), nil
	}
	// Jinja compiles slices to a plain Python subscript, not getitem.
	if obj.kind == KindDict {
		return Value{}, typeErr("unhashable type: 'slice'")
	}
	return Value{}, typeErr("'%s' object is not subscriptable", obj.typeName())
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func (r *renderer) call(fn Value, args []Value, kw []kwArg) (Value, error) {
	switch fn.kind {
	case KindCallable:
		return fn.ref.(*Callable).fn(r, args, kw)
	case KindUndefinedValue:
		return Value{}, fn.undefinedError()
	case KindLoop:
		return fn.ref.(*loopCtx).call(r, args, kw)
	}
	return Value{}, typeErr("'%s' object is not callable", fn.typeName())
}
