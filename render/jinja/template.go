package jinja

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// Limits bound the work one Render may do, so that a hostile template cannot
// hang or exhaust memory. Zero fields take the defaults.
type Limits struct {
	// MaxOutputBytes caps the rendered output and every string or list the
	// template builds on the way (default 32 MiB).
	MaxOutputBytes int
	// MaxSteps caps loop iterations plus macro calls (default 10,000,000).
	MaxSteps int64
	// MaxDepth caps nested macro calls and recursive loops (default 256).
	MaxDepth int
}

// DefaultLimits are the limits a zero Limits stands for.
var DefaultLimits = Limits{MaxOutputBytes: 32 << 20, MaxSteps: 10_000_000, MaxDepth: 256}

func (l Limits) withDefaults() Limits {
	if l.MaxOutputBytes <= 0 {
		l.MaxOutputBytes = DefaultLimits.MaxOutputBytes
	}
	if l.MaxSteps <= 0 {
		l.MaxSteps = DefaultLimits.MaxSteps
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultLimits.MaxDepth
	}
	return l
}

// Options configure Compile.
type Options struct {
	Limits Limits
}

// Template is a compiled template; it is safe for concurrent Render calls.
type Template struct {
	body   execFn
	limits Limits
	// sizeHint is the length of the last output, used to size the next
	// output buffer in one allocation when the context has no strings.
	sizeHint atomic.Int64
	// outPerIn is the last output's length per 1024 bytes of the
	// context's strings: outputs grow with their conversations, so the next
	// output is sized from its own context at that rate.
	outPerIn atomic.Int64
}

// Compile parses and compiles src once; the result renders many times.
func Compile(src string, opts Options) (t *Template, err error) {
	defer func() {
		if p := recover(); p != nil {
			t, err = nil, newErr(KindSyntax, "TemplateSyntaxError", fmt.Sprintf("internal compiler error: %v", p))
		}
	}()
	body, err := parse(src)
	if err != nil {
		return nil, err
	}
	c := &compiler{bound: boundNames(body), limits: opts.Limits.withDefaults()}
	fn, err := c.stmts(body)
	if err != nil {
		return nil, err
	}
	return &Template{body: fn, limits: opts.Limits.withDefaults()}, nil
}

// Render renders the template with vars as its context: a dict Value (from
// FromJSON, which keeps key order), a *Dict, or a map[string]any. clock is
// what strftime_now reads (time.Now when nil).
func (t *Template) Render(ctx context.Context, vars any, clock func() time.Time) (out string, err error) {
	root, err := rootScope(vars)
	if err != nil {
		return "", err
	}
	if clock == nil {
		clock = time.Now
	}
	if ctx == nil {
		ctx = context.Background()
	}
	in := int64(0)
	for _, v := range root.root {
		in += strBytes(v, 0)
	}
	hint := t.sizeHint.Load()
	if rate := t.outPerIn.Load(); in > 0 && rate > 0 {
		hint = in * rate / 1024
	}
	var b strings.Builder
	b.Grow(int(min(hint, int64(t.limits.MaxOutputBytes))) + 64)
	r := &renderer{ctx: ctx, out: &b, clock: clock, limits: t.limits, rootVars: root.root}
	defer func() {
		if p := recover(); p != nil {
			out, err = "", newErr(KindType, "InternalError", fmt.Sprintf("internal render error: %v", p))
		}
	}()
	if err := t.body(r, root); err != nil {
		if errors.Is(err, errBreak) || errors.Is(err, errContinue) {
			return "", syntaxErr(0, "'break' or 'continue' outside of a loop")
		}
		return "", err
	}
	t.sizeHint.Store(int64(b.Len()))
	if in > 0 {
		t.outPerIn.Store(int64(b.Len()) * 1024 / in)
	}
	return b.String(), nil
}

// strBytes is the length of the strings in v, two levels down (a list of
// messages and their fields, not what is nested in those fields): what
// an output that quotes its context grows with.
func strBytes(v Value, depth int) int64 {
	switch v.kind {
	case KindStr:
		return int64(len(v.s))
	case KindList, KindTuple:
		if depth < 2 {
			n := int64(0)
			for _, it := range v.items() {
				n += strBytes(it, depth+1)
			}
			return n
		}
	case KindDict:
		if depth < 2 {
			n := int64(0)
			for _, it := range v.dict().vals {
				n += strBytes(it, depth+1)
			}
			return n
		}
	}
	return 0
}

func rootScope(vars any) (*scope, error) {
	s := &scope{root: map[string]Value{}}
	if vars == nil {
		return s, nil
	}
	v, err := FromGo(vars)
	if err != nil {
		return nil, err
	}
	if v.kind != KindDict {
		return nil, fmt.Errorf("jinja: render context must be a dict, got %s", v.typeName())
	}
	d := v.dict()
	for i, k := range d.keys {
		if k.kind != KindStr {
			return nil, fmt.Errorf("jinja: render context keys must be strings")
		}
		s.root[k.s] = d.vals[i]
	}
	return s, nil
}

// renderer is the state of one Render call.
type renderer struct {
	rootVars map[string]Value // the root scope's variables
	ctx      context.Context
	out      *strings.Builder
	clock    func() time.Time
	limits   Limits
	steps    int64
	depth    int
	written  int
}

func (r *renderer) write(s string) error {
	r.written += len(s)
	if r.written > r.limits.MaxOutputBytes {
		return limitErr("output exceeds %d bytes", r.limits.MaxOutputBytes)
	}
	r.out.WriteString(s)
	return nil
}

func (r *renderer) checkSize(n int) error {
	if n > r.limits.MaxOutputBytes {
		return limitErr("value exceeds %d bytes", r.limits.MaxOutputBytes)
	}
	return nil
}

// step counts one loop iteration or macro call.
func (r *renderer) step() error {
	r.steps++
	if r.steps > r.limits.MaxSteps {
		return limitErr("template exceeded %d steps", r.limits.MaxSteps)
	}
	if r.steps&255 == 0 {
		if err := r.ctx.Err(); err != nil {
			return &TemplateError{Kind: KindLimit, PyType: "Canceled", Message: err.Error()}
		}
	}
	return nil
}

func (r *renderer) enter() error {
	r.depth++
	if r.depth > r.limits.MaxDepth {
		return newErr(KindType, "RecursionError", "maximum recursion depth exceeded")
	}
	return nil
}

func (r *renderer) leave() { r.depth-- }

// capture runs fn with output redirected and returns what it wrote.
func (r *renderer) capture(fn func() error) (string, error) {
	saved := r.out
	var b strings.Builder
	r.out = &b
	err := fn()
	r.out = saved
	return b.String(), err
}

// resolve looks a name up through the scopes, then the globals.
func (r *renderer) resolve(s *scope, name string) Value {
	if v, ok := s.get(name); ok {
		return v
	}
	if g, ok := globals[name]; ok {
		return g
	}
	return undefinedName(name)
}

// scope holds the variables of one Jinja frame. The root scope keeps the
// render context and top-level assignments in a map; inner scopes (loop
// iterations, macro calls, blocks) are small and searched linearly.
type scope struct {
	parent *scope
	root   map[string]Value
	names  []string
	vals   []Value
}

func newScope(parent *scope) *scope { return &scope{parent: parent} }

func (s *scope) get(name string) (Value, bool) {
	for sc := s; sc != nil; sc = sc.parent {
		if sc.root != nil {
			if v, ok := sc.root[name]; ok {
				return v, true
			}
			continue
		}
		for i := len(sc.names) - 1; i >= 0; i-- {
			if sc.names[i] == name {
				return sc.vals[i], true
			}
		}
	}
	return Value{}, false
}

func (s *scope) set(name string, v Value) {
	if s.root != nil {
		s.root[name] = v
		return
	}
	for i := range s.names {
		if s.names[i] == name {
			s.vals[i] = v
			return
		}
	}
	s.names = append(s.names, name)
	s.vals = append(s.vals, v)
}
