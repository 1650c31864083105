package jinja

import (
	"errors"
	"strconv"
)

type execFn func(r *renderer, s *scope) error

// callerVar is the hidden variable through which a call block hands its
// caller macro to the call.
const callerVar = "\x00caller"

// errBreak and errContinue carry {% break %} and {% continue %} up to the
// enclosing loop.
var (
	errBreak    = errors.New("break")
	errContinue = errors.New("continue")
)

func (c *compiler) stmts(list []stmt) (execFn, error) {
	fs := make([]execFn, 0, len(list))
	for _, st := range list {
		f, err := c.stmt(st)
		if err != nil {
			return nil, err
		}
		fs = append(fs, f)
	}
	switch len(fs) {
	case 0:
		return func(*renderer, *scope) error { return nil }, nil
	case 1:
		return fs[0], nil
	}
	return func(r *renderer, s *scope) error {
		for _, f := range fs {
			if err := f(r, s); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

func (c *compiler) stmt(st stmt) (execFn, error) {
	switch t := st.(type) {
	case *dataStmt:
		text := t.text
		return func(r *renderer, _ *scope) error { return r.write(text) }, nil
	case *outputStmt:
		return c.outputStmt(t)
	case *ifStmt:
		return c.ifStmt(t)
	case *forStmt:
		return c.forStmt(t)
	case *setStmt:
		return c.setStmt(t)
	case *setBlockStmt:
		return c.setBlockStmt(t)
	case *macroStmt:
		m, err := c.macro(t.name, t.params, t.defaults, t.body)
		if err != nil {
			return nil, err
		}
		name := t.name
		return func(r *renderer, s *scope) error {
			s.set(name, m.bind(s))
			return nil
		}, nil
	case *callBlockStmt:
		return c.callBlock(t)
	case *filterBlockStmt:
		return c.filterBlockStmt(t)
	case *withStmt:
		return c.withStmt(t)
	case *scopeStmt:
		body, err := c.stmts(t.body)
		if err != nil {
			return nil, err
		}
		return func(r *renderer, s *scope) error { return body(r, newScope(s)) }, nil
	case *generationStmt:
		return c.generationStmt(t)
	case *breakStmt:
		if c.inLoop == 0 {
			return nil, syntaxErr(0, "'break' outside loop")
		}
		return func(*renderer, *scope) error { return errBreak }, nil
	case *continueStmt:
		if c.inLoop == 0 {
			return nil, syntaxErr(0, "'continue' not properly in loop")
		}
		return func(*renderer, *scope) error { return errContinue }, nil
	}
	return nil, syntaxErr(0, "unsupported statement %T", st)
}

// outputStmt compiles {{ x }}; the common shapes write without building
// a joined copy.
func (c *compiler) outputStmt(t *outputStmt) (execFn, error) {
	if b, ok := t.x.(*binExpr); ok && b.op == "+" {
		// {{ a + b + ... }}: write the pieces, skipping the joined copy.
		ch, err := c.addChainOperands(b)
		if err != nil {
			return nil, err
		}
		return func(r *renderer, s *scope) error {
			var buf [8]string
			pieces, v, err := ch.eval(r, s, buf[:0])
			if err != nil {
				return err
			}
			if pieces == nil {
				return r.write(pyStr(v))
			}
			for _, p := range pieces {
				if err := r.write(p); err != nil {
					return err
				}
			}
			return nil
		}, nil
	}
	f, err := c.expr(t.x)
	if err != nil {
		return nil, err
	}
	if v, ok := c.constValue(t.x, false); ok {
		// Jinja writes an output expression it can evaluate at compile
		// time as text, whatever its value (Undefined prints as "").
		text := pyStr(v)
		return func(r *renderer, _ *scope) error { return r.write(text) }, nil
	}
	if fe, ok := t.x.(*filterExpr); ok && isBareToJSON(fe) {
		// {{ x|tojson }}: the JSON is written in place, not built as
		// a string and copied.
		x, err := c.expr(fe.x)
		if err != nil {
			return nil, err
		}
		return func(r *renderer, s *scope) error {
			v, err := x(r, s)
			if err != nil {
				return err
			}
			return writeToJSON(r, v)
		}, nil
	}
	return func(r *renderer, s *scope) error {
		v, err := f(r, s)
		if err != nil {
			return err
		}
		if v.kind == KindStr {
			return r.write(v.s)
		}
		return r.write(pyStr(v))
	}, nil
}

// setStmt compiles {% set target = value %}.
func (c *compiler) setStmt(t *setStmt) (execFn, error) {
	val, err := c.expr(t.value)
	if err != nil {
		return nil, err
	}
	assign, err := c.assigner(t.target)
	if err != nil {
		return nil, err
	}
	return func(r *renderer, s *scope) error {
		v, err := val(r, s)
		if err != nil {
			return err
		}
		return assign(r, s, v)
	}, nil
}

// setBlockStmt compiles {% set target %}...{% endset %}, with its filter.
func (c *compiler) setBlockStmt(t *setBlockStmt) (execFn, error) {
	body, err := c.stmts(t.body)
	if err != nil {
		return nil, err
	}
	assign, err := c.assigner(t.target)
	if err != nil {
		return nil, err
	}
	var captured evalFn = func(r *renderer, s *scope) (Value, error) {
		inner := newScope(s)
		out, err := r.capture(func() error { return body(r, inner) })
		return Str(out), err
	}
	if t.filter != nil {
		if captured, err = c.filter(t.filter, captured); err != nil {
			return nil, err
		}
	}
	return func(r *renderer, s *scope) error {
		v, err := captured(r, s)
		if err != nil {
			return err
		}
		return assign(r, s, v)
	}, nil
}

// filterBlockStmt compiles {% filter f %}...{% endfilter %}.
func (c *compiler) filterBlockStmt(t *filterBlockStmt) (execFn, error) {
	body, err := c.stmts(t.body)
	if err != nil {
		return nil, err
	}
	f, err := c.filter(t.filter, func(r *renderer, s *scope) (Value, error) {
		inner := newScope(s)
		out, err := r.capture(func() error { return body(r, inner) })
		return Str(out), err
	})
	if err != nil {
		return nil, err
	}
	return func(r *renderer, s *scope) error {
		v, err := f(r, s)
		if err != nil {
			return err
		}
		return r.write(pyStr(v))
	}, nil
}

// withStmt compiles {% with a = x, ... %}: the assignments in a scope of
// their own.
func (c *compiler) withStmt(t *withStmt) (execFn, error) {
	vals, err := c.exprs(t.values)
	if err != nil {
		return nil, err
	}
	assigns := make([]assignFn, len(t.targets))
	for i, tg := range t.targets {
		if assigns[i], err = c.assigner(tg); err != nil {
			return nil, err
		}
	}
	body, err := c.stmts(t.body)
	if err != nil {
		return nil, err
	}
	return func(r *renderer, s *scope) error {
		vs, err := evalAll(r, s, vals)
		if err != nil {
			return err
		}
		inner := newScope(s)
		for i, a := range assigns {
			if err := a(r, inner, vs[i]); err != nil {
				return err
			}
		}
		return body(r, inner)
	}, nil
}

// generationStmt compiles {% generation %}: transformers' AssistantTracker
// renders the body through a caller macro: its own scope, output unchanged.
func (c *compiler) generationStmt(t *generationStmt) (execFn, error) {
	saved := c.inLoop
	c.inLoop = 0
	body, err := c.stmts(t.body)
	c.inLoop = saved
	if err != nil {
		return nil, err
	}
	return func(r *renderer, s *scope) error {
		if err := r.enter(); err != nil {
			return err
		}
		defer r.leave()
		return body(r, newScope(s))
	}, nil
}

// isBareToJSON reports whether fe is x|tojson without arguments.
func isBareToJSON(fe *filterExpr) bool {
	a := fe.args
	return fe.name == "tojson" && fe.x != nil && len(a.pos) == 0 && len(a.kwNames) == 0 &&
		a.dynArgs == nil && a.dynKws == nil
}

func (c *compiler) ifStmt(t *ifStmt) (execFn, error) {
	tests, err := c.exprs(t.tests)
	if err != nil {
		return nil, err
	}
	bodies := make([]execFn, len(t.bodies))
	for i, b := range t.bodies {
		if bodies[i], err = c.stmts(b); err != nil {
			return nil, err
		}
	}
	var els execFn
	if t.els != nil {
		if els, err = c.stmts(t.els); err != nil {
			return nil, err
		}
	}
	return func(r *renderer, s *scope) error {
		for i, test := range tests {
			v, err := test(r, s)
			if err != nil {
				return err
			}
			if v.Truth() {
				return bodies[i](r, s)
			}
		}
		if els != nil {
			return els(r, s)
		}
		return nil
	}, nil
}

type assignFn func(r *renderer, s *scope, v Value) error

func (c *compiler) assigner(target expr) (assignFn, error) {
	switch t := target.(type) {
	case *nameExpr:
		name := t.name
		return func(_ *renderer, s *scope, v Value) error {
			s.set(name, v)
			return nil
		}, nil
	case *nsRefExpr:
		name, attr := t.name, t.attr
		return func(r *renderer, s *scope, v Value) error {
			ns := r.resolve(s, name)
			if ns.kind != KindNamespace {
				return runtimeErr("cannot assign attribute on non-namespace object")
			}
			ns.ref.(*Namespace).attrs.SetStr(attr, v)
			return nil
		}, nil
	case *tupleExpr:
		subs := make([]assignFn, len(t.items))
		for i, it := range t.items {
			var err error
			if subs[i], err = c.assigner(it); err != nil {
				return nil, err
			}
		}
		return func(r *renderer, s *scope, v Value) error {
			items, err := unpack(v, len(subs))
			if err != nil {
				return err
			}
			for i, a := range subs {
				if err := a(r, s, items[i]); err != nil {
					return err
				}
			}
			return nil
		}, nil
	}
	return nil, syntaxErr(0, "can't assign to %s", assignKind(target))
}

// unpack is Python's tuple unpacking of v into n targets.
func unpack(v Value, n int) ([]Value, error) {
	switch v.kind {
	case KindList, KindTuple, KindStr, KindDict, KindUndefinedValue, KindIter:
	default:
		return nil, typeErr("cannot unpack non-iterable %s object", v.typeName())
	}
	items, err := iterate(v)
	if err != nil {
		return nil, err
	}
	if len(items) < n {
		return nil, valueErr("not enough values to unpack (expected %d, got %d)", n, len(items))
	}
	if len(items) > n {
		return nil, valueErr("too many values to unpack (expected %d)", n)
	}
	return items, nil
}

func (c *compiler) callBlock(t *callBlockStmt) (execFn, error) {
	caller, err := c.macro("caller", t.params, t.defaults, t.body)
	if err != nil {
		return nil, err
	}
	call := *t.call
	call.args.kwNames = append(append([]string{}, call.args.kwNames...), "caller")
	call.args.kwVals = append(append([]expr{}, call.args.kwVals...), &constExpr{})
	// The caller macro must be bound to the scope of the call site at render
	// time, so it reaches the call through a hidden scope variable.
	call.args.kwVals[len(call.args.kwVals)-1] = &nameExpr{name: callerVar}
	f, err := c.call(&call)
	if err != nil {
		return nil, err
	}
	return func(r *renderer, s *scope) error {
		inner := newScope(s)
		inner.set(callerVar, caller.bind(s))
		v, err := f(r, inner)
		if err != nil {
			return err
		}
		return r.write(pyStr(v))
	}, nil
}

func (c *compiler) forStmt(t *forStmt) (execFn, error) {
	iterE, err := c.expr(t.iter)
	if err != nil {
		return nil, err
	}
	l := &forLoop{recursive: t.recursive, reuse: !definesClosure(t.body)}
	if l.assign, err = c.assigner(t.target); err != nil {
		return nil, err
	}
	if t.cond != nil {
		if l.cond, err = c.expr(t.cond); err != nil {
			return nil, err
		}
	}
	c.inLoop++
	l.body, err = c.stmts(t.body)
	c.inLoop--
	if err != nil {
		return nil, err
	}
	if t.els != nil {
		if l.els, err = c.stmts(t.els); err != nil {
			return nil, err
		}
	}
	return func(r *renderer, s *scope) error {
		seq, err := iterE(r, s)
		if err != nil {
			return err
		}
		return l.run(r, s, seq, 0)
	}, nil
}

// forLoop is a compiled for statement.
type forLoop struct {
	assign    assignFn
	cond      evalFn // the loop's "if" filter, or nil
	body, els execFn // els is nil without an else block
	recursive bool
	// reuse: an iteration scope can be recycled unless the body defines a
	// macro or call block, whose closures keep the scope alive.
	reuse bool
}

// run loops over seq; depth0 is the recursion depth of a recursive loop.
func (l *forLoop) run(r *renderer, s *scope, seq Value, depth0 int) error {
	items, err := iterate(seq)
	if err != nil {
		return err
	}
	if l.cond != nil {
		if items, err = l.filter(r, s, items); err != nil {
			return err
		}
	}
	if len(items) == 0 {
		if l.els != nil {
			return l.els(r, newScope(s))
		}
		return nil
	}
	f := &loopFrame{lc: loopCtx{items: items, depth0: depth0}}
	lc := &f.lc
	if l.recursive {
		lc.recurse = func(r *renderer, seq Value) (Value, error) {
			if err := r.enter(); err != nil {
				return Value{}, err
			}
			defer r.leave()
			out, err := r.capture(func() error { return l.run(r, s, seq, depth0+1) })
			return Str(out), err
		}
	}
	loopVal := Value{kind: KindLoop, ref: lc}
	var is *scope
	for i, it := range items {
		if err := r.step(); err != nil {
			return err
		}
		lc.index0 = i
		is = l.iterScope(f, s, is)
		is.set("loop", loopVal)
		if err := l.assign(r, is, it); err != nil {
			return err
		}
		if err := l.body(r, is); err != nil {
			if err == errBreak {
				break
			}
			if err == errContinue {
				continue
			}
			return err
		}
	}
	return nil
}

// filter keeps the items the loop's "if" holds for, each tested in a scope
// of its own with the loop variables assigned.
func (l *forLoop) filter(r *renderer, s *scope, items []Value) ([]Value, error) {
	kept := make([]Value, 0, len(items))
	for _, it := range items {
		cs := newScope(s)
		if err := l.assign(r, cs, it); err != nil {
			return nil, err
		}
		ok, err := l.cond(r, cs)
		if err != nil {
			return nil, err
		}
		if ok.Truth() {
			kept = append(kept, it)
		}
	}
	return kept, nil
}

// iterScope is the scope of one iteration after prev (nil for the first):
// prev cleared when scopes are recycled, the frame's own scope the first
// time, a fresh one otherwise.
func (l *forLoop) iterScope(f *loopFrame, s, prev *scope) *scope {
	switch {
	case l.reuse && prev != nil:
		clear(prev.vals)
		prev.names, prev.vals = prev.names[:0], prev.vals[:0]
		return prev
	case prev == nil:
		f.sc = scope{parent: s, names: f.names[:0], vals: f.vals[:0]}
		return &f.sc
	default:
		return &scope{parent: s, names: make([]string, 0, 4), vals: make([]Value, 0, 4)}
	}
}

// definesClosure reports whether a body defines macros or call blocks,
// which capture the scope they are defined in.
func definesClosure(body []stmt) bool {
	for _, st := range body {
		switch t := st.(type) {
		case *macroStmt, *callBlockStmt:
			return true
		case *forStmt:
			if definesClosure(t.body) || definesClosure(t.els) {
				return true
			}
		case *ifStmt:
			for _, b := range t.bodies {
				if definesClosure(b) {
					return true
				}
			}
			if definesClosure(t.els) {
				return true
			}
		case *setBlockStmt:
			if definesClosure(t.body) {
				return true
			}
		case *filterBlockStmt:
			if definesClosure(t.body) {
				return true
			}
		case *withStmt:
			if definesClosure(t.body) {
				return true
			}
		case *scopeStmt:
			if definesClosure(t.body) {
				return true
			}
		case *generationStmt:
			if definesClosure(t.body) {
				return true
			}
		}
	}
	return false
}

// loopFrame is what one run of a loop allocates, in one piece: the loop
// variable and the first iteration's scope (the only one when iterations
// reuse their scope) with room for a few names.
type loopFrame struct {
	lc    loopCtx
	sc    scope
	names [4]string
	vals  [4]Value
}

// loopCtx is Jinja's LoopContext (the loop variable).
type loopCtx struct {
	items       []Value
	index0      int
	depth0      int
	lastChanged *Value
	recurse     func(r *renderer, seq Value) (Value, error)
}

func (l *loopCtx) attr(name string) (Value, bool) {
	n := len(l.items)
	switch name {
	case "index":
		return Int(int64(l.index0 + 1)), true
	case "index0":
		return Int(int64(l.index0)), true
	case "revindex":
		return Int(int64(n - l.index0)), true
	case "revindex0":
		return Int(int64(n - l.index0 - 1)), true
	case "first":
		return Bool(l.index0 == 0), true
	case "last":
		return Bool(l.index0 == n-1), true
	case "length":
		return Int(int64(n)), true
	case "depth":
		return Int(int64(l.depth0 + 1)), true
	case "depth0":
		return Int(int64(l.depth0)), true
	case "previtem":
		if l.index0 == 0 {
			return undefined("there is no previous item"), true
		}
		return l.items[l.index0-1], true
	case "nextitem":
		if l.index0 >= n-1 {
			return undefined("there is no next item"), true
		}
		return l.items[l.index0+1], true
	case "cycle":
		return callableValue(&Callable{name: "cycle", self: &Value{kind: KindLoop, ref: l}, fn: func(r *renderer, args []Value, kw []kwArg) (Value, error) {
			if len(args) == 0 {
				return Value{}, typeErr("no items for cycling given")
			}
			return args[l.index0%len(args)], nil
		}}), true
	case "changed":
		return callableValue(&Callable{name: "changed", self: &Value{kind: KindLoop, ref: l}, fn: func(r *renderer, args []Value, kw []kwArg) (Value, error) {
			cur := Tuple(args)
			if l.lastChanged == nil || !pyEqual(*l.lastChanged, cur) {
				l.lastChanged = &cur
				return trueValue, nil
			}
			return falseValue, nil
		}}), true
	}
	return Value{}, false
}

func (l *loopCtx) call(r *renderer, args []Value, kw []kwArg) (Value, error) {
	if l.recurse == nil {
		return Value{}, typeErr("The loop must have the 'recursive' marker to be called.")
	}
	if len(args) != 1 || len(kw) > 0 {
		return Value{}, typeErr("loop() takes exactly 1 argument (%s given)", strconv.Itoa(len(args)+len(kw)))
	}
	return l.recurse(r, args[0])
}
