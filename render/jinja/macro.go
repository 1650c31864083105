package jinja

import "fmt"

// macroDef is a compiled {% macro %} (or a call block's caller).
type macroDef struct {
	name           string
	params         []string
	defaults       []evalFn // for the last len(defaults) params
	body           execFn
	catchKwargs    bool
	catchVarargs   bool
	usesCaller     bool
	explicitCaller bool
}

func (c *compiler) macro(name string, params []string, defaults []expr, body []stmt) (*macroDef, error) {
	m := &macroDef{name: name, params: params}
	var err error
	if m.defaults, err = c.exprs(defaults); err != nil {
		return nil, err
	}
	saved := c.inLoop
	c.inLoop = 0
	m.body, err = c.stmts(body)
	c.inLoop = saved
	if err != nil {
		return nil, err
	}
	refs := map[string]bool{}
	collectNames(body, refs)
	m.catchKwargs = refs["kwargs"]
	m.catchVarargs = refs["varargs"]
	m.usesCaller = refs["caller"]
	for _, p := range params {
		if p == "caller" {
			m.explicitCaller = true
		}
	}
	return m, nil
}

// bind closes the macro over the scope it is defined in.
func (m *macroDef) bind(def *scope) Value {
	return callableValue(&Callable{name: m.name, macro: m, fn: func(r *renderer, args []Value, kw []kwArg) (Value, error) {
		return m.invoke(r, def, args, kw)
	}})
}

// invoke follows jinja2.runtime.Macro.__call__: positional arguments first,
// then keywords for the remaining parameters, then caller, kwargs and varargs.
func (m *macroDef) invoke(r *renderer, def *scope, args []Value, kw []kwArg) (Value, error) {
	if err := r.step(); err != nil {
		return Value{}, err
	}
	if err := r.enter(); err != nil {
		return Value{}, err
	}
	defer r.leave()
	argc := len(m.params)
	rest := append([]kwArg(nil), kw...)
	pop := func(name string) (Value, bool) {
		for i, a := range rest {
			if a.name == name {
				rest = append(rest[:i], rest[i+1:]...)
				return a.val, true
			}
		}
		return Value{}, false
	}
	s := &scope{parent: def, names: make([]string, 0, argc+2), vals: make([]Value, 0, argc+2)}
	missing := make([]bool, argc)
	foundCaller := false
	for i, p := range m.params {
		if i < len(args) {
			s.set(p, args[i])
			continue
		}
		if v, ok := pop(p); ok {
			s.set(p, v)
		} else {
			s.set(p, Value{})
			missing[i] = true
		}
		if p == "caller" {
			foundCaller = true
		}
	}
	if len(args) >= argc {
		foundCaller = m.explicitCaller
	}
	if m.usesCaller && !foundCaller {
		c, ok := pop("caller")
		if !ok || c.kind == KindNone {
			c = undefined("No caller defined")
		}
		s.set("caller", c)
	}
	if m.catchKwargs {
		d := NewDict(len(rest))
		for _, a := range rest {
			d.SetStr(a.name, a.val)
		}
		s.set("kwargs", DictValue(d))
	} else if len(rest) > 0 {
		for _, a := range rest {
			if a.name == "caller" {
				return Value{}, typeErr("macro %s was invoked with two values for the special caller argument. This is most likely a bug.", pyRepr(Str(m.name)))
			}
		}
		return Value{}, typeErr("macro %s takes no keyword argument %s", pyRepr(Str(m.name)), pyRepr(Str(rest[0].name)))
	}
	if m.catchVarargs {
		var extra []Value
		if len(args) > argc {
			extra = append(extra, args[argc:]...)
		}
		if extra == nil {
			extra = []Value{}
		}
		s.set("varargs", Tuple(extra))
	} else if len(args) > argc {
		return Value{}, typeErr("macro %s takes not more than %d argument(s)", pyRepr(Str(m.name)), argc)
	}
	firstDefault := argc - len(m.defaults)
	for i, p := range m.params {
		if !missing[i] {
			continue
		}
		if i >= firstDefault {
			v, err := m.defaults[i-firstDefault](r, s)
			if err != nil {
				return Value{}, err
			}
			s.set(p, v)
		} else {
			s.set(p, undefined(fmt.Sprintf("parameter %s was not provided", pyRepr(Str(p)))))
		}
	}
	out, err := r.capture(func() error { return m.body(r, s) })
	if err != nil {
		return Value{}, err
	}
	return Str(out), nil
}

// collectNames records every variable name an AST loads, including inside
// nested macros and call blocks, as Jinja's find_undeclared does.
func collectNames(body []stmt, refs map[string]bool) {
	nameRefs(refs).stmts(body)
}

// nameRefs collects the names a template body refers to (collectNames).
type nameRefs map[string]bool

func (r nameRefs) exprs(xs []expr) {
	for _, x := range xs {
		r.expr(x)
	}
}

func (r nameRefs) args(a callArgsAST) {
	r.exprs(a.pos)
	r.exprs(a.kwVals)
	r.expr(a.dynArgs)
	r.expr(a.dynKws)
}

func (r nameRefs) expr(x expr) {
	switch t := x.(type) {
	case nil:
	case *nameExpr:
		r[t.name] = true
	case *tupleExpr:
		r.exprs(t.items)
	case *listExpr:
		r.exprs(t.items)
	case *dictExpr:
		r.exprs(t.keys)
		r.exprs(t.vals)
	case *condExpr:
		r.expr(t.test)
		r.expr(t.body)
		r.expr(t.els)
	case *andExpr:
		r.expr(t.l)
		r.expr(t.r)
	case *orExpr:
		r.expr(t.l)
		r.expr(t.r)
	case *notExpr:
		r.expr(t.x)
	case *negExpr:
		r.expr(t.x)
	case *posExpr:
		r.expr(t.x)
	case *binExpr:
		r.expr(t.l)
		r.expr(t.r)
	case *concatExpr:
		r.exprs(t.items)
	case *compareExpr:
		r.expr(t.first)
		r.exprs(t.rest)
	case *getattrExpr:
		r.expr(t.obj)
	case *getitemExpr:
		r.expr(t.obj)
		r.expr(t.key)
	case *sliceExpr:
		r.expr(t.start)
		r.expr(t.stop)
		r.expr(t.step)
	case *callExpr:
		r.expr(t.fn)
		r.args(t.args)
	case *filterExpr:
		r.expr(t.x)
		r.args(t.args)
	case *testExpr:
		r.expr(t.x)
		r.args(t.args)
	}
}

func (r nameRefs) stmts(list []stmt) {
	for _, s := range list {
		r.stmt(s)
	}
}

func (r nameRefs) stmt(s stmt) {
	switch t := s.(type) {
	case *outputStmt:
		r.expr(t.x)
	case *forStmt:
		r.expr(t.iter)
		r.expr(t.cond)
		r.stmts(t.body)
		r.stmts(t.els)
	case *ifStmt:
		r.exprs(t.tests)
		for _, b := range t.bodies {
			r.stmts(b)
		}
		r.stmts(t.els)
	case *setStmt:
		r.expr(t.value)
		if ns, ok := t.target.(*nsRefExpr); ok {
			r[ns.name] = true
		}
	case *setBlockStmt:
		if t.filter != nil {
			r.args(t.filter.args)
		}
		r.stmts(t.body)
	case *macroStmt:
		r.exprs(t.defaults)
		r.stmts(t.body)
	case *callBlockStmt:
		r.expr(t.call)
		r.exprs(t.defaults)
		r.stmts(t.body)
	case *filterBlockStmt:
		r.args(t.filter.args)
		r.stmts(t.body)
	case *withStmt:
		r.exprs(t.values)
		r.stmts(t.body)
	case *scopeStmt:
		r.stmts(t.body)
	case *generationStmt:
		r.stmts(t.body)
	}
}

// boundNames lists every name a template binds anywhere: assignment and
// loop targets, macros and their parameters, call-block and with targets,
// and the names Jinja binds implicitly (loop, caller, varargs, kwargs).
func boundNames(body []stmt) map[string]bool {
	b := map[string]bool{"loop": true, "caller": true, "varargs": true, "kwargs": true, callerVar: true}
	var target func(x expr)
	target = func(x expr) {
		switch t := x.(type) {
		case *nameExpr:
			b[t.name] = true
		case *tupleExpr:
			for _, it := range t.items {
				target(it)
			}
		}
	}
	var walk func(list []stmt)
	walk = func(list []stmt) {
		for _, s := range list {
			switch t := s.(type) {
			case *forStmt:
				target(t.target)
				walk(t.body)
				walk(t.els)
			case *ifStmt:
				for _, body := range t.bodies {
					walk(body)
				}
				walk(t.els)
			case *setStmt:
				target(t.target)
			case *setBlockStmt:
				target(t.target)
				walk(t.body)
			case *macroStmt:
				b[t.name] = true
				for _, p := range t.params {
					b[p] = true
				}
				walk(t.body)
			case *callBlockStmt:
				for _, p := range t.params {
					b[p] = true
				}
				walk(t.body)
			case *filterBlockStmt:
				walk(t.body)
			case *withStmt:
				for _, tg := range t.targets {
					target(tg)
				}
				walk(t.body)
			case *scopeStmt:
				walk(t.body)
			case *generationStmt:
				walk(t.body)
			}
		}
	}
	walk(body)
	return b
}
