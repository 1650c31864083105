package jinja

type testFn func(r *renderer, v Value, args []Value, kw []kwArg) (bool, error)

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

// tests are Jinja's built-in tests by name; "test" joins at init, since it
// reads this table and a literal naming it would be an initialization cycle.
var tests = map[string]testFn{
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
	"escaped":     kindTest(func(v Value) bool { return v.kind == KindStr && v.safe }),
	"lower":       casedTest(false),
	"upper":       casedTest(true),
	"odd":         remainderTest(1),
	"even":        remainderTest(0),
	"divisibleby": testDivisibleBy,
	"sameas":      testSameAs,
	"in":          testIn,
	"filter": func(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) {
		_, ok := filters[pyStr(v)]
		return ok, nil
	},
	"==":          cmpTest("=="),
	"eq":          cmpTest("=="),
	"equalto":     cmpTest("=="),
	"!=":          cmpTest("!="),
	"ne":          cmpTest("!="),
	"<":           cmpTest("<"),
	"lt":          cmpTest("<"),
	"lessthan":    cmpTest("<"),
	"<=":          cmpTest("<="),
	"le":          cmpTest("<="),
	">":           cmpTest(">"),
	"gt":          cmpTest(">"),
	"greaterthan": cmpTest(">"),
	">=":          cmpTest(">="),
	"ge":          cmpTest(">="),
}

func init() {
	tests["test"] = func(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) {
		_, ok := tests[pyStr(v)]
		return ok, nil
	}
}

// casedTest is the lower and upper tests: str.islower/isupper over the
// value as a string.
func casedTest(upper bool) testFn {
	return func(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) {
		x, err := strCased(upper)(r, softStr(v), nil, nil)
		return x.Truth(), err
	}
}

// remainderTest is the odd (1) and even (0) tests: v % 2 == rem.
func remainderTest(rem int64) testFn {
	return func(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) {
		m, err := r.binaryOp("%", v, Int(2))
		return err == nil && pyEqual(m, Int(rem)), err
	}
}

func testDivisibleBy(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) {
	a, err := bind("test_divisibleby", args, kw, []string{"num"}, 1)
	if err != nil {
		return false, err
	}
	m, err := r.binaryOp("%", v, a[0])
	return err == nil && pyEqual(m, Int(0)), err
}

// testSameAs is Python's "is": identity, which CPython shares for
// None, booleans, small ints and one-character strings.
func testSameAs(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) {
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
}

func testIn(r *renderer, v Value, args []Value, kw []kwArg) (bool, error) {
	a, err := bind("test_in", args, kw, []string{"seq"}, 1)
	if err != nil {
		return false, err
	}
	return pyContains(a[0], v)
}
