package jinja

import (
	"math"
	"math/big"
	"strings"
	"unicode/utf8"
)

// pyEqual is Python's a == b for template values.
func pyEqual(a, b Value) bool {
	if a.isNumber() && b.isNumber() {
		if a.kind == KindFloat || b.kind == KindFloat {
			return a.toFloat() == b.toFloat()
		}
		if a.kind == KindBigInt || b.kind == KindBigInt {
			return a.bigInt().Cmp(b.bigInt()) == 0
		}
		return a.n == b.n
	}
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case KindUndefinedValue, KindNone:
		return true
	case KindStr:
		return a.s == b.s
	case KindList, KindTuple:
		x, y := a.items(), b.items()
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case KindDict:
		x, y := a.dict(), b.dict()
		if x.Len() != y.Len() {
			return false
		}
		for i, k := range x.keys {
			v, ok := y.Get(k)
			if !ok || !pyEqual(x.vals[i], v) {
				return false
			}
		}
		return true
	}
	return a.ref == b.ref
}

// pyCompare returns -1, 0, 1 for a <op> b orderings, or a TypeError naming op.
func pyCompare(a, b Value, op string) (int, error) {
	if a.kind == KindUndefinedValue {
		return 0, a.undefinedError()
	}
	if b.kind == KindUndefinedValue {
		return 0, b.undefinedError()
	}
	if a.isNumber() && b.isNumber() {
		if a.kind == KindFloat || b.kind == KindFloat {
			x, y := a.toFloat(), b.toFloat()
			switch {
			case x < y:
				return -1, nil
			case x > y:
				return 1, nil
			case x == y:
				return 0, nil
			}
			return 2, nil // NaN: every ordering is false
		}
		if a.kind == KindBigInt || b.kind == KindBigInt {
			return a.bigInt().Cmp(b.bigInt()), nil
		}
		switch {
		case a.n < b.n:
			return -1, nil
		case a.n > b.n:
			return 1, nil
		}
		return 0, nil
	}
	if a.kind == b.kind {
		switch a.kind {
		case KindStr:
			return strings.Compare(a.s, b.s), nil
		case KindList, KindTuple:
			x, y := a.items(), b.items()
			for i := 0; i < len(x) && i < len(y); i++ {
				if pyEqual(x[i], y[i]) {
					continue
				}
				return pyCompare(x[i], y[i], op)
			}
			switch {
			case len(x) < len(y):
				return -1, nil
			case len(x) > len(y):
				return 1, nil
			}
			return 0, nil
		}
	}
	return 0, typeErr("'%s' not supported between instances of '%s' and '%s'", op, a.typeName(), b.typeName())
}

func pyLess(a, b Value) (bool, error) {
	c, err := pyCompare(a, b, "<")
	return c == -1, err
}

func compareOp(op string, a, b Value) (bool, error) {
	switch op {
	case "==":
		return pyEqual(a, b), nil
	case "!=":
		return !pyEqual(a, b), nil
	case "in":
		return pyContains(b, a)
	case "notin":
		ok, err := pyContains(b, a)
		return !ok, err
	}
	c, err := pyCompare(a, b, op)
	if err != nil {
		return false, err
	}
	switch op {
	case "<":
		return c == -1, nil
	case "<=":
		return c == -1 || c == 0, nil
	case ">":
		return c == 1, nil
	case ">=":
		return c == 1 || c == 0, nil
	}
	return false, nil
}

// pyContains is Python's item in container.
func pyContains(container, item Value) (bool, error) {
	switch container.kind {
	case KindStr:
		if item.kind != KindStr {
			return false, typeErr("'in <string>' requires string as left operand, not %s", item.typeName())
		}
		return strings.Contains(container.s, item.s), nil
	case KindList, KindTuple:
		for _, it := range container.items() {
			if pyEqual(it, item) {
				return true, nil
			}
		}
		return false, nil
	case KindDict:
		i, err := container.dict().find(item)
		return i >= 0, err
	case KindUndefinedValue:
		return false, nil
	case KindIter:
		items, err := iterate(container)
		if err != nil {
			return false, err
		}
		for _, it := range items {
			if pyEqual(it, item) {
				return true, nil
			}
		}
		return false, nil
	}
	return false, typeErr("argument of type '%s' is not iterable", container.typeName())
}

// iterate returns the items a for loop over v visits.
func iterate(v Value) ([]Value, error) {
	switch v.kind {
	case KindList, KindTuple:
		return v.items(), nil
	case KindDict:
		return v.dict().Keys(), nil
	case KindStr:
		out := make([]Value, 0, len(v.s))
		for _, r := range v.s {
			out = append(out, Str(string(r)))
		}
		return out, nil
	case KindUndefinedValue:
		return nil, nil
	case KindIter:
		it := v.ref.(*iterState)
		if it.view {
			return it.items, nil
		}
		if it.consumed {
			return nil, nil
		}
		it.consumed = true
		return it.items, it.err
	}
	return nil, typeErr("'%s' object is not iterable", v.typeName())
}

// pyLen is Python's len(v).
func pyLen(v Value) (int, error) {
	switch v.kind {
	case KindStr:
		return utf8.RuneCountInString(v.s), nil
	case KindList, KindTuple:
		return len(v.items()), nil
	case KindDict:
		return v.dict().Len(), nil
	case KindUndefinedValue:
		return 0, nil
	case KindLoop:
		return len(v.ref.(*loopCtx).items), nil
	case KindIter:
		if it := v.ref.(*iterState); it.view {
			return len(it.items), nil
		}
	}
	return 0, typeErr("object of type '%s' has no len()", v.typeName())
}

func unsupported(op string, a, b Value) error {
	return typeErr("unsupported operand type(s) for %s: '%s' and '%s'", op, a.typeName(), b.typeName())
}

func checkUndef(a, b Value) error {
	if a.kind == KindUndefinedValue {
		return a.undefinedError()
	}
	if b.kind == KindUndefinedValue {
		return b.undefinedError()
	}
	return nil
}

func intResult(r int64, overflow bool, big func() *big.Int) Value {
	if overflow {
		return bigValue(big())
	}
	return Int(r)
}

func (r *renderer) binaryOp(op string, a, b Value) (Value, error) {
	// str % x formats before Undefined's own operators are consulted.
	if op == "%" && a.kind == KindStr && b.kind == KindUndefinedValue {
		return r.binaryOp("%", a, List(nil))
	}
	if err := checkUndef(a, b); err != nil {
		return Value{}, err
	}
	switch op {
	case "+":
		return r.add(a, b)
	case "-":
		return arith(op, a, b)
	case "*":
		return r.mul(a, b)
	case "/":
		if !a.isNumber() || !b.isNumber() {
			return Value{}, unsupported(op, a, b)
		}
		if b.toFloat() == 0 {
			if a.kind == KindFloat || b.kind == KindFloat {
				return Value{}, newErr(KindType, "ZeroDivisionError", "float division by zero")
			}
			return Value{}, newErr(KindType, "ZeroDivisionError", "division by zero")
		}
		if a.kind != KindFloat && b.kind != KindFloat && (a.kind == KindBigInt || b.kind == KindBigInt) {
			q, _ := new(big.Rat).SetFrac(a.bigInt(), b.bigInt()).Float64()
			return Float(q), nil
		}
		return Float(a.toFloat() / b.toFloat()), nil
	case "//", "%":
		if op == "%" && a.kind == KindStr {
			s, err := percentFormat(a, b)
			if err != nil {
				return Value{}, err
			}
			if err := r.checkSize(len(s)); err != nil {
				return Value{}, err
			}
			if a.safe {
				return markup(s), nil
			}
			return Str(s), nil
		}
		return arith(op, a, b)
	case "**":
		return pow(a, b)
	}
	return Value{}, runtimeErr("unknown operator %s", op)
}

func (r *renderer) add(a, b Value) (Value, error) {
	switch {
	case a.kind == KindStr && b.kind == KindStr:
		if err := r.checkSize(len(a.s) + len(b.s)); err != nil {
			return Value{}, err
		}
		switch {
		case a.safe && !b.safe:
			return markup(a.s + htmlEscape(b.s)), nil
		case b.safe && !a.safe:
			return markup(htmlEscape(a.s) + b.s), nil
		case a.safe:
			return markup(a.s + b.s), nil
		}
		return Str(a.s + b.s), nil
	case a.kind == KindStr:
		return Value{}, typeErr("can only concatenate str (not \"%s\") to str", b.typeName())
	case a.kind == KindList && b.kind == KindList, a.kind == KindTuple && b.kind == KindTuple:
		x, y := a.items(), b.items()
		if err := r.checkSize(len(x) + len(y)); err != nil {
			return Value{}, err
		}
		out := make([]Value, 0, len(x)+len(y))
		out = append(append(out, x...), y...)
		return Value{kind: a.kind, ref: &out}, nil
	case a.kind == KindList || a.kind == KindTuple:
		return Value{}, typeErr("can only concatenate %s (not \"%s\") to %s", a.typeName(), b.typeName(), a.typeName())
	}
	return arith("+", a, b)
}

func (r *renderer) mul(a, b Value) (Value, error) {
	isSeq := func(v Value) bool { return v.kind == KindStr || v.kind == KindList || v.kind == KindTuple }
	seq, n := a, b
	if !isSeq(a) && isSeq(b) {
		seq, n = b, a
	}
	switch seq.kind {
	case KindStr, KindList, KindTuple:
		if n.kind != KindInt && n.kind != KindBool {
			if n.kind == KindBigInt {
				return Value{}, newErr(KindType, "OverflowError", "cannot fit 'int' into an index-sized integer")
			}
			return Value{}, typeErr("can't multiply sequence by non-int of type '%s'", n.typeName())
		}
		count := max(n.n, 0)
		if seq.kind == KindStr {
			if count > 0 && int64(len(seq.s))*count > int64(r.limits.MaxOutputBytes) {
				return Value{}, r.checkSize(r.limits.MaxOutputBytes + 1)
			}
			return Str(strings.Repeat(seq.s, int(count))), nil
		}
		items := seq.items()
		if count > 0 && int64(len(items))*count > int64(r.limits.MaxOutputBytes) {
			return Value{}, r.checkSize(r.limits.MaxOutputBytes + 1)
		}
		out := make([]Value, 0, len(items)*int(count))
		for i := int64(0); i < count; i++ {
			out = append(out, items...)
		}
		return Value{kind: seq.kind, ref: &out}, nil
	}
	return arith("*", a, b)
}

// arith handles numeric + - * // % with Python's int/float rules.
func arith(op string, a, b Value) (Value, error) {
	if !a.isNumber() || !b.isNumber() {
		return Value{}, unsupported(op, a, b)
	}
	if a.kind == KindFloat || b.kind == KindFloat {
		x, y := a.toFloat(), b.toFloat()
		switch op {
		case "+":
			return Float(x + y), nil
		case "-":
			return Float(x - y), nil
		case "*":
			return Float(x * y), nil
		case "//":
			if y == 0 {
				return Value{}, newErr(KindType, "ZeroDivisionError", "float floor division by zero")
			}
			return Float(math.Floor(x / y)), nil
		case "%":
			if y == 0 {
				return Value{}, newErr(KindType, "ZeroDivisionError", "float modulo")
			}
			m := math.Mod(x, y)
			if m != 0 && (m < 0) != (y < 0) {
				m += y
			}
			return Float(m), nil
		}
	}
	if a.kind == KindBigInt || b.kind == KindBigInt {
		return bigArith(op, a.bigInt(), b.bigInt())
	}
	x, y := a.n, b.n
	switch op {
	case "+":
		s := x + y
		return intResult(s, (x > 0 && y > 0 && s < 0) || (x < 0 && y < 0 && s >= 0), func() *big.Int { return new(big.Int).Add(big.NewInt(x), big.NewInt(y)) }), nil
	case "-":
		s := x - y
		return intResult(s, (x >= 0 && y < 0 && s < 0) || (x < 0 && y > 0 && s >= 0), func() *big.Int { return new(big.Int).Sub(big.NewInt(x), big.NewInt(y)) }), nil
	case "*":
		if x == 0 || y == 0 {
			return Int(0), nil
		}
		p := x * y
		return intResult(p, p/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64), func() *big.Int { return new(big.Int).Mul(big.NewInt(x), big.NewInt(y)) }), nil
	case "//", "%":
		if y == 0 {
			if op == "%" {
				return Value{}, newErr(KindType, "ZeroDivisionError", "integer modulo by zero")
			}
			return Value{}, newErr(KindType, "ZeroDivisionError", "integer division or modulo by zero")
		}
		if x == math.MinInt64 && y == -1 {
			return bigArith(op, big.NewInt(x), big.NewInt(y))
		}
		q, m := x/y, x%y
		if m != 0 && (m < 0) != (y < 0) {
			q--
			m += y
		}
		if op == "//" {
			return Int(q), nil
		}
		return Int(m), nil
	}
	return Value{}, unsupported(op, a, b)
}

func bigArith(op string, x, y *big.Int) (Value, error) {
	z := new(big.Int)
	switch op {
	case "+":
		z.Add(x, y)
	case "-":
		z.Sub(x, y)
	case "*":
		z.Mul(x, y)
	case "//", "%":
		if y.Sign() == 0 {
			if op == "%" {
				return Value{}, newErr(KindType, "ZeroDivisionError", "integer modulo by zero")
			}
			return Value{}, newErr(KindType, "ZeroDivisionError", "integer division or modulo by zero")
		}
		m := new(big.Int)
		z.DivMod(x, y, m) // Euclidean: m >= 0
		if m.Sign() != 0 && y.Sign() < 0 {
			z.Add(z, big.NewInt(1))
			m.Add(m, y)
		}
		if op == "%" {
			return bigValue(m), nil
		}
	}
	return bigValue(z), nil
}

func pow(a, b Value) (Value, error) {
	if !a.isNumber() || !b.isNumber() {
		return Value{}, typeErr("unsupported operand type(s) for ** or pow(): '%s' and '%s'", a.typeName(), b.typeName())
	}
	if a.kind == KindFloat || b.kind == KindFloat || (b.isIntLike() && b.bigInt().Sign() < 0) {
		x, y := a.toFloat(), b.toFloat()
		if x == 0 && y < 0 {
			return Value{}, newErr(KindType, "ZeroDivisionError", "0.0 cannot be raised to a negative power")
		}
		p := floatPow(x, y)
		if math.IsInf(p, 0) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
			return Value{}, newErr(KindType, "OverflowError", "(34, 'Numerical result out of range')")
		}
		return Float(p), nil
	}
	e := b.bigInt()
	if e.BitLen() > 20 && a.bigInt().CmpAbs(big.NewInt(1)) > 0 {
		return Value{}, newErr(KindLimit, "LimitExceeded", "integer power too large")
	}
	z := new(big.Int).Exp(a.bigInt(), e, nil)
	if z.BitLen() > 100000 {
		return Value{}, newErr(KindLimit, "LimitExceeded", "integer power too large")
	}
	return bigValue(z), nil
}

// floatPow is C's pow as Python calls it. Go's math.Pow can be a few ULP off
// where libm rounds correctly; small integral exponents are computed exactly
// and rounded once.
func floatPow(x, y float64) float64 {
	if y == math.Trunc(y) && math.Abs(y) <= 64 && x != 0 && !math.IsInf(x, 0) && !math.IsNaN(x) {
		n := int(math.Abs(y))
		acc := new(big.Float).SetPrec(4096).SetFloat64(1)
		base := new(big.Float).SetPrec(4096).SetFloat64(x)
		for i := 0; i < n; i++ {
			acc.Mul(acc, base)
		}
		if y < 0 {
			acc.Quo(new(big.Float).SetPrec(4096).SetFloat64(1), acc)
		}
		f, _ := acc.Float64()
		return f
	}
	return math.Pow(x, y)
}

func negate(v Value) (Value, error) {
	switch v.kind {
	case KindInt, KindBool:
		if v.n == math.MinInt64 {
			return bigValue(new(big.Int).Neg(big.NewInt(v.n))), nil
		}
		return Int(-v.n), nil
	case KindBigInt:
		return bigValue(new(big.Int).Neg(v.bigInt())), nil
	case KindFloat:
		return Float(-v.fl()), nil
	case KindUndefinedValue:
		return Value{}, v.undefinedError()
	}
	return Value{}, typeErr("bad operand type for unary -: '%s'", v.typeName())
}

func positive(v Value) (Value, error) {
	switch v.kind {
	case KindInt, KindBool:
		return Int(v.n), nil
	case KindBigInt, KindFloat:
		return v, nil
	case KindUndefinedValue:
		return Value{}, v.undefinedError()
	}
	return Value{}, typeErr("bad operand type for unary +: '%s'", v.typeName())
}

func htmlEscape(s string) string {
	if !strings.ContainsAny(s, "&<>'\"") {
		return s
	}
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "'", "&#39;", "\"", "&#34;")
	return r.Replace(s)
}
