package jinja

import (
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

type filterFn func(r *renderer, v Value, args []Value, kw []kwArg) (Value, error)

var filters map[string]filterFn

func init() {
	filters = map[string]filterFn{
		"abs":            fAbs,
		"attr":           fAttr,
		"batch":          fBatch,
		"capitalize":     strFilter(pyCapitalize),
		"center":         fCenter,
		"count":          fLength,
		"d":              fDefault,
		"default":        fDefault,
		"dictsort":       fDictsort,
		"e":              fEscape,
		"escape":         fEscape,
		"first":          fFirst,
		"float":          fFloat,
		"forceescape":    fEscape,
		"format":         fFormat,
		"groupby":        fGroupby,
		"indent":         fIndent,
		"int":            fInt,
		"items":          fItems,
		"join":           fJoin,
		"last":           fLast,
		"length":         fLength,
		"list":           fList,
		"lower":          strFilter(pyLower),
		"map":            fMap,
		"max":            fMinMax(false),
		"min":            fMinMax(true),
		"reject":         fSelect(false, false),
		"rejectattr":     fSelect(false, true),
		"replace":        fReplace,
		"reverse":        fReverse,
		"round":          fRound,
		"safe":           fSafe,
		"select":         fSelect(true, false),
		"selectattr":     fSelect(true, true),
		"sort":           fSort,
		"string":         fString,
		"sum":            fSum,
		"title":          fTitle,
		"tojson":         fToJSON,
		"trim":           fTrim,
		"truncate":       fTruncate,
		"unique":         fUnique,
		"upper":          strFilter(pyUpper),
		"wordcount":      fWordcount,
		"striptags":      fStriptags,
		"pprint":         func(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) { return Str(pyRepr(v)), nil },
		"mark_safe":      fSafe,
		"filesizeformat": fFilesize,
	}
}

// softStr is Jinja's soft_str: str(v), keeping Markup.
func softStr(v Value) Value {
	if v.kind == KindStr {
		return v
	}
	return Str(pyStr(v))
}

func strFilter(f func(string) string) filterFn {
	return func(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
		return Str(f(softStr(v).s)), nil
	}
}

func fAbs(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	switch v.kind {
	case KindInt, KindBool, KindBigInt:
		if v.bigInt().Sign() < 0 {
			return negate(v)
		}
		return positive(v)
	case KindFloat:
		return Float(math.Abs(v.fl())), nil
	}
	return Value{}, typeErr("bad operand type for abs(): '%s'", v.typeName())
}

func fAttr(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("do_attr", args, kw, []string{"name"}, 1)
	if err != nil {
		return Value{}, err
	}
	if a[0].kind != KindStr {
		return Value{}, typeErr("attribute name must be string, not '%s'", a[0].typeName())
	}
	// Python attributes only: unlike getattr in templates, attr never
	// falls back to item lookup.
	switch v.kind {
	case KindStr, KindDict, KindList, KindTuple:
		if m, ok := lookupMethod(v, a[0].s); ok {
			return m, nil
		}
	case KindNamespace, KindLoop:
		return r.getattr(v, a[0].s)
	}
	return undefinedAttr(v, a[0]), nil
}

func fBatch(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("do_batch", args, kw, []string{"linecount", "fill_with"}, 1, noneValue)
	if err != nil {
		return Value{}, err
	}
	if !a[0].isIntLike() || a[0].n <= 0 {
		return Value{}, valueErr("linecount must be a positive integer")
	}
	items, err := iterate(v)
	if err != nil {
		return Value{}, err
	}
	n := int(a[0].n)
	var out []Value
	for i := 0; i < len(items); i += n {
		row := append([]Value{}, items[i:min(i+n, len(items))]...)
		for len(row) < n && a[1].kind != KindNone {
			row = append(row, a[1])
		}
		out = append(out, List(row))
	}
	return iterValue("generator", out, nil), nil
}

func nonNilV(v []Value) []Value {
	if v == nil {
		return []Value{}
	}
	return v
}

func fCenter(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("do_center", args, kw, []string{"width"}, 0, Int(80))
	if err != nil {
		return Value{}, err
	}
	return strPad("center")(r, softStr(v), []Value{a[0]}, nil)
}

func fLength(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	n, err := pyLen(v)
	return Int(int64(n)), err
}

func fDefault(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("do_default", args, kw, []string{"default_value", "boolean"}, 0, emptyStr, falseValue)
	if err != nil {
		return Value{}, err
	}
	if v.kind == KindUndefinedValue || (a[1].Truth() && !v.Truth()) {
		return a[0], nil
	}
	return v, nil
}

// ignoreCase is Jinja's ignore_case sort key.
func ignoreCase(v Value) Value {
	if v.kind == KindStr {
		return Str(pyLower(v.s))
	}
	return v
}

// sortValues sorts stably by key like Python's sorted(key=..., reverse=...).
func sortValues(items []Value, key func(Value) (Value, error), reverse bool) ([]Value, error) {
	keys := make([]Value, len(items))
	for i, it := range items {
		k, err := key(it)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	var sortErr error
	sort.SliceStable(idx, func(i, j int) bool {
		a, b := keys[idx[i]], keys[idx[j]]
		if reverse {
			a, b = b, a
		}
		lt, err := pyLess(a, b)
		if err != nil && sortErr == nil {
			sortErr = err
		}
		return lt
	})
	if sortErr != nil {
		return nil, sortErr
	}
	out := make([]Value, len(items))
	for i, j := range idx {
		out[i] = items[j]
	}
	return out, nil
}

func fDictsort(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("do_dictsort", args, kw, []string{"case_sensitive", "by", "reverse"}, 0, falseValue, Str("key"), falseValue)
	if err != nil {
		return Value{}, err
	}
	pos := 0
	switch {
	case a[1].kind == KindStr && a[1].s == "key":
	case a[1].kind == KindStr && a[1].s == "value":
		pos = 1
	default:
		return Value{}, newErr(KindType, "FilterArgumentError", `You can only sort by either "key" or "value"`)
	}
	if v.kind == KindUndefinedValue {
		return Value{}, v.undefinedError()
	}
	if v.kind != KindDict {
		return Value{}, newErr(KindType, "AttributeError", "'"+v.typeName()+"' object has no attribute 'items'")
	}
	cs := a[0].Truth()
	out, err := sortValues(v.dict().itemsList(), func(it Value) (Value, error) {
		k := it.items()[pos]
		if !cs {
			k = ignoreCase(k)
		}
		return k, nil
	}, a[2].Truth())
	if err != nil {
		return Value{}, err
	}
	return List(out), nil
}

func fEscape(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	if v.kind == KindStr && v.safe {
		return v, nil
	}
	return markup(htmlEscape(pyStr(v))), nil
}

func fSafe(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	return markup(pyStr(v)), nil
}

func fFirst(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	items, err := iterate(v)
	if err != nil {
		return Value{}, err
	}
	if len(items) == 0 {
		return undefined("No first item, sequence was empty."), nil
	}
	return items[0], nil
}

func fLast(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	switch v.kind {
	case KindList, KindTuple, KindStr, KindDict, KindUndefinedValue:
	case KindIter:
		if !v.ref.(*iterState).view {
			return Value{}, typeErr("'%s' object is not reversible", v.typeName())
		}
	default:
		return Value{}, typeErr("'%s' object is not reversible", v.typeName())
	}
	items, err := iterate(v)
	if err != nil {
		return Value{}, err
	}
	if len(items) == 0 {
		return undefined("No last item, sequence was empty."), nil
	}
	return items[len(items)-1], nil
}

// pyFloat is Python's float(v); ok is false where Python raises.
func pyFloat(v Value) (float64, bool) {
	switch v.kind {
	case KindInt, KindBool, KindBigInt, KindFloat:
		return v.toFloat(), true
	case KindStr:
		s := strings.TrimFunc(v.s, pyIsSpace)
		ls := strings.ToLower(strings.TrimLeft(s, "+-"))
		switch ls {
		case "inf", "infinity", "nan":
			f, _ := strconv.ParseFloat(s, 64)
			return f, true
		}
		if strings.Contains(s, "__") || strings.HasPrefix(ls, "_") || strings.HasSuffix(s, "_") || strings.HasPrefix(ls, "0x") {
			return 0, false
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
		if err != nil && !math.IsInf(f, 0) {
			return 0, false
		}
		return f, true
	}
	return 0, false
}

func fFloat(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("do_float", args, kw, []string{"default"}, 0, Float(0))
	if err != nil {
		return Value{}, err
	}
	if v.kind == KindUndefinedValue {
		// float(Undefined) raises; do_float only catches TypeError/ValueError.
		return Value{}, v.undefinedError()
	}
	if f, ok := pyFloat(v); ok {
		return Float(f), nil
	}
	return a[0], nil
}

func fInt(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("do_int", args, kw, []string{"default", "base"}, 0, Int(0), Int(10))
	if err != nil {
		return Value{}, err
	}
	if v.kind == KindUndefinedValue {
		return Value{}, v.undefinedError()
	}
	switch v.kind {
	case KindInt, KindBigInt:
		return v, nil
	case KindBool:
		return Int(v.n), nil
	case KindStr:
		s := strings.TrimFunc(v.s, pyIsSpace)
		base := int(a[1].n)
		digits := strings.ReplaceAll(s, "_", "")
		if base == 16 || base == 8 || base == 2 {
			l := strings.ToLower(strings.TrimLeft(digits, "+-"))
			prefix := map[int]string{16: "0x", 8: "0o", 2: "0b"}[base]
			if strings.HasPrefix(l, prefix) {
				digits = strings.Replace(strings.ToLower(digits), prefix, "", 1)
			}
		}
		if !strings.Contains(s, "__") && !strings.HasPrefix(s, "_") && !strings.HasSuffix(s, "_") {
			if i, err := strconv.ParseInt(digits, base, 64); err == nil {
				return Int(i), nil
			}
		}
	}
	if f, ok := pyFloat(v); ok && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return floatToInt(f), nil
	}
	return a[0], nil
}

// floatToInt is Python's int(f) for a finite float: truncation, exact even
// beyond int64.
func floatToInt(f float64) Value {
	if f > -9.2e18 && f < 9.2e18 {
		return Int(int64(f))
	}
	b, _ := big.NewFloat(math.Trunc(f)).Int(nil)
	return bigValue(b)
}

func fFormat(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	if len(args) > 0 && len(kw) > 0 {
		return Value{}, newErr(KindType, "FilterArgumentError", "can't handle positional and keyword arguments at the same time")
	}
	var arg Value
	if len(kw) > 0 {
		d := NewDict(len(kw))
		for _, k := range kw {
			d.SetStr(k.name, k.val)
		}
		arg = DictValue(d)
	} else {
		arg = Tuple(append([]Value{}, args...))
	}
	return r.binaryOp("%", softStr(v), arg)
}

// attrGetter is Jinja's make_attrgetter: dotted parts, digits as ints,
// each looked up with getitem.
func (r *renderer) attrGetter(attr Value, def *Value) func(Value) (Value, error) {
	var parts []Value
	switch {
	case isMissing(attr) || attr.kind == KindNone:
	case attr.kind == KindStr:
		for _, p := range strings.Split(attr.s, ".") {
			if n, err := strconv.Atoi(p); err == nil && isDigits(p) {
				parts = append(parts, Int(int64(n)))
			} else {
				parts = append(parts, Str(p))
			}
		}
	default:
		parts = []Value{attr}
	}
	return func(item Value) (Value, error) {
		for _, p := range parts {
			var err error
			if item, err = r.getitem(item, p); err != nil {
				return Value{}, err
			}
			if def != nil && def.kind != KindNone && item.kind == KindUndefinedValue {
				item = *def
			}
		}
		return item, nil
	}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func fGroupby(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("do_groupby", args, kw, []string{"attribute", "default", "case_sensitive"}, 1, noneValue, falseValue)
	if err != nil {
		return Value{}, err
	}
	get := r.attrGetter(a[0], &a[1])
	items, err := iterate(v)
	if err != nil {
		return Value{}, err
	}
	cs := a[2].Truth()
	key := func(it Value) (Value, error) {
		k, err := get(it)
		if err != nil {
			return Value{}, err
		}
		if !cs {
			k = ignoreCase(k)
		}
		return k, nil
	}
	sorted, err := sortValues(items, key, false)
	if err != nil {
		return Value{}, err
	}
	var out []Value
	for i := 0; i < len(sorted); {
		k, _ := key(sorted[i])
		j := i + 1
		for j < len(sorted) {
			k2, _ := key(sorted[j])
			if !pyEqual(k, k2) {
				break
			}
			j++
		}
		grouper, _ := get(sorted[i])
		g := Tuple([]Value{grouper, List(append([]Value{}, sorted[i:j]...))})
		g.s = groupTupleFields
		out = append(out, g)
		i = j
	}
	return List(nonNilV(out)), nil
}

func fIndent(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("do_indent", args, kw, []string{"width", "first", "blank"}, 0, Int(4), falseValue, falseValue)
	if err != nil {
		return Value{}, err
	}
	var ind string
	switch {
	case a[0].kind == KindStr:
		ind = a[0].s
	case a[0].kind == KindInt || a[0].kind == KindBool:
		if a[0].n > maxFieldWidth {
			return Value{}, limitErr("indent width exceeds %d", maxFieldWidth)
		}
		ind = strings.Repeat(" ", int(max(a[0].n, 0)))
	default:
		return Value{}, typeErr("can't multiply sequence by non-int of type '%s'", a[0].typeName())
	}
	switch v.kind {
	case KindStr:
	case KindUndefinedValue:
		return Value{}, v.undefinedError()
	case KindList:
		// list += str extends the list; the next step then fails.
		return Value{}, newErr(KindType, "AttributeError", "'list' object has no attribute 'splitlines'")
	case KindTuple:
		return Value{}, typeErr("can only concatenate tuple (not \"str\") to tuple")
	default:
		return Value{}, typeErr("unsupported operand type(s) for +=: '%s' and 'str'", v.typeName())
	}
	linesV, _ := strSplitlines(r, Str(v.s+"\n"), nil, nil)
	lines := linesV.items()
	var b strings.Builder
	if a[2].Truth() {
		for i, l := range lines {
			if i > 0 {
				b.WriteString("\n")
				b.WriteString(ind)
			}
			b.WriteString(l.s)
			if err := r.checkSize(b.Len()); err != nil {
				return Value{}, err
			}
		}
	} else {
		b.WriteString(lines[0].s)
		for _, l := range lines[1:] {
			b.WriteString("\n")
			if l.s != "" {
				b.WriteString(ind)
			}
			b.WriteString(l.s)
			if err := r.checkSize(b.Len()); err != nil {
				return Value{}, err
			}
		}
	}
	out := b.String()
	if a[1].Truth() {
		out = ind + out
	}
	if err := r.checkSize(len(out)); err != nil {
		return Value{}, err
	}
	if v.safe {
		return markup(out), nil
	}
	return Str(out), nil
}

func fItems(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	// A generator: a non-mapping fails only when it is consumed.
	switch v.kind {
	case KindUndefinedValue:
		return iterValue("generator", nil, nil), nil
	case KindDict:
		return iterValue("generator", v.dict().itemsList(), nil), nil
	}
	return iterValue("generator", nil, typeErr("Can only get item pairs from a mapping.")), nil
}

func fJoin(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("do_join", args, kw, []string{"d", "attribute"}, 0, emptyStr, noneValue)
	if err != nil {
		return Value{}, err
	}
	items, err := iterate(v)
	if err != nil {
		return Value{}, err
	}
	if a[1].kind != KindNone {
		get := r.attrGetter(a[1], nil)
		mapped := make([]Value, len(items))
		for i, it := range items {
			if mapped[i], err = get(it); err != nil {
				return Value{}, err
			}
		}
		items = mapped
	}
	sep := pyStr(a[0])
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(pyStr(it))
		if err := r.checkSize(b.Len()); err != nil {
			return Value{}, err
		}
	}
	return Str(b.String()), nil
}

func fList(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	items, err := iterate(v)
	if err != nil {
		return Value{}, err
	}
	return List(append([]Value{}, items...)), nil
}

func fMap(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	// A generator that does nothing for a falsy input.
	if !v.Truth() {
		return iterValue("generator", nil, nil), nil
	}
	var fn func(Value) (Value, error)
	if len(args) == 0 {
		var attr Value = missingArg
		var def *Value
		for _, k := range kw {
			switch k.name {
			case "attribute":
				attr = k.val
			case "default":
				d := k.val
				def = &d
			default:
				return Value{}, newErr(KindType, "FilterArgumentError", "Unexpected keyword argument '"+k.name+"'")
			}
		}
		if isMissing(attr) {
			return Value{}, newErr(KindType, "FilterArgumentError", "map requires a filter argument")
		}
		fn = r.attrGetter(attr, def)
	} else {
		if args[0].kind != KindStr {
			return Value{}, newErr(KindType, "FilterArgumentError", "map requires a filter name")
		}
		f, ok := filters[args[0].s]
		if !ok {
			return Value{}, newErr(KindType, "TemplateRuntimeError", "No filter named '"+args[0].s+"'.")
		}
		rest := args[1:]
		fn = func(it Value) (Value, error) { return f(r, it, rest, kw) }
	}
	items, err := iterate(v)
	if err != nil {
		return iterValue("generator", nil, err), nil
	}
	out := make([]Value, 0, len(items))
	for _, it := range items {
		x, err := fn(it)
		if err != nil {
			return iterValue("generator", out, err), nil
		}
		out = append(out, x)
	}
	return iterValue("generator", out, nil), nil
}

func fMinMax(isMin bool) filterFn {
	return func(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
		a, err := bind("do_max", args, kw, []string{"case_sensitive", "attribute"}, 0, falseValue, noneValue)
		if err != nil {
			return Value{}, err
		}
		items, err := iterate(v)
		if err != nil {
			return Value{}, err
		}
		if len(items) == 0 {
			return undefined("No aggregated item, sequence was empty."), nil
		}
		get := r.attrGetter(a[1], nil)
		key := func(it Value) (Value, error) {
			k, err := get(it)
			if err != nil {
				return Value{}, err
			}
			if !a[0].Truth() {
				k = ignoreCase(k)
			}
			return k, nil
		}
		best := items[0]
		bk, err := key(best)
		if err != nil {
			return Value{}, err
		}
		for _, it := range items[1:] {
			k, err := key(it)
			if err != nil {
				return Value{}, err
			}
			// Python's min/max compare the new item with the best so far.
			var better bool
			if isMin {
				better, err = compareOp("<", k, bk)
			} else {
				better, err = compareOp(">", k, bk)
			}
			if err != nil {
				return Value{}, err
			}
			if better {
				best, bk = it, k
			}
		}
		return best, nil
	}
}

func fSelect(keep, byAttr bool) filterFn {
	return func(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
		if !v.Truth() {
			return iterValue("generator", nil, nil), nil
		}
		trans := func(x Value) (Value, error) { return x, nil }
		off := 0
		if byAttr {
			if len(args) == 0 {
				return Value{}, newErr(KindType, "FilterArgumentError", "Missing parameter for attribute name")
			}
			trans = r.attrGetter(args[0], nil)
			off = 1
		}
		pred := func(x Value) (bool, error) { return x.Truth(), nil }
		if len(args) > off {
			if args[off].kind != KindStr {
				return Value{}, newErr(KindType, "TemplateRuntimeError", "No test named "+pyRepr(args[off])+".")
			}
			t, ok := tests[args[off].s]
			if !ok {
				return Value{}, newErr(KindType, "TemplateRuntimeError", "No test named '"+args[off].s+"'.")
			}
			rest := args[off+1:]
			pred = func(x Value) (bool, error) { return t(r, x, rest, kw) }
		}
		items, err := iterate(v)
		if err != nil {
			return iterValue("generator", nil, err), nil
		}
		out := []Value{}
		for _, it := range items {
			x, err := trans(it)
			if err != nil {
				return iterValue("generator", out, err), nil
			}
			ok, err := pred(x)
			if err != nil {
				return iterValue("generator", out, err), nil
			}
			if ok == keep {
				out = append(out, it)
			}
		}
		return iterValue("generator", out, nil), nil
	}
}

func fReplace(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("do_replace", args, kw, []string{"old", "new", "count"}, 2, noneValue)
	if err != nil {
		return Value{}, err
	}
	count := int64(-1)
	if a[2].kind != KindNone {
		if !a[2].isIntLike() {
			return Value{}, typeErr("'%s' object cannot be interpreted as an integer", a[2].typeName())
		}
		count = a[2].n
	}
	src, old, new := pyStr(v), pyStr(a[0]), pyStr(a[1])
	if err := r.checkReplaceSize(src, old, new); err != nil {
		return Value{}, err
	}
	return Str(strings.Replace(src, old, new, int(count))), nil
}

func fReverse(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	if v.kind == KindStr {
		runes := []rune(v.s)
		for i, j := 0, len(runes)-1; i < j; i, j = i+1, j-1 {
			runes[i], runes[j] = runes[j], runes[i]
		}
		return Str(string(runes)), nil
	}
	items, err := iterate(v)
	if err != nil {
		return Value{}, newErr(KindType, "FilterArgumentError", "argument must be iterable")
	}
	out := make([]Value, len(items))
	for i, it := range items {
		out[len(items)-1-i] = it
	}
	switch v.kind {
	case KindUndefinedValue:
		// reversed() works on Undefined through __len__ and __getitem__.
		return iterValue("reversed", nil, nil), nil
	case KindList:
		return iterValue("list_reverseiterator", out, nil), nil
	case KindTuple:
		return iterValue("reversed", out, nil), nil
	case KindDict:
		return iterValue("dict_reversekeyiterator", out, nil), nil
	}
	// reversed() failed: Jinja falls back to a reversed list.
	return List(out), nil
}

func fRound(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("do_round", args, kw, []string{"precision", "method"}, 0, Int(0), Str("common"))
	if err != nil {
		return Value{}, err
	}
	method := pyStr(a[1])
	if method != "common" && method != "ceil" && method != "floor" {
		return Value{}, newErr(KindType, "FilterArgumentError", "method must be common, ceil or floor")
	}
	if !a[0].isIntLike() {
		return Value{}, typeErr("'%s' object cannot be interpreted as an integer", a[0].typeName())
	}
	prec := int(a[0].n)
	if !v.isNumber() {
		if method == "common" {
			return Value{}, typeErr("type %s doesn't define __round__ method", v.typeName())
		}
		return Value{}, unsupported("*", v, Int(1))
	}
	if method == "common" {
		if v.kind != KindFloat {
			if prec >= 0 {
				return Int(v.n), nil
			}
			p := math.Pow(10, float64(-prec))
			return Int(int64(math.RoundToEven(float64(v.n)/p) * p)), nil
		}
		if prec < 0 || prec > 300 || math.IsInf(v.fl(), 0) || math.IsNaN(v.fl()) {
			p := math.Pow(10, float64(prec))
			return Float(math.RoundToEven(v.fl()*p) / p), nil
		}
		f, _ := strconv.ParseFloat(strconv.FormatFloat(v.fl(), 'f', prec, 64), 64)
		return Float(f), nil
	}
	p := math.Pow(10, float64(prec))
	x := v.toFloat() * p
	if method == "ceil" {
		x = math.Ceil(x)
	} else {
		x = math.Floor(x)
	}
	return Float(x / p), nil
}

func fSort(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("do_sort", args, kw, []string{"reverse", "case_sensitive", "attribute"}, 0, falseValue, falseValue, noneValue)
	if err != nil {
		return Value{}, err
	}
	items, err := iterate(v)
	if err != nil {
		return Value{}, err
	}
	get := r.attrGetter(a[2], nil)
	out, err := sortValues(items, func(it Value) (Value, error) {
		k, err := get(it)
		if err != nil {
			return Value{}, err
		}
		if !a[1].Truth() {
			k = ignoreCase(k)
		}
		return k, nil
	}, a[0].Truth())
	if err != nil {
		return Value{}, err
	}
	return List(out), nil
}

func fString(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	return softStr(v), nil
}

func fSum(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("sync_do_sum", args, kw, []string{"attribute", "start"}, 0, noneValue, Int(0))
	if err != nil {
		return Value{}, err
	}
	items, err := iterate(v)
	if err != nil {
		return Value{}, err
	}
	get := r.attrGetter(a[0], nil)
	total := a[1]
	for _, it := range items {
		x, err := get(it)
		if err != nil {
			return Value{}, err
		}
		if total, err = r.binaryOp("+", total, x); err != nil {
			return Value{}, err
		}
	}
	return total, nil
}

var wordBeginningSplit = regexp.MustCompile(`[-\s({\[<]+`)

func fTitle(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	s := softStr(v).s
	var b strings.Builder
	emit := func(item string) {
		if item == "" {
			return
		}
		c, size := utf8.DecodeRuneInString(item)
		b.WriteString(pyUpper(string(c)))
		b.WriteString(pyLower(item[size:]))
	}
	last := 0
	for _, m := range wordBeginningSplit.FindAllStringIndex(s, -1) {
		emit(s[last:m[0]])
		emit(s[m[0]:m[1]])
		last = m[1]
	}
	emit(s[last:])
	return Str(b.String()), nil
}

// fToJSON is transformers' tojson: json.dumps(x, ensure_ascii=False,
// indent=None, separators=None, sort_keys=False), in that argument order.
func fToJSON(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	if len(args) == 0 && len(kw) == 0 {
		return toJSONDefault(r, v)
	}
	a, err := bind("tojson", args, kw, []string{"ensure_ascii", "indent", "separators", "sort_keys"}, 0, falseValue, noneValue, noneValue, falseValue)
	if err != nil {
		return Value{}, err
	}
	o := jsonOpts{ensureASCII: a[0].Truth(), itemSep: ", ", keySep: ": ", sortKeys: a[3].Truth(), maxLen: r.limits.MaxOutputBytes}
	switch a[1].kind {
	case KindNone:
	case KindStr:
		s := a[1].s
		o.indent = &s
	case KindInt, KindBool:
		s := strings.Repeat(" ", int(max(min(a[1].n, 1<<16), 0)))
		o.indent = &s
	default:
		return Value{}, typeErr("can't multiply sequence by non-int of type '%s'", a[1].typeName())
	}
	if o.indent != nil {
		o.itemSep = ","
	}
	if a[2].kind != KindNone {
		seps, err := iterate(a[2])
		if err != nil || len(seps) != 2 {
			return Value{}, valueErr("not enough values to unpack (expected 2, got %d)", len(seps))
		}
		if seps[0].kind != KindStr || seps[1].kind != KindStr {
			return Value{}, typeErr("separators must be strings")
		}
		o.itemSep, o.keySep = seps[0].s, seps[1].s
	}
	return toJSONValue(r, v, o)
}

// defaultJSONOpts are tojson's options when called without arguments.
func defaultJSONOpts(r *renderer) jsonOpts {
	return jsonOpts{itemSep: ", ", keySep: ": ", maxLen: r.limits.MaxOutputBytes}
}

// toJSONDefault is v|tojson with no arguments, the common call, which
// binds no arguments.
func toJSONDefault(r *renderer, v Value) (Value, error) {
	return toJSONValue(r, v, defaultJSONOpts(r))
}

func toJSONValue(r *renderer, v Value, o jsonOpts) (Value, error) {
	s, err := pyJSONDumps(v, o)
	if err != nil {
		return Value{}, err
	}
	if err := r.checkSize(len(s)); err != nil {
		return Value{}, err
	}
	return Str(s), nil
}

// writeToJSON is {{ v|tojson }}: the JSON goes straight into the output,
// with the same limits (and errors) as toJSONDefault then write.
func writeToJSON(r *renderer, v Value) error {
	start := r.out.Len()
	o := defaultJSONOpts(r)
	o.base = start
	if err := writeJSON(r.out, v, o, 0); err != nil {
		return err
	}
	n := r.out.Len() - start
	if err := r.checkSize(n); err != nil {
		return err
	}
	r.written += n
	if r.written > r.limits.MaxOutputBytes {
		return limitErr("output exceeds %d bytes", r.limits.MaxOutputBytes)
	}
	return nil
}

func fTrim(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("do_trim", args, kw, []string{"chars"}, 0, noneValue)
	if err != nil {
		return Value{}, err
	}
	f, err := stripFuncs(a[0])
	if err != nil {
		return Value{}, err
	}
	return Str(strings.TrimFunc(softStr(v).s, f)), nil
}

func fTruncate(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("do_truncate", args, kw, []string{"length", "killwords", "end", "leeway"}, 0, Int(255), falseValue, Str("..."), noneValue)
	if err != nil {
		return Value{}, err
	}
	length := int(a[0].n)
	end := pyStr(a[2])
	leeway := 5
	if a[3].kind != KindNone {
		leeway = int(a[3].n)
	}
	endLen := utf8.RuneCountInString(end)
	if length < endLen {
		return Value{}, newErr(KindType, "AssertionError", "expected length >= "+strconv.Itoa(endLen)+", got "+strconv.Itoa(length))
	}
	n, err := pyLen(v)
	if err != nil {
		return Value{}, err
	}
	if n <= length+leeway {
		return v, nil
	}
	if v.kind != KindStr {
		return Value{}, typeErr("can only concatenate %s (not \"str\") to %s", v.typeName(), v.typeName())
	}
	runes := []rune(v.s)
	head := string(runes[:length-endLen])
	if a[1].Truth() {
		return Str(head + end), nil
	}
	if i := strings.LastIndex(head, " "); i >= 0 {
		head = head[:i]
	}
	return Str(head + end), nil
}

func fUnique(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("do_unique", args, kw, []string{"case_sensitive", "attribute"}, 0, falseValue, noneValue)
	if err != nil {
		return Value{}, err
	}
	items, err := iterate(v)
	if err != nil {
		return iterValue("generator", nil, err), nil
	}
	get := r.attrGetter(a[1], nil)
	seen := NewDict(len(items))
	out := []Value{}
	for _, it := range items {
		k, err := get(it)
		if err != nil {
			return iterValue("generator", out, err), nil
		}
		if !a[0].Truth() {
			k = ignoreCase(k)
		}
		if _, ok := seen.Get(k); ok {
			continue
		}
		if err := seen.Set(k, noneValue); err != nil {
			return iterValue("generator", out, err), nil
		}
		out = append(out, it)
	}
	return iterValue("generator", out, nil), nil
}

var wordRe = regexp.MustCompile(`[\p{L}\p{N}_]+`)

func fWordcount(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	return Int(int64(len(wordRe.FindAllStringIndex(softStr(v).s, -1)))), nil
}

var tagRe = regexp.MustCompile(`(?s)<!--.*?-->|<[^>]*>`)

func fStriptags(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	s := tagRe.ReplaceAllString(pyStr(v), "")
	return Str(strings.Join(strings.Fields(s), " ")), nil
}

func fFilesize(r *renderer, v Value, args []Value, kw []kwArg) (Value, error) {
	f, ok := pyFloat(v)
	if !ok {
		return Value{}, valueErr("could not convert string to float")
	}
	if f < 1000 {
		if f == 1 {
			return Str("1 Byte"), nil
		}
		return Str(strconv.Itoa(int(f)) + " Bytes"), nil
	}
	units := []string{"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"}
	for i, u := range units {
		unit := math.Pow(1000, float64(i+2))
		if f < unit || i == len(units)-1 {
			return Str(strconv.FormatFloat(1000*f/unit, 'f', 1, 64) + " " + u), nil
		}
	}
	return Str(""), nil
}
