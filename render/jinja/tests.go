package jinja

type testFn func(r *renderer, v Value, args []Value, kw []kwArg) (bool, error)

var tests map[string]testFn

func kindTest(pred func(Value) bool) testFn {
	return func(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) { return pred(v), nil }
}

func cmpTest(op string) testFn {
	return func(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) {
		a, err := bind("test", args, kw, []string{"other"}, 1)
		if err != nil {
			return false, err
		}
		return compareOp(op, v, a[0])
	}
}

func init() {
	tests = map[string]testFn{
		"defined":   kindTest(func(v Value) bool { return v.kind != KindUndefinedValue }),
		"undefined": kindTest(func(v Value) bool { return v.kind == KindUndefinedValue }),
		"none":      kindTest(func(v Value) bool { return v.kind == KindNone }),
		"boolean":   kindTest(func(v Value) bool { return v.kind == KindBool }),
		"false":     kindTest(func(v Value) bool { return v.kind == KindBool && v.n == 0 }),
		"true":      kindTest(func(v Value) bool { return v.kind == KindBool && v.n != 0 }),
		"integer":   kindTest(func(v Value) bool { return v.kind == KindInt || v.kind == KindBigInt }),
		"float":     kindTest(func(v Value) bool { return v.kind == KindFloat }),
		"number":    kindTest(func(v Value) bool { return v.isNumber() }),
		"string":    kindTest(func(v Value) bool { return v.kind == KindStr }),
		"mapping":   kindTest(func(v Value) bool { return v.kind == KindDict }),
		"sequence": kindTest(func(v Value) bool {
			switch v.kind {
			case KindStr, KindList, KindTuple, KindDict, KindUndefinedValue:
				return true
			}
			return false
		}),
		"iterable": kindTest(func(v Value) bool {
			switch v.kind {
			case KindStr, KindList, KindTuple, KindDict, KindUndefinedValue, KindLoop, KindIter:
				return true
			}
			return false
		}),
		"callable": kindTest(func(v Value) bool {
			return v.kind == KindCallable || v.kind == KindUndefinedValue || v.kind == KindLoop
		}),
		"escaped": kindTest(func(v Value) bool { return v.kind == KindStr && v.safe }),
		"lower": func(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) {
			x, err := strCased(false)(r, softStr(v), nil, nil)
			return x.Truth(), err
		},
		"upper": func(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) {
			x, err := strCased(true)(r, softStr(v), nil, nil)
			return x.Truth(), err
		},
		"odd": func(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) {
			m, err := r.binaryOp("%", v, Int(2))
			return err == nil && pyEqual(m, Int(1)), err
		},
		"even": func(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) {
			m, err := r.binaryOp("%", v, Int(2))
			return err == nil && pyEqual(m, Int(0)), err
		},
		"divisibleby": func(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) {
			a, err := bind("test_divisibleby", args, kw, []string{"num"}, 1)
			if err != nil {
				return false, err
			}
			m, err := r.binaryOp("%", v, a[0])
			return err == nil && pyEqual(m, Int(0)), err
		},
		"sameas": func(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) {
			a, err := bind("test_sameas", args, kw, []string{"other"}, 1)
			if err != nil {
				return false, err
			}
			o := a[0]
			if v.kind != o.kind {
				return false, nil
			}
			switch v.kind {
			case KindNone, KindUndefinedValue:
				return v.ref == o.ref, nil
			case KindBool:
				return v.n == o.n, nil
			case KindInt:
				// CPython caches small ints; others are distinct objects.
				return v.n == o.n && v.n >= -5 && v.n <= 256, nil
			case KindStr:
				return v.s == o.s && len(v.s) <= 1, nil
			}
			return v.ref == o.ref, nil
		},
		"in": func(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) {
			a, err := bind("test_in", args, kw, []string{"seq"}, 1)
			if err != nil {
				return false, err
			}
			return pyContains(a[0], v)
		},
		"filter": func(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) {
			_, ok := filters[pyStr(v)]
			return ok, nil
		},
		"test": func(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) {
			_, ok := tests[pyStr(v)]
			return ok, nil
		},
	}
	for _, n := range []string{"==", "eq", "equalto"} {
		tests[n] = cmpTest("==")
	}
	for _, n := range []string{"!=", "ne"} {
		tests[n] = cmpTest("!=")
	}
	for _, n := range []string{"<", "lt", "lessthan"} {
		tests[n] = cmpTest("<")
	}
	for _, n := range []string{"<=", "le"} {
		tests[n] = cmpTest("<=")
	}
	for _, n := range []string{">", "gt", "greaterthan"} {
		tests[n] = cmpTest(">")
	}
	for _, n := range []string{">=", "ge"} {
		tests[n] = cmpTest(">=")
	}
}
