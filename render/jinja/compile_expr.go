package jinja

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
)

type evalFn func(r *renderer, s *scope) (Value, error)

type compiler struct {
	// folding is set while compiling the constant-folded variant of an
	// output expression (see outputStmt).
	folding bool
	// limits bound compile-time evaluation as they bound rendering.
	limits Limits
	// bound holds every name the template ever assigns (set, for, macro,
	// parameters, with): other names can only come from the render
	// context or the globals, so they skip the scope chain.
	bound map[string]bool
	// inLoop counts enclosing for loops of the current function body, to
	// reject break/continue outside a loop.
	inLoop int
}

func (c *compiler) exprs(xs []expr) ([]evalFn, error) {
	out := make([]evalFn, len(xs))
	for i, x := range xs {
		f, err := c.expr(x)
		if err != nil {
			return nil, err
		}
		out[i] = f
	}
	return out, nil
}

func evalAll(r *renderer, s *scope, fs []evalFn) ([]Value, error) {
	out := make([]Value, len(fs))
	for i, f := range fs {
		v, err := f(r, s)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// expr compiles an expression, folding constant subexpressions first as
// Jinja's optimizer does.
func (c *compiler) expr(x expr) (evalFn, error) {
	if !c.folding {
		if v, ok := c.constValue(x, true); ok {
			return func(*renderer, *scope) (Value, error) { return v, nil }, nil
		}
	}
	return c.compileExpr(x)
}

func (c *compiler) compileExpr(x expr) (evalFn, error) {
	switch t := x.(type) {
	case *constExpr:
		v := t.v
		return func(*renderer, *scope) (Value, error) { return v, nil }, nil
	case *nameExpr:
		return c.nameExpr(t)
	case *tupleExpr:
		return c.seqExpr(t.items, KindTuple)
	case *listExpr:
		return c.seqExpr(t.items, KindList)
	case *dictExpr:
		return c.dictExpr(t)
	case *condExpr:
		return c.condExpr(t)
	case *andExpr:
		l, r2, err := c.pair(t.l, t.r)
		if err != nil {
			return nil, err
		}
		return func(r *renderer, s *scope) (Value, error) {
			v, err := l(r, s)
			if err != nil || !v.Truth() {
				return v, err
			}
			return r2(r, s)
		}, nil
	case *orExpr:
		l, r2, err := c.pair(t.l, t.r)
		if err != nil {
			return nil, err
		}
		return func(r *renderer, s *scope) (Value, error) {
			v, err := l(r, s)
			if err != nil || v.Truth() {
				return v, err
			}
			return r2(r, s)
		}, nil
	case *notExpr:
		f, err := c.expr(t.x)
		if err != nil {
			return nil, err
		}
		return func(r *renderer, s *scope) (Value, error) {
			v, err := f(r, s)
			if err != nil {
				return Value{}, err
			}
			return Bool(!v.Truth()), nil
		}, nil
	case *negExpr:
		return c.unaryExpr(t.x, negate)
	case *posExpr:
		return c.unaryExpr(t.x, positive)
	case *binExpr:
		return c.binExpr(t)
	case *concatExpr:
		return c.concatExpr(t)
	case *compareExpr:
		return c.compareExpr(t)
	case *getattrExpr:
		return c.getattrExpr(t)
	case *getitemExpr:
		return c.getitemExpr(t)
	case *sliceExpr:
		return nil, syntaxErr(0, "slice outside of a subscript")
	case *callExpr:
		return c.call(t)
	case *filterExpr:
		return c.filter(t, nil)
	case *testExpr:
		return c.test(t)
	case *nsRefExpr:
		return nil, syntaxErr(0, "namespace reference outside of an assignment")
	}
	return nil, syntaxErr(0, "unsupported expression %T", x)
}

// nameExpr compiles a variable load; a name the template never binds is
// read from the render's variables or the globals directly.
func (c *compiler) nameExpr(t *nameExpr) (evalFn, error) {
	name := t.name
	if c.folding {
		return func(*renderer, *scope) (Value, error) { return Value{}, errImpossible }, nil
	}
	if c.bound != nil && !c.bound[name] {
		global, isGlobal := globals[name]
		return func(r *renderer, _ *scope) (Value, error) {
			if v, ok := r.rootVars[name]; ok {
				return v, nil
			}
			if isGlobal {
				return global, nil
			}
			return undefinedName(name), nil
		}, nil
	}
	return func(r *renderer, s *scope) (Value, error) { return r.resolve(s, name), nil }, nil
}

// dictExpr compiles a dict display.
func (c *compiler) dictExpr(t *dictExpr) (evalFn, error) {
	ks, err := c.exprs(t.keys)
	if err != nil {
		return nil, err
	}
	vs, err := c.exprs(t.vals)
	if err != nil {
		return nil, err
	}
	return func(r *renderer, s *scope) (Value, error) {
		d := NewDict(len(ks))
		for i := range ks {
			k, err := ks[i](r, s)
			if err != nil {
				return Value{}, err
			}
			v, err := vs[i](r, s)
			if err != nil {
				return Value{}, err
			}
			if err := d.Set(k, v); err != nil {
				return Value{}, err
			}
		}
		return DictValue(d), nil
	}, nil
}

// condExpr compiles an inline if-expression.
func (c *compiler) condExpr(t *condExpr) (evalFn, error) {
	test, err := c.expr(t.test)
	if err != nil {
		return nil, err
	}
	body, err := c.expr(t.body)
	if err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("the inline if-expression on line %d evaluated to false and no else section was defined.", t.line)
	els := func(*renderer, *scope) (Value, error) { return undefined(msg), nil }
	if t.els != nil {
		if els, err = c.expr(t.els); err != nil {
			return nil, err
		}
	}
	return func(r *renderer, s *scope) (Value, error) {
		v, err := test(r, s)
		if err != nil {
			return Value{}, err
		}
		if v.Truth() {
			return body(r, s)
		}
		return els(r, s)
	}, nil
}

// binExpr compiles a binary operator (+ as a chain, addChain).
func (c *compiler) binExpr(t *binExpr) (evalFn, error) {
	if t.op == "+" {
		return c.addChain(t)
	}
	l, r2, err := c.pair(t.l, t.r)
	if err != nil {
		return nil, err
	}
	op := t.op
	if lv, ok := c.constValue(t.l, true); ok && !c.folding && op == "**" && lv.isNumber() && math.Signbit(lv.toFloat()) {
		// Jinja writes a folded negative constant as "-3" into the
		// generated Python, where "-3 ** y" then means -(3 ** y).
		abs, _ := negate(lv)
		return func(r *renderer, s *scope) (Value, error) {
			b, err := r2(r, s)
			if err != nil {
				return Value{}, err
			}
			p, err := r.binaryOp("**", abs, b)
			if err != nil {
				return Value{}, err
			}
			return negate(p)
		}, nil
	}
	return func(r *renderer, s *scope) (Value, error) {
		a, err := l(r, s)
		if err != nil {
			return Value{}, err
		}
		b, err := r2(r, s)
		if err != nil {
			return Value{}, err
		}
		return r.binaryOp(op, a, b)
	}, nil
}

// concatExpr compiles ~, which joins its operands' str().
func (c *compiler) concatExpr(t *concatExpr) (evalFn, error) {
	fs, err := c.exprs(t.items)
	if err != nil {
		return nil, err
	}
	return func(r *renderer, s *scope) (Value, error) {
		var b strings.Builder
		for _, f := range fs {
			v, err := f(r, s)
			if err != nil {
				return Value{}, err
			}
			b.WriteString(pyStr(v))
			if err := r.checkSize(b.Len()); err != nil {
				return Value{}, err
			}
		}
		return Str(b.String()), nil
	}, nil
}

// compareExpr compiles a comparison chain.
func (c *compiler) compareExpr(t *compareExpr) (evalFn, error) {
	first, err := c.expr(t.first)
	if err != nil {
		return nil, err
	}
	rest, err := c.exprs(t.rest)
	if err != nil {
		return nil, err
	}
	ops := t.ops
	if len(ops) == 1 && (ops[0] == "==" || ops[0] == "!=") {
		if k, ok := t.rest[0].(*constExpr); ok && k.v.kind == KindStr {
			// x == 'str', the commonest test in chat templates (role
			// checks): one string comparison, no operator dispatch.
			want, eq := k.v.s, ops[0] == "=="
			return func(r *renderer, s *scope) (Value, error) {
				a, err := first(r, s)
				if err != nil {
					return Value{}, err
				}
				return Bool((a.kind == KindStr && a.s == want) == eq), nil
			}, nil
		}
	}
	return func(r *renderer, s *scope) (Value, error) {
		a, err := first(r, s)
		if err != nil {
			return Value{}, err
		}
		for i, f := range rest {
			b, err := f(r, s)
			if err != nil {
				return Value{}, err
			}
			ok, err := compareOp(ops[i], a, b)
			if err != nil {
				return Value{}, err
			}
			if !ok {
				return falseValue, nil
			}
			a = b
		}
		return trueValue, nil
	}, nil
}

// getattrExpr compiles x.name.
func (c *compiler) getattrExpr(t *getattrExpr) (evalFn, error) {
	obj, err := c.expr(t.obj)
	if err != nil {
		return nil, err
	}
	name := t.attr
	// A dict key is found directly unless the name is also a dict method.
	keyFirst := !isDictMethodName(name)
	return func(r *renderer, s *scope) (Value, error) {
		o, err := obj(r, s)
		if err != nil {
			return Value{}, err
		}
		if o.kind == KindDict && keyFirst {
			if v, ok := o.dict().GetStr(name); ok {
				return v, nil
			}
		}
		return r.getattr(o, name)
	}, nil
}

// getitemExpr compiles x[key] and x[start:stop:step].
func (c *compiler) getitemExpr(t *getitemExpr) (evalFn, error) {
	obj, err := c.expr(t.obj)
	if err != nil {
		return nil, err
	}
	if sl, ok := t.key.(*sliceExpr); ok {
		parts := make([]evalFn, 3)
		for i, p := range []expr{sl.start, sl.stop, sl.step} {
			if p == nil {
				parts[i] = func(*renderer, *scope) (Value, error) { return noneValue, nil }
				continue
			}
			if parts[i], err = c.expr(p); err != nil {
				return nil, err
			}
		}
		// Folded at compile time, Jinja evaluates a slice through
		// environment.getitem, which turns a failed slice into Undefined;
		// at run time a slice is a plain subscript that raises.
		folded := c.folding
		return func(r *renderer, s *scope) (Value, error) {
			o, err := obj(r, s)
			if err != nil {
				return Value{}, err
			}
			vs, err := evalAll(r, s, parts)
			if err != nil {
				return Value{}, err
			}
			v, err := r.slice(o, vs[0], vs[1], vs[2])
			if err != nil && folded && o.kind != KindUndefinedValue {
				var te *TemplateError
				if errors.As(err, &te) && te.PyType == "TypeError" {
					return undefined(objectTypeRepr(o) + " has no element slice(" + pyRepr(vs[0]) + ", " + pyRepr(vs[1]) + ", " + pyRepr(vs[2]) + ")"), nil
				}
			}
			return v, err
		}, nil
	}
	key, err := c.expr(t.key)
	if err != nil {
		return nil, err
	}
	return func(r *renderer, s *scope) (Value, error) {
		o, err := obj(r, s)
		if err != nil {
			return Value{}, err
		}
		k, err := key(r, s)
		if err != nil {
			return Value{}, err
		}
		return r.getitem(o, k)
	}, nil
}

// seqExpr compiles a tuple or list display.
func (c *compiler) seqExpr(items []expr, kind Kind) (evalFn, error) {
	fs, err := c.exprs(items)
	if err != nil {
		return nil, err
	}
	return func(r *renderer, s *scope) (Value, error) {
		vs, err := evalAll(r, s, fs)
		if err != nil {
			return Value{}, err
		}
		return Value{kind: kind, ref: &vs}, nil
	}, nil
}

// unaryExpr compiles -x or +x.
func (c *compiler) unaryExpr(x expr, op func(Value) (Value, error)) (evalFn, error) {
	f, err := c.expr(x)
	if err != nil {
		return nil, err
	}
	return func(r *renderer, s *scope) (Value, error) {
		v, err := f(r, s)
		if err != nil {
			return Value{}, err
		}
		return op(v)
	}, nil
}

// addChain compiles a left-nested run of + (a + b + c ...), the usual way
// chat templates build a turn. While every operand is a plain str the
// pieces are joined once instead of pairwise; any other operand falls back
// to Python's pairwise addition from that point, with the same errors.
func (c *compiler) addChain(t *binExpr) (evalFn, error) {
	ch, err := c.addChainOperands(t)
	if err != nil {
		return nil, err
	}
	return func(r *renderer, s *scope) (Value, error) {
		var buf [8]string
		pieces, v, err := ch.eval(r, s, buf[:0])
		if err != nil || pieces == nil {
			return v, err
		}
		return Str(strings.Join(pieces, "")), nil
	}, nil
}

func (c *compiler) addChainOperands(t *binExpr) (*addChainFn, error) {
	var operands []expr
	var x expr = t
	for {
		b, ok := x.(*binExpr)
		if !ok || b.op != "+" {
			break
		}
		operands = append(operands, b.r)
		x = b.l
	}
	operands = append(operands, x)
	for i, j := 0, len(operands)-1; i < j; i, j = i+1, j-1 {
		operands[i], operands[j] = operands[j], operands[i]
	}
	fs, err := c.exprs(operands)
	if err != nil {
		return nil, err
	}
	return &addChainFn{fs: fs}, nil
}

// addChainFn evaluates the operands of a + chain.
type addChainFn struct{ fs []evalFn }

// eval returns the operands as pieces when all are plain strs (their sum is
// their concatenation); otherwise pieces is nil and v is the Python sum.
func (ch *addChainFn) eval(r *renderer, s *scope, pieces []string) ([]string, Value, error) {
	size := 0
	for i, f := range ch.fs {
		v, err := f(r, s)
		if err != nil {
			return nil, Value{}, err
		}
		if v.kind == KindStr && !v.safe {
			pieces = append(pieces, v.s)
			size += len(v.s)
			continue
		}
		// Not a plain str: continue pairwise from the sum so far.
		acc := v
		if i > 0 {
			if err := r.checkSize(size); err != nil {
				return nil, Value{}, err
			}
			if acc, err = r.binaryOp("+", Str(strings.Join(pieces, "")), v); err != nil {
				return nil, Value{}, err
			}
		}
		for _, g := range ch.fs[i+1:] {
			w, err := g(r, s)
			if err != nil {
				return nil, Value{}, err
			}
			if acc, err = r.binaryOp("+", acc, w); err != nil {
				return nil, Value{}, err
			}
		}
		return nil, acc, nil
	}
	if err := r.checkSize(size); err != nil {
		return nil, Value{}, err
	}
	if pieces == nil {
		pieces = []string{}
	}
	return pieces, Value{}, nil
}

// contextFilters are the filters Jinja marks pass_context, which its
// constant folding never evaluates.
var contextFilters = map[string]bool{"map": true, "select": true, "reject": true, "selectattr": true, "rejectattr": true, "random": true}

// errImpossible stops compile-time evaluation of an expression that is not
// constant (Jinja's nodes.Impossible).
var errImpossible = errors.New("not a constant")

// constValue evaluates x at compile time the way Jinja's as_const does: no
// variables, calls or pass_context filters. With safeOnly, the result must
// also be a value Jinja's optimizer would embed (has_safe_repr).
func (c *compiler) constValue(x expr, safeOnly bool) (Value, bool) {
	switch x.(type) {
	case *constExpr, *nameExpr, *callExpr, *nsRefExpr:
		return Value{}, false
	}
	fc := &compiler{folding: true, bound: c.bound, limits: c.limits}
	f, err := fc.expr(x)
	if err != nil {
		return Value{}, false
	}
	r := &renderer{ctx: context.Background(), out: &strings.Builder{}, limits: c.limits.withDefaults(), rootVars: map[string]Value{}}
	v, err := f(r, nil)
	if err != nil || r.out.Len() > 0 {
		return Value{}, false
	}
	if safeOnly && !hasSafeRepr(v) {
		return Value{}, false
	}
	return v, true
}

// hasSafeRepr is Jinja's has_safe_repr: the values its optimizer folds into
// constants.
func hasSafeRepr(v Value) bool {
	switch v.kind {
	case KindNone, KindBool, KindInt, KindBigInt, KindFloat, KindStr:
		return true
	case KindList:
		for _, it := range v.items() {
			if !hasSafeRepr(it) {
				return false
			}
		}
		return true
	case KindTuple:
		if v.s != "" {
			return false // a namedtuple
		}
		for _, it := range v.items() {
			if !hasSafeRepr(it) {
				return false
			}
		}
		return true
	case KindDict:
		d := v.dict()
		for i, k := range d.keys {
			if !hasSafeRepr(k) || !hasSafeRepr(d.vals[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func (c *compiler) pair(a, b expr) (evalFn, evalFn, error) {
	l, err := c.expr(a)
	if err != nil {
		return nil, nil, err
	}
	r, err := c.expr(b)
	return l, r, err
}

// compiledArgs evaluates call arguments including *args and **kwargs.
type compiledArgs struct {
	pos     []evalFn
	kwNames []string
	kwVals  []evalFn
	dynArgs evalFn
	dynKws  evalFn
}

func (c *compiler) callArgs(a callArgsAST) (*compiledArgs, error) {
	ca := &compiledArgs{kwNames: a.kwNames}
	var err error
	if ca.pos, err = c.exprs(a.pos); err != nil {
		return nil, err
	}
	if ca.kwVals, err = c.exprs(a.kwVals); err != nil {
		return nil, err
	}
	if a.dynArgs != nil {
		if ca.dynArgs, err = c.expr(a.dynArgs); err != nil {
			return nil, err
		}
	}
	if a.dynKws != nil {
		if ca.dynKws, err = c.expr(a.dynKws); err != nil {
			return nil, err
		}
	}
	return ca, nil
}

func (ca *compiledArgs) eval(r *renderer, s *scope) ([]Value, []kwArg, error) {
	args, err := evalAll(r, s, ca.pos)
	if err != nil {
		return nil, nil, err
	}
	var kw []kwArg
	if len(ca.kwVals) > 0 {
		kw = make([]kwArg, len(ca.kwVals))
		for i, f := range ca.kwVals {
			v, err := f(r, s)
			if err != nil {
				return nil, nil, err
			}
			kw[i] = kwArg{name: ca.kwNames[i], val: v}
		}
	}
	if ca.dynArgs != nil {
		v, err := ca.dynArgs(r, s)
		if err != nil {
			return nil, nil, err
		}
		items, err := iterate(v)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, items...)
	}
	if ca.dynKws != nil {
		v, err := ca.dynKws(r, s)
		if err != nil {
			return nil, nil, err
		}
		if v.kind != KindDict {
			if v.kind == KindUndefinedValue {
				return args, kw, nil
			}
			return nil, nil, typeErr("argument after ** must be a mapping, not %s", v.typeName())
		}
		d := v.dict()
		for i, k := range d.keys {
			if k.kind != KindStr {
				return nil, nil, typeErr("keywords must be strings")
			}
			kw = append(kw, kwArg{name: k.s, val: d.vals[i]})
		}
	}
	return args, kw, nil
}

func (c *compiler) call(t *callExpr) (evalFn, error) {
	if c.folding {
		return func(*renderer, *scope) (Value, error) { return Value{}, errImpossible }, nil
	}
	ca, err := c.callArgs(t.args)
	if err != nil {
		return nil, err
	}
	// Method calls on str/dict/list dispatch directly, without allocating a
	// bound method.
	if ga, ok := t.fn.(*getattrExpr); ok {
		obj, err := c.expr(ga.obj)
		if err != nil {
			return nil, err
		}
		name := ga.attr
		return func(r *renderer, s *scope) (Value, error) {
			o, err := obj(r, s)
			if err != nil {
				return Value{}, err
			}
			var fn Value
			if m, ok := methodTable(o.kind)[name]; ok && !isDunder(name) {
				args, kw, err := ca.eval(r, s)
				if err != nil {
					return Value{}, err
				}
				if o.safe {
					return callStrMethod(r, name, m, o, args, kw)
				}
				return m(r, o, args, kw)
			}
			if fn, err = r.getattr(o, name); err != nil {
				return Value{}, err
			}
			args, kw, err := ca.eval(r, s)
			if err != nil {
				return Value{}, err
			}
			return r.call(fn, args, kw)
		}, nil
	}
	fnE, err := c.expr(t.fn)
	if err != nil {
		return nil, err
	}
	return func(r *renderer, s *scope) (Value, error) {
		fn, err := fnE(r, s)
		if err != nil {
			return Value{}, err
		}
		args, kw, err := ca.eval(r, s)
		if err != nil {
			return Value{}, err
		}
		return r.call(fn, args, kw)
	}, nil
}

// filter compiles t; when input is non-nil it supplies the filtered value
// (filter blocks and set blocks), otherwise t.x does.
func (c *compiler) filter(t *filterExpr, input evalFn) (evalFn, error) {
	f, ok := filters[t.name]
	if !ok {
		return nil, &TemplateError{Kind: KindSyntax, PyType: "TemplateAssertionError", Message: "No filter named '" + t.name + "'.", Line: t.line}
	}
	if c.folding && (contextFilters[t.name] || input != nil) {
		return func(*renderer, *scope) (Value, error) { return Value{}, errImpossible }, nil
	}
	ca, err := c.callArgs(t.args)
	if err != nil {
		return nil, err
	}
	if input == nil {
		if input, err = c.expr(t.x); err != nil {
			return nil, err
		}
	}
	return func(r *renderer, s *scope) (Value, error) {
		v, err := input(r, s)
		if err != nil {
			return Value{}, err
		}
		args, kw, err := ca.eval(r, s)
		if err != nil {
			return Value{}, err
		}
		return f(r, v, args, kw)
	}, nil
}

func (c *compiler) test(t *testExpr) (evalFn, error) {
	f, ok := tests[t.name]
	if !ok {
		return nil, &TemplateError{Kind: KindSyntax, PyType: "TemplateAssertionError", Message: "No test named '" + t.name + "'.", Line: t.line}
	}
	ca, err := c.callArgs(t.args)
	if err != nil {
		return nil, err
	}
	x, err := c.expr(t.x)
	if err != nil {
		return nil, err
	}
	return func(r *renderer, s *scope) (Value, error) {
		v, err := x(r, s)
		if err != nil {
			return Value{}, err
		}
		args, kw, err := ca.eval(r, s)
		if err != nil {
			return Value{}, err
		}
		ok, err := f(r, v, args, kw)
		return Bool(ok), err
	}, nil
}
