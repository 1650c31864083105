package jinja

import (
	"strings"
)

// parser is a recursive-descent parser with the grammar and precedence of
// jinja2/parser.py.
type parser struct {
	depth    int // nesting of expressions and blocks, bounded by maxNesting
	toks     []token
	p        int
	tagStack []string
	endStack [][]string
}

func parse(src string) ([]stmt, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	ps := &parser{toks: toks}
	body, err := ps.subparse(nil)
	if err != nil {
		return nil, err
	}
	return body, nil
}

func (ps *parser) cur() token  { return ps.toks[ps.p] }
func (ps *parser) look() token { return ps.toks[min(ps.p+1, len(ps.toks)-1)] }
func (ps *parser) next() token {
	t := ps.toks[ps.p]
	if ps.p < len(ps.toks)-1 {
		ps.p++
	}
	return t
}

func (ps *parser) isOp(op string) bool   { return ps.cur().is(tOp, op) }
func (ps *parser) isName(n string) bool  { return ps.cur().is(tName, n) }
func (ps *parser) skipOp(op string) bool { return ps.skipIf(tOp, op) }
func (ps *parser) skipIf(typ tokType, val string) bool {
	if ps.cur().is(typ, val) {
		ps.next()
		return true
	}
	return false
}

func (ps *parser) fail(line int, format string, a ...any) error {
	return syntaxErr(line, format, a...)
}

// expect consumes a token of the given type (and value, if not empty);
// desc is how Jinja describes what it expected.
func (ps *parser) expect(typ tokType, val, desc string) (token, error) {
	t := ps.cur()
	if t.typ == typ && (val == "" || t.val == val) {
		return ps.next(), nil
	}
	if t.typ == tEOF {
		return t, ps.fail(t.line, "unexpected end of template, expected '%s'.", desc)
	}
	return t, ps.fail(t.line, "expected token '%s', got '%s'", desc, t.describe())
}

func (ps *parser) expectOp(op string) error {
	_, err := ps.expect(tOp, op, op)
	return err
}

func (ps *parser) failUnknownTag(name string, line int) error {
	return ps.failUtEOF(name, ps.endStack, line)
}

func (ps *parser) failUtEOF(name string, stack [][]string, line int) error {
	expected := map[string]bool{}
	for _, ends := range stack {
		for _, e := range ends {
			expected[e] = true
		}
	}
	var msg []string
	if name == "" {
		msg = append(msg, "Unexpected end of template.")
	} else {
		msg = append(msg, "Encountered unknown tag '"+name+"'.")
	}
	if len(stack) > 0 {
		var q []string
		for _, e := range stack[len(stack)-1] {
			q = append(q, "'"+e+"'")
		}
		looking := strings.Join(q, " or ")
		if name != "" && expected[name] {
			msg = append(msg, "You probably made a nesting mistake. Jinja is expecting this tag, but currently looking for "+looking+".")
		} else {
			msg = append(msg, "Jinja was looking for the following tags: "+looking+".")
		}
	}
	if len(ps.tagStack) > 0 {
		msg = append(msg, "The innermost block that needs to be closed is '"+ps.tagStack[len(ps.tagStack)-1]+"'.")
	}
	return ps.fail(line, "%s", strings.Join(msg, " "))
}

func (ps *parser) atEnd(ends []string) bool {
	t := ps.cur()
	if t.typ != tName {
		return false
	}
	for _, e := range ends {
		if t.val == e {
			return true
		}
	}
	return false
}

func (ps *parser) subparse(ends []string) ([]stmt, error) {
	var body []stmt
	if ends != nil {
		ps.endStack = append(ps.endStack, ends)
		defer func() { ps.endStack = ps.endStack[:len(ps.endStack)-1] }()
	}
	for {
		t := ps.cur()
		switch t.typ {
		case tEOF:
			return body, nil
		case tData:
			body = append(body, &dataStmt{text: t.val})
			ps.next()
		case tVarBegin:
			ps.next()
			x, err := ps.parseTuple(false, true, nil, false)
			if err != nil {
				return nil, err
			}
			body = append(body, &outputStmt{x: x, line: t.line})
			if _, err := ps.expect(tVarEnd, "", "end of print statement"); err != nil {
				return nil, err
			}
		case tBlockBegin:
			ps.next()
			if ends != nil && ps.atEnd(ends) {
				return body, nil
			}
			st, err := ps.parseStatement()
			if err != nil {
				return nil, err
			}
			body = append(body, st...)
			if _, err := ps.expect(tBlockEnd, "", "end of statement block"); err != nil {
				return nil, err
			}
		default:
			return nil, ps.fail(t.line, "internal parsing error")
		}
	}
}

func (ps *parser) parseStatements(ends []string, dropNeedle bool) ([]stmt, error) {
	ps.skipOp(":")
	if _, err := ps.expect(tBlockEnd, "", "end of statement block"); err != nil {
		return nil, err
	}
	body, err := ps.subparse(ends)
	if err != nil {
		return nil, err
	}
	if ps.cur().typ == tEOF {
		stack := append(append([][]string{}, ps.endStack...), ends)
		return nil, ps.failUtEOF("", stack, ps.cur().line)
	}
	if dropNeedle {
		ps.next()
	}
	return body, nil
}

func (ps *parser) parseStatement() ([]stmt, error) {
	t := ps.cur()
	ps.depth++
	defer func() { ps.depth-- }()
	if ps.depth > maxNesting {
		return nil, ps.fail(t.line, "blocks nested too deeply")
	}
	if t.typ != tName {
		return nil, ps.fail(t.line, "tag name expected")
	}
	ps.tagStack = append(ps.tagStack, t.val)
	defer func() { ps.tagStack = ps.tagStack[:len(ps.tagStack)-1] }()
	one := func(s stmt, err error) ([]stmt, error) {
		if err != nil {
			return nil, err
		}
		return []stmt{s}, nil
	}
	switch t.val {
	case "for":
		return one(ps.parseFor())
	case "if":
		return one(ps.parseIf())
	case "set":
		return one(ps.parseSet())
	case "macro":
		return one(ps.parseMacro())
	case "call":
		return one(ps.parseCallBlock())
	case "filter":
		return one(ps.parseFilterBlock())
	case "with":
		return one(ps.parseWith())
	case "print":
		ps.next()
		var out []stmt
		for ps.cur().typ != tBlockEnd {
			if len(out) > 0 {
				if err := ps.expectOp(","); err != nil {
					return nil, err
				}
			}
			x, err := ps.parseExpression(true)
			if err != nil {
				return nil, err
			}
			out = append(out, &outputStmt{x: x, line: t.line})
		}
		return out, nil
	case "autoescape":
		// Autoescaping is off in transformers' environment; the block is a scope.
		ps.next()
		if _, err := ps.parseExpression(true); err != nil {
			return nil, err
		}
		body, err := ps.parseStatements([]string{"endautoescape"}, true)
		return one(&scopeStmt{body: body}, err)
	case "break":
		ps.next()
		return []stmt{&breakStmt{}}, nil
	case "continue":
		ps.next()
		return []stmt{&continueStmt{}}, nil
	case "generation":
		ps.next()
		body, err := ps.parseStatements([]string{"endgeneration"}, true)
		return one(&generationStmt{body: body}, err)
	case "block", "extends", "include", "from", "import":
		return nil, ps.fail(t.line, "the '%s' tag is not supported: templates are rendered standalone", t.val)
	}
	ps.tagStack = ps.tagStack[:len(ps.tagStack)-1]
	err := ps.failUnknownTag(t.val, t.line)
	ps.tagStack = append(ps.tagStack, t.val)
	return nil, err
}

func (ps *parser) parseFor() (stmt, error) {
	line := ps.next().line
	target, err := ps.parseAssignTarget(true, false, []string{"in"}, false)
	if err != nil {
		return nil, err
	}
	if _, err := ps.expect(tName, "in", "in"); err != nil {
		return nil, err
	}
	iter, err := ps.parseTuple(false, false, []string{"recursive"}, false)
	if err != nil {
		return nil, err
	}
	var cond expr
	if ps.skipIf(tName, "if") {
		if cond, err = ps.parseExpression(true); err != nil {
			return nil, err
		}
	}
	recursive := ps.skipIf(tName, "recursive")
	body, err := ps.parseStatements([]string{"endfor", "else"}, false)
	if err != nil {
		return nil, err
	}
	var els []stmt
	if ps.next().val != "endfor" {
		if els, err = ps.parseStatements([]string{"endfor"}, true); err != nil {
			return nil, err
		}
	}
	return &forStmt{target: target, iter: iter, cond: cond, body: body, els: els, recursive: recursive, line: line}, nil
}

func (ps *parser) parseIf() (stmt, error) {
	ps.next()
	res := &ifStmt{}
	for {
		test, err := ps.parseTuple(false, false, nil, false)
		if err != nil {
			return nil, err
		}
		body, err := ps.parseStatements([]string{"elif", "else", "endif"}, false)
		if err != nil {
			return nil, err
		}
		res.tests = append(res.tests, test)
		res.bodies = append(res.bodies, body)
		t := ps.next()
		if t.val == "elif" {
			continue
		}
		if t.val == "else" {
			if res.els, err = ps.parseStatements([]string{"endif"}, true); err != nil {
				return nil, err
			}
		}
		return res, nil
	}
}

func (ps *parser) parseSet() (stmt, error) {
	line := ps.next().line
	target, err := ps.parseAssignTarget(true, false, nil, true)
	if err != nil {
		return nil, err
	}
	if ps.skipOp("=") {
		x, err := ps.parseTuple(false, true, nil, false)
		if err != nil {
			return nil, err
		}
		return &setStmt{target: target, value: x, line: line}, nil
	}
	f, err := ps.parseFilter(nil, false)
	if err != nil {
		return nil, err
	}
	body, err := ps.parseStatements([]string{"endset"}, true)
	if err != nil {
		return nil, err
	}
	var fe *filterExpr
	if f != nil {
		fe = f.(*filterExpr)
	}
	return &setBlockStmt{target: target, filter: fe, body: body, line: line}, nil
}

func (ps *parser) parseSignature() ([]string, []expr, error) {
	var params []string
	var defaults []expr
	if err := ps.expectOp("("); err != nil {
		return nil, nil, err
	}
	for !ps.isOp(")") {
		if len(params) > 0 {
			if err := ps.expectOp(","); err != nil {
				return nil, nil, err
			}
		}
		t, err := ps.expect(tName, "", "name")
		if err != nil {
			return nil, nil, err
		}
		if err := checkAssignable(t); err != nil {
			return nil, nil, err
		}
		if ps.skipOp("=") {
			d, err := ps.parseExpression(true)
			if err != nil {
				return nil, nil, err
			}
			defaults = append(defaults, d)
		} else if len(defaults) > 0 {
			return nil, nil, ps.fail(t.line, "non-default argument follows default argument")
		}
		params = append(params, t.val)
	}
	return params, defaults, ps.expectOp(")")
}

func checkAssignable(t token) error {
	switch t.val {
	case "true", "false", "none", "True", "False", "None":
		return syntaxErr(t.line, "can't assign to 'const'")
	}
	return nil
}

func (ps *parser) parseMacro() (stmt, error) {
	ps.next()
	t, err := ps.expect(tName, "", "name")
	if err != nil {
		return nil, err
	}
	if err := checkAssignable(t); err != nil {
		return nil, err
	}
	params, defaults, err := ps.parseSignature()
	if err != nil {
		return nil, err
	}
	body, err := ps.parseStatements([]string{"endmacro"}, true)
	if err != nil {
		return nil, err
	}
	return &macroStmt{name: t.val, params: params, defaults: defaults, body: body}, nil
}

func (ps *parser) parseCallBlock() (stmt, error) {
	line := ps.next().line
	var params []string
	var defaults []expr
	var err error
	if ps.isOp("(") {
		if params, defaults, err = ps.parseSignature(); err != nil {
			return nil, err
		}
	}
	x, err := ps.parseExpression(true)
	if err != nil {
		return nil, err
	}
	call, ok := x.(*callExpr)
	if !ok {
		return nil, ps.fail(line, "expected call")
	}
	body, err := ps.parseStatements([]string{"endcall"}, true)
	if err != nil {
		return nil, err
	}
	return &callBlockStmt{call: call, params: params, defaults: defaults, body: body, line: line}, nil
}

func (ps *parser) parseFilterBlock() (stmt, error) {
	ps.next()
	f, err := ps.parseFilter(nil, true)
	if err != nil {
		return nil, err
	}
	body, err := ps.parseStatements([]string{"endfilter"}, true)
	if err != nil {
		return nil, err
	}
	return &filterBlockStmt{filter: f.(*filterExpr), body: body}, nil
}

func (ps *parser) parseWith() (stmt, error) {
	ps.next()
	w := &withStmt{}
	for ps.cur().typ != tBlockEnd {
		if len(w.targets) > 0 {
			if err := ps.expectOp(","); err != nil {
				return nil, err
			}
		}
		target, err := ps.parseAssignTarget(true, false, nil, false)
		if err != nil {
			return nil, err
		}
		if err := ps.expectOp("="); err != nil {
			return nil, err
		}
		v, err := ps.parseExpression(true)
		if err != nil {
			return nil, err
		}
		w.targets = append(w.targets, target)
		w.values = append(w.values, v)
	}
	body, err := ps.parseStatements([]string{"endwith"}, true)
	if err != nil {
		return nil, err
	}
	w.body = body
	return w, nil
}

// parseAssignTarget parses a name, a tuple of names, or (withNamespace) a
// namespace attribute reference.
func (ps *parser) parseAssignTarget(withTuple, nameOnly bool, extraEnd []string, withNamespace bool) (expr, error) {
	line := ps.cur().line
	var target expr
	var err error
	if nameOnly {
		t, err := ps.expect(tName, "", "name")
		if err != nil {
			return nil, err
		}
		target = &nameExpr{name: t.val}
	} else if withTuple {
		target, err = ps.parseTuple(true, true, extraEnd, false, withNamespace)
	} else {
		target, err = ps.parsePrimary(withNamespace)
	}
	if err != nil {
		return nil, err
	}
	if !canAssign(target) {
		return nil, ps.fail(line, "can't assign to %s", assignKind(target))
	}
	return target, nil
}

func canAssign(x expr) bool {
	switch t := x.(type) {
	case *nameExpr:
		switch t.name {
		case "true", "false", "none", "True", "False", "None":
			return false
		}
		return true
	case *nsRefExpr:
		return true
	case *tupleExpr:
		for _, it := range t.items {
			if !canAssign(it) {
				return false
			}
		}
		return true
	}
	return false
}

func assignKind(x expr) string {
	switch x.(type) {
	case *constExpr:
		return "'const'"
	case *tupleExpr:
		return "'tuple'"
	case *listExpr:
		return "'list'"
	case *dictExpr:
		return "'dict'"
	}
	return "'expression'"
}

// maxNesting bounds how deeply expressions and blocks may nest, so that a
// hostile template cannot exhaust the stack (Python raises RecursionError).
const maxNesting = 400

func (ps *parser) parseExpression(withCond bool) (expr, error) {
	ps.depth++
	defer func() { ps.depth-- }()
	if ps.depth > maxNesting {
		return nil, ps.fail(ps.cur().line, "expression nested too deeply")
	}
	if withCond {
		return ps.parseCondExpr()
	}
	return ps.parseOr()
}

func (ps *parser) parseCondExpr() (expr, error) {
	line := ps.cur().line
	x, err := ps.parseOr()
	if err != nil {
		return nil, err
	}
	for ps.skipIf(tName, "if") {
		test, err := ps.parseOr()
		if err != nil {
			return nil, err
		}
		var els expr
		if ps.skipIf(tName, "else") {
			if els, err = ps.parseCondExpr(); err != nil {
				return nil, err
			}
		}
		x = &condExpr{test: test, body: x, els: els, line: line}
		line = ps.cur().line
	}
	return x, nil
}

func (ps *parser) parseOr() (expr, error) {
	l, err := ps.parseAnd()
	if err != nil {
		return nil, err
	}
	for ps.skipIf(tName, "or") {
		r, err := ps.parseAnd()
		if err != nil {
			return nil, err
		}
		l = &orExpr{l: l, r: r}
	}
	return l, nil
}

func (ps *parser) parseAnd() (expr, error) {
	l, err := ps.parseNot()
	if err != nil {
		return nil, err
	}
	for ps.skipIf(tName, "and") {
		r, err := ps.parseNot()
		if err != nil {
			return nil, err
		}
		l = &andExpr{l: l, r: r}
	}
	return l, nil
}

func (ps *parser) parseNot() (expr, error) {
	if ps.skipIf(tName, "not") {
		x, err := ps.parseNot()
		if err != nil {
			return nil, err
		}
		return &notExpr{x: x}, nil
	}
	return ps.parseCompare()
}

var compareOps = map[string]bool{"==": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true}

func (ps *parser) parseCompare() (expr, error) {
	x, err := ps.parseMath1()
	if err != nil {
		return nil, err
	}
	var ops []string
	var rest []expr
	for {
		t := ps.cur()
		var op string
		switch {
		case t.typ == tOp && compareOps[t.val]:
			ps.next()
			op = t.val
		case t.is(tName, "in"):
			ps.next()
			op = "in"
		case t.is(tName, "not") && ps.look().is(tName, "in"):
			ps.next()
			ps.next()
			op = "notin"
		default:
			if len(ops) == 0 {
				return x, nil
			}
			return &compareExpr{first: x, ops: ops, rest: rest}, nil
		}
		r, err := ps.parseMath1()
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
		rest = append(rest, r)
	}
}

func (ps *parser) parseMath1() (expr, error) {
	l, err := ps.parseConcat()
	if err != nil {
		return nil, err
	}
	for ps.isOp("+") || ps.isOp("-") {
		op := ps.next().val
		r, err := ps.parseConcat()
		if err != nil {
			return nil, err
		}
		l = &binExpr{op: op, l: l, r: r}
	}
	return l, nil
}

func (ps *parser) parseConcat() (expr, error) {
	x, err := ps.parseMath2()
	if err != nil {
		return nil, err
	}
	items := []expr{x}
	for ps.skipOp("~") {
		y, err := ps.parseMath2()
		if err != nil {
			return nil, err
		}
		items = append(items, y)
	}
	if len(items) == 1 {
		return x, nil
	}
	return &concatExpr{items: items}, nil
}

func (ps *parser) parseMath2() (expr, error) {
	l, err := ps.parsePow()
	if err != nil {
		return nil, err
	}
	for ps.isOp("*") || ps.isOp("/") || ps.isOp("//") || ps.isOp("%") {
		op := ps.next().val
		r, err := ps.parsePow()
		if err != nil {
			return nil, err
		}
		l = &binExpr{op: op, l: l, r: r}
	}
	return l, nil
}

func (ps *parser) parsePow() (expr, error) {
	l, err := ps.parseUnary(true)
	if err != nil {
		return nil, err
	}
	for ps.skipOp("**") {
		r, err := ps.parseUnary(true)
		if err != nil {
			return nil, err
		}
		l = &binExpr{op: "**", l: l, r: r}
	}
	return l, nil
}

func (ps *parser) parseUnary(withFilter bool) (expr, error) {
	ps.depth++
	defer func() { ps.depth-- }()
	if ps.depth > maxNesting {
		return nil, ps.fail(ps.cur().line, "expression nested too deeply")
	}
	var x expr
	var err error
	switch {
	case ps.skipOp("-"):
		if x, err = ps.parseUnary(false); err != nil {
			return nil, err
		}
		x = &negExpr{x: x}
	case ps.skipOp("+"):
		if x, err = ps.parseUnary(false); err != nil {
			return nil, err
		}
		x = &posExpr{x: x}
	default:
		if x, err = ps.parsePrimary(false); err != nil {
			return nil, err
		}
	}
	if x, err = ps.parsePostfix(x); err != nil {
		return nil, err
	}
	if withFilter {
		return ps.parseFilterExpr(x)
	}
	return x, nil
}

func (ps *parser) parsePrimary(withNamespace bool) (expr, error) {
	t := ps.cur()
	switch t.typ {
	case tName:
		ps.next()
		switch t.val {
		case "true", "True":
			return &constExpr{v: trueValue}, nil
		case "false", "False":
			return &constExpr{v: falseValue}, nil
		case "none", "None":
			return &constExpr{v: noneValue}, nil
		}
		if withNamespace && ps.isOp(".") {
			ps.next()
			a, err := ps.expect(tName, "", "name")
			if err != nil {
				return nil, err
			}
			return &nsRefExpr{name: t.val, attr: a.val}, nil
		}
		return &nameExpr{name: t.val}, nil
	case tString:
		ps.next()
		s := t.val
		for ps.cur().typ == tString {
			s += ps.next().val
		}
		return &constExpr{v: Str(s)}, nil
	case tInt, tFloat:
		ps.next()
		return &constExpr{v: t.num}, nil
	case tOp:
		switch t.val {
		case "(":
			ps.next()
			x, err := ps.parseTuple(false, true, nil, true)
			if err != nil {
				return nil, err
			}
			return x, ps.expectOp(")")
		case "[":
			return ps.parseList()
		case "{":
			return ps.parseDict()
		}
	}
	return nil, ps.fail(t.line, "unexpected '%s'", t.describe())
}

// parseTuple parses comma-separated expressions; a single one without a
// comma is returned as is. simplified parses primaries only (targets).
func (ps *parser) parseTuple(simplified, withCond bool, extraEnd []string, explicitParens bool, withNamespace ...bool) (expr, error) {
	ns := len(withNamespace) > 0 && withNamespace[0]
	var items []expr
	isTuple := false
	for {
		if len(items) > 0 {
			if err := ps.expectOp(","); err != nil {
				return nil, err
			}
		}
		if ps.isTupleEnd(extraEnd) {
			break
		}
		var x expr
		var err error
		if simplified {
			x, err = ps.parsePrimary(ns)
		} else {
			x, err = ps.parseExpression(withCond)
		}
		if err != nil {
			return nil, err
		}
		items = append(items, x)
		if ps.isOp(",") {
			isTuple = true
		} else {
			break
		}
	}
	if !isTuple {
		if len(items) > 0 {
			return items[0], nil
		}
		if !explicitParens {
			return nil, ps.fail(ps.cur().line, "Expected an expression, got '%s'", ps.cur().describe())
		}
	}
	return &tupleExpr{items: items}, nil
}

func (ps *parser) isTupleEnd(extraEnd []string) bool {
	t := ps.cur()
	if t.typ == tVarEnd || t.typ == tBlockEnd || t.is(tOp, ")") {
		return true
	}
	return extraEnd != nil && ps.atEnd(extraEnd)
}

func (ps *parser) parseList() (expr, error) {
	ps.next()
	l := &listExpr{}
	for !ps.isOp("]") {
		if len(l.items) > 0 {
			if err := ps.expectOp(","); err != nil {
				return nil, err
			}
		}
		if ps.isOp("]") {
			break
		}
		x, err := ps.parseExpression(true)
		if err != nil {
			return nil, err
		}
		l.items = append(l.items, x)
	}
	return l, ps.expectOp("]")
}

func (ps *parser) parseDict() (expr, error) {
	ps.next()
	d := &dictExpr{}
	for !ps.isOp("}") {
		if len(d.keys) > 0 {
			if err := ps.expectOp(","); err != nil {
				return nil, err
			}
		}
		if ps.isOp("}") {
			break
		}
		k, err := ps.parseExpression(true)
		if err != nil {
			return nil, err
		}
		if err := ps.expectOp(":"); err != nil {
			return nil, err
		}
		v, err := ps.parseExpression(true)
		if err != nil {
			return nil, err
		}
		d.keys = append(d.keys, k)
		d.vals = append(d.vals, v)
	}
	return d, ps.expectOp("}")
}

func (ps *parser) parsePostfix(x expr) (expr, error) {
	for {
		var err error
		switch {
		case ps.isOp(".") || ps.isOp("["):
			x, err = ps.parseSubscript(x)
		case ps.isOp("("):
			x, err = ps.parseCall(x)
		default:
			return x, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (ps *parser) parseFilterExpr(x expr) (expr, error) {
	for {
		var err error
		switch {
		case ps.isOp("|"):
			x, err = ps.parseFilter(x, false)
		case ps.isName("is"):
			x, err = ps.parseTest(x)
		case ps.isOp("("):
			x, err = ps.parseCall(x)
		default:
			return x, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (ps *parser) parseSubscript(x expr) (expr, error) {
	t := ps.next()
	if t.val == "." {
		a := ps.next()
		if a.typ == tName {
			return &getattrExpr{obj: x, attr: a.val, line: t.line}, nil
		}
		if a.typ != tInt {
			return nil, ps.fail(a.line, "expected name or number")
		}
		return &getitemExpr{obj: x, key: &constExpr{v: a.num}, line: t.line}, nil
	}
	var args []expr
	for !ps.isOp("]") {
		if len(args) > 0 {
			if err := ps.expectOp(","); err != nil {
				return nil, err
			}
		}
		a, err := ps.parseSubscribed()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	if err := ps.expectOp("]"); err != nil {
		return nil, err
	}
	if len(args) == 1 {
		return &getitemExpr{obj: x, key: args[0], line: t.line}, nil
	}
	return &getitemExpr{obj: x, key: &tupleExpr{items: args}, line: t.line}, nil
}

func (ps *parser) parseSubscribed() (expr, error) {
	var parts []expr
	if ps.isOp(":") {
		ps.next()
		parts = []expr{nil}
	} else {
		x, err := ps.parseExpression(true)
		if err != nil {
			return nil, err
		}
		if !ps.isOp(":") {
			return x, nil
		}
		ps.next()
		parts = []expr{x}
	}
	endOfSlice := func() bool { return ps.isOp("]") || ps.isOp(",") }
	if ps.isOp(":") || endOfSlice() {
		parts = append(parts, nil)
	} else {
		x, err := ps.parseExpression(true)
		if err != nil {
			return nil, err
		}
		parts = append(parts, x)
	}
	if ps.isOp(":") {
		ps.next()
		if endOfSlice() {
			parts = append(parts, nil)
		} else {
			x, err := ps.parseExpression(true)
			if err != nil {
				return nil, err
			}
			parts = append(parts, x)
		}
	} else {
		parts = append(parts, nil)
	}
	return &sliceExpr{start: parts[0], stop: parts[1], step: parts[2]}, nil
}

func (ps *parser) parseCallArgs() (callArgsAST, error) {
	var a callArgsAST
	open, err := ps.expect(tOp, "(", "(")
	if err != nil {
		return a, err
	}
	ensure := func(ok bool) error {
		if !ok {
			return ps.fail(open.line, "invalid syntax for function call expression")
		}
		return nil
	}
	requireComma := false
	for !ps.isOp(")") {
		if requireComma {
			if err := ps.expectOp(","); err != nil {
				return a, err
			}
			if ps.isOp(")") {
				break
			}
		}
		switch {
		case ps.isOp("*"):
			if err := ensure(a.dynArgs == nil && a.dynKws == nil); err != nil {
				return a, err
			}
			ps.next()
			if a.dynArgs, err = ps.parseExpression(true); err != nil {
				return a, err
			}
		case ps.isOp("**"):
			if err := ensure(a.dynKws == nil); err != nil {
				return a, err
			}
			ps.next()
			if a.dynKws, err = ps.parseExpression(true); err != nil {
				return a, err
			}
		case ps.cur().typ == tName && ps.look().is(tOp, "="):
			if err := ensure(a.dynKws == nil); err != nil {
				return a, err
			}
			name := ps.next().val
			ps.next()
			v, err := ps.parseExpression(true)
			if err != nil {
				return a, err
			}
			a.kwNames = append(a.kwNames, name)
			a.kwVals = append(a.kwVals, v)
		default:
			if err := ensure(a.dynArgs == nil && a.dynKws == nil && len(a.kwNames) == 0); err != nil {
				return a, err
			}
			v, err := ps.parseExpression(true)
			if err != nil {
				return a, err
			}
			a.pos = append(a.pos, v)
		}
		requireComma = true
	}
	return a, ps.expectOp(")")
}

func (ps *parser) parseCall(x expr) (expr, error) {
	line := ps.cur().line
	args, err := ps.parseCallArgs()
	if err != nil {
		return nil, err
	}
	return &callExpr{fn: x, args: args, line: line}, nil
}

func (ps *parser) parseFilter(x expr, startInline bool) (expr, error) {
	for ps.isOp("|") || startInline {
		if !startInline {
			ps.next()
		}
		t, err := ps.expect(tName, "", "name")
		if err != nil {
			return nil, err
		}
		name := t.val
		for ps.isOp(".") {
			ps.next()
			n, err := ps.expect(tName, "", "name")
			if err != nil {
				return nil, err
			}
			name += "." + n.val
		}
		var args callArgsAST
		if ps.isOp("(") {
			if args, err = ps.parseCallArgs(); err != nil {
				return nil, err
			}
		}
		x = &filterExpr{x: x, name: name, args: args, line: t.line}
		startInline = false
	}
	return x, nil
}

func (ps *parser) parseTest(x expr) (expr, error) {
	t := ps.next()
	negated := ps.skipIf(tName, "not")
	n, err := ps.expect(tName, "", "name")
	if err != nil {
		return nil, err
	}
	name := n.val
	for ps.isOp(".") {
		ps.next()
		m, err := ps.expect(tName, "", "name")
		if err != nil {
			return nil, err
		}
		name += "." + m.val
	}
	var args callArgsAST
	c := ps.cur()
	switch {
	case c.is(tOp, "("):
		if args, err = ps.parseCallArgs(); err != nil {
			return nil, err
		}
	case (c.typ == tName || c.typ == tString || c.typ == tInt || c.typ == tFloat || c.is(tOp, "[") || c.is(tOp, "{")) &&
		!c.is(tName, "else") && !c.is(tName, "or") && !c.is(tName, "and"):
		if c.is(tName, "is") {
			return nil, ps.fail(c.line, "You cannot chain multiple tests with is")
		}
		a, err := ps.parsePrimary(false)
		if err != nil {
			return nil, err
		}
		if a, err = ps.parsePostfix(a); err != nil {
			return nil, err
		}
		args.pos = []expr{a}
	}
	var res expr = &testExpr{x: x, name: name, args: args, line: t.line}
	if negated {
		res = &notExpr{x: res}
	}
	return res, nil
}
