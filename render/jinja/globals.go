package jinja

import (
	"math/big"
)

// maxRange is the sandbox's MAX_RANGE.
const maxRange = 100000

var globals map[string]Value

func builtin(name string, fn func(r *renderer, args []Value, kw []kwArg) (Value, error)) Value {
	return callableValue(&Callable{name: name, fn: fn})
}

func init() {
	globals = map[string]Value{
		"range":           builtin("range", gRange),
		"dict":            builtin("dict", gDict),
		"namespace":       builtin("namespace", gNamespace),
		"joiner":          builtin("joiner", gJoiner),
		"cycler":          builtin("cycler", gCycler),
		"raise_exception": builtin("raise_exception", gRaise),
		"strftime_now":    builtin("strftime_now", gStrftimeNow),
	}
}

func asIndex(v Value) (int64, error) {
	switch v.kind {
	case KindInt, KindBool:
		return v.n, nil
	case KindBigInt:
		return 0, newErr(KindType, "OverflowError", "Python int too large to convert to C ssize_t")
	case KindUndefinedValue:
		return 0, v.undefinedError()
	}
	return 0, typeErr("'%s' object cannot be interpreted as an integer", v.typeName())
}

func gRange(r *renderer, args []Value, kw []kwArg) (Value, error) {
	if len(kw) > 0 {
		return Value{}, typeErr("range() takes no keyword arguments")
	}
	if len(args) == 0 || len(args) > 3 {
		if len(args) == 0 {
			return Value{}, typeErr("range expected at least 1 argument, got 0")
		}
		return Value{}, typeErr("range expected at most 3 arguments, got %d", len(args))
	}
	var n [3]int64
	for i, a := range args {
		x, err := asIndex(a)
		if err != nil {
			return Value{}, err
		}
		n[i] = x
	}
	start, stop, step := int64(0), n[0], int64(1)
	if len(args) >= 2 {
		start, stop = n[0], n[1]
	}
	if len(args) == 3 {
		step = n[2]
	}
	if step == 0 {
		return Value{}, valueErr("range() arg 3 must not be zero")
	}
	count := new(big.Int)
	if (step > 0 && stop > start) || (step < 0 && stop < start) {
		d := new(big.Int).Sub(big.NewInt(stop), big.NewInt(start))
		s := big.NewInt(step)
		if step < 0 {
			d.Neg(d)
			s.Neg(s)
		}
		d.Add(d, new(big.Int).Sub(s, big.NewInt(1)))
		count.Quo(d, s)
	}
	if count.Cmp(big.NewInt(maxRange)) > 0 {
		return Value{}, newErr(KindType, "OverflowError", "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).")
	}
	c := count.Int64()
	out := make([]Value, c)
	for i := int64(0); i < c; i++ {
		out[i] = Int(start + i*step)
	}
	return List(out), nil
}

// dictFrom is Python's dict(*args, **kwargs).
func dictFrom(fname string, args []Value, kw []kwArg) (*Dict, error) {
	if len(args) > 1 {
		return nil, typeErr("%s expected at most 1 argument, got %d", fname, len(args))
	}
	d := NewDict(len(kw))
	if len(args) == 1 {
		switch a := args[0]; a.kind {
		case KindDict:
			src := a.dict()
			for i, k := range src.keys {
				if err := d.Set(k, src.vals[i]); err != nil {
					return nil, err
				}
			}
		case KindNamespace:
			return nil, typeErr("'Namespace' object is not iterable")
		default:
			items, err := iterate(a)
			if err != nil {
				return nil, err
			}
			for i, it := range items {
				pair, err := iterate(it)
				if err != nil {
					return nil, typeErr("cannot convert dictionary update sequence element #%d to a sequence", i)
				}
				if len(pair) != 2 {
					return nil, valueErr("dictionary update sequence element #%d has length %d; 2 is required", i, len(pair))
				}
				if err := d.Set(pair[0], pair[1]); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, k := range kw {
		d.SetStr(k.name, k.val)
	}
	return d, nil
}

func gDict(r *renderer, args []Value, kw []kwArg) (Value, error) {
	d, err := dictFrom("dict", args, kw)
	if err != nil {
		return Value{}, err
	}
	return DictValue(d), nil
}

func gNamespace(r *renderer, args []Value, kw []kwArg) (Value, error) {
	d, err := dictFrom("dict", args, kw)
	if err != nil {
		return Value{}, err
	}
	return Value{kind: KindNamespace, ref: &Namespace{attrs: d}}, nil
}

func gJoiner(r *renderer, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("joiner", args, kw, []string{"sep"}, 0, Str(", "))
	if err != nil {
		return Value{}, err
	}
	used := false
	sep := a[0]
	return builtin("joiner", func(r *renderer, args []Value, kw []kwArg) (Value, error) {
		if !used {
			used = true
			return emptyStr, nil
		}
		return sep, nil
	}), nil
}

func gCycler(r *renderer, args []Value, kw []kwArg) (Value, error) {
	if len(args) == 0 {
		return Value{}, runtimeErr("at least one item has to be provided")
	}
	items := append([]Value{}, args...)
	pos := 0
	d := NewDict(2)
	d.SetStr("next", builtin("next", func(r *renderer, _ []Value, _ []kwArg) (Value, error) {
		v := items[pos]
		pos = (pos + 1) % len(items)
		return v, nil
	}))
	d.SetStr("reset", builtin("reset", func(r *renderer, _ []Value, _ []kwArg) (Value, error) {
		pos = 0
		return noneValue, nil
	}))
	return Value{kind: KindNamespace, ref: &Namespace{attrs: d}}, nil
}

// gRaise is transformers' raise_exception: a jinja2 TemplateError carrying
// the message.
func gRaise(r *renderer, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("raise_exception", args, kw, []string{"message"}, 1)
	if err != nil {
		return Value{}, err
	}
	return Value{}, newErr(KindRaised, "TemplateError", pyStr(a[0]))
}

func gStrftimeNow(r *renderer, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("strftime_now", args, kw, []string{"format"}, 1)
	if err != nil {
		return Value{}, err
	}
	if a[0].kind != KindStr {
		return Value{}, typeErr("strftime() argument 1 must be str, not %s", a[0].typeName())
	}
	return Str(strftime(r.clock(), a[0].s)), nil
}
