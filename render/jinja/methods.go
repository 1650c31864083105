package jinja

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

type methodFn func(r *renderer, self Value, args []Value, kw []kwArg) (Value, error)

// markupEscapesArgs are the str methods markupsafe wraps so that their str
// arguments are escaped; every Markup method returns Markup.
var markupEscapesArgs = map[string]bool{
	"capitalize": true, "title": true, "lower": true, "upper": true, "replace": true, "ljust": true,
	"rjust": true, "lstrip": true, "rstrip": true, "center": true, "strip": true, "swapcase": true,
	"zfill": true, "removeprefix": true, "removesuffix": true, "partition": true, "rpartition": true,
	"join": true, "format": true,
}

// callStrMethod calls a str method, with Markup's behaviour for a Markup
// receiver.
func callStrMethod(r *renderer, name string, m methodFn, self Value, args []Value, kw []kwArg) (Value, error) {
	if !self.safe {
		return m(r, self, args, kw)
	}
	if markupEscapesArgs[name] {
		esc := make([]Value, len(args))
		for i, a := range args {
			esc[i] = escapeArg(a)
		}
		args = esc
		if len(kw) > 0 {
			ekw := make([]kwArg, len(kw))
			for i, k := range kw {
				ekw[i] = kwArg{name: k.name, val: escapeArg(k.val)}
			}
			kw = ekw
		}
	}
	v, err := m(r, Str(self.s), args, kw)
	if err != nil {
		return v, err
	}
	return markSafe(v), nil
}

func escapeArg(v Value) Value {
	switch {
	case v.kind == KindStr && !v.safe:
		return markup(htmlEscape(v.s))
	case v.kind == KindList || v.kind == KindTuple:
		items := v.items()
		out := make([]Value, len(items))
		for i, it := range items {
			out[i] = escapeArg(it)
		}
		return Value{kind: v.kind, ref: &out}
	}
	return v
}

func markSafe(v Value) Value {
	switch v.kind {
	case KindStr:
		v.safe = true
	case KindList, KindTuple:
		items := v.items()
		out := make([]Value, len(items))
		for i, it := range items {
			out[i] = markSafe(it)
		}
		return Value{kind: v.kind, ref: &out}
	}
	return v
}

func methodTable(k Kind) map[string]methodFn {
	switch k {
	case KindStr:
		return strMethods
	case KindDict:
		return dictMethods
	case KindList:
		return listMethods
	case KindTuple:
		return tupleMethods
	}
	return nil
}

var dictMethodNames = map[string]bool{
	"keys": true, "values": true, "items": true, "get": true, "copy": true, "fromkeys": true,
	"clear": true, "pop": true, "popitem": true, "setdefault": true, "update": true,
}

func isDictMethodName(name string) bool { return dictMethodNames[name] || strings.HasPrefix(name, "_") }

// The methods of each kind, by name: Python's str, dict, list and tuple
// methods the templates call.
var strMethods = map[string]methodFn{
	"strip":        strStrip(true, true),
	"lstrip":       strStrip(true, false),
	"rstrip":       strStrip(false, true),
	"split":        strSplit(false),
	"rsplit":       strSplit(true),
	"splitlines":   strSplitlines,
	"startswith":   strAffix(true),
	"endswith":     strAffix(false),
	"replace":      strReplace,
	"upper":        strCase(pyUpper),
	"lower":        strCase(pyLower),
	"title":        strCase(pyTitle),
	"capitalize":   strCase(pyCapitalize),
	"swapcase":     strCase(pySwapcase),
	"casefold":     strCase(pyLower),
	"find":         strFind("find", false, false),
	"rfind":        strFind("rfind", true, false),
	"index":        strFind("index", false, true),
	"rindex":       strFind("rindex", true, true),
	"count":        strCount,
	"join":         strJoin,
	"isdigit":      strIs(func(r rune) bool { return unicode.IsDigit(r) }),
	"isdecimal":    strIs(func(r rune) bool { return unicode.Is(unicode.Nd, r) }),
	"isnumeric":    strIs(func(r rune) bool { return unicode.IsNumber(r) }),
	"isalpha":      strIs(unicode.IsLetter),
	"isalnum":      strIs(func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }),
	"isspace":      strIs(pyIsSpace),
	"isupper":      strCased(true),
	"islower":      strCased(false),
	"istitle":      strIstitle,
	"partition":    strPartition(false),
	"rpartition":   strPartition(true),
	"center":       strPad("center"),
	"ljust":        strPad("ljust"),
	"rjust":        strPad("rjust"),
	"zfill":        strZfill,
	"removeprefix": strRemove(true),
	"removesuffix": strRemove(false),
}

// str.format reaches the method tables again (a replacement field's
// attribute goes through getattr), so it joins its table at init: in the
// literal it would be an initialization cycle.
func init() { strMethods["format"] = strFormatMethod }

var dictMethods = map[string]methodFn{
	"get": func(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
		if err := noKw("get", kw); err != nil {
			return Value{}, err
		}
		if len(args) < 1 || len(args) > 2 {
			return Value{}, typeErr("get expected at most 2 arguments, got %d", len(args))
		}
		i, err := self.dict().find(args[0])
		if err != nil {
			return Value{}, err
		}
		if i >= 0 {
			return self.dict().vals[i], nil
		}
		if len(args) == 2 {
			return args[1], nil
		}
		return noneValue, nil
	},
	"items": func(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
		if len(args) > 0 || len(kw) > 0 {
			return Value{}, typeErr("dict.items() takes no arguments (%d given)", len(args)+len(kw))
		}
		return viewValue("dict_items", self.dict().itemsList()), nil
	},
	"keys": func(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
		if len(args) > 0 || len(kw) > 0 {
			return Value{}, typeErr("dict.keys() takes no arguments (%d given)", len(args)+len(kw))
		}
		return viewValue("dict_keys", append([]Value{}, self.dict().Keys()...)), nil
	},
	"values": func(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
		if len(args) > 0 || len(kw) > 0 {
			return Value{}, typeErr("dict.values() takes no arguments (%d given)", len(args)+len(kw))
		}
		return viewValue("dict_values", append([]Value{}, self.dict().Values()...)), nil
	},
	"copy": func(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
		return DictValue(self.dict().copyDict()), nil
	},
}

// seqIndex is list.index and tuple.index.
func seqIndex(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
	if len(args) < 1 {
		return Value{}, typeErr("index expected at least 1 argument, got 0")
	}
	for i, it := range self.items() {
		if pyEqual(it, args[0]) {
			return Int(int64(i)), nil
		}
	}
	if self.kind == KindTuple {
		return Value{}, valueErr("tuple.index(x): x not in tuple")
	}
	return Value{}, valueErr("%s is not in list", pyRepr(args[0]))
}

// seqCount is list.count and tuple.count.
func seqCount(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
	if len(args) != 1 {
		return Value{}, typeErr("count() takes exactly one argument (%d given)", len(args))
	}
	n := 0
	for _, it := range self.items() {
		if pyEqual(it, args[0]) {
			n++
		}
	}
	return Int(int64(n)), nil
}

var listMethods = map[string]methodFn{
	"index": seqIndex,
	"count": seqCount,
	"copy": func(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
		return List(append([]Value{}, self.items()...)), nil
	},
}

var tupleMethods = map[string]methodFn{"index": seqIndex, "count": seqCount}

func strStrip(left, right bool) methodFn {
	name := map[[2]bool]string{{true, true}: "strip", {true, false}: "lstrip", {false, true}: "rstrip"}[[2]bool{left, right}]
	return func(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
		if err := noKw(name, kw); err != nil {
			return Value{}, err
		}
		f := pyIsSpace
		if len(args) > 0 {
			// strip() with no argument, the common call, binds nothing.
			a, err := bind(name, args, nil, []string{"chars"}, 0)
			if err != nil {
				return Value{}, err
			}
			if f, err = stripFuncs(a[0]); err != nil {
				return Value{}, err
			}
		}
		s := self.s
		if left {
			s = strings.TrimLeftFunc(s, f)
		}
		if right {
			s = strings.TrimRightFunc(s, f)
		}
		return Str(s), nil
	}
}

func strSplit(fromRight bool) methodFn {
	name := "split"
	if fromRight {
		name = "rsplit"
	}
	return func(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
		a, err := bind(name, args, kw, []string{"sep", "maxsplit"}, 0, noneValue, Int(-1))
		if err != nil {
			return Value{}, err
		}
		if !a[1].isIntLike() {
			return Value{}, typeErr("'%s' object cannot be interpreted as an integer", a[1].typeName())
		}
		maxsplit := int(a[1].n)
		var parts []string
		if a[0].kind == KindNone {
			parts = splitWhitespace(self.s, maxsplit, fromRight)
		} else {
			if a[0].kind != KindStr {
				return Value{}, typeErr("must be str or None, not %s", a[0].typeName())
			}
			if a[0].s == "" {
				return Value{}, valueErr("empty separator")
			}
			switch {
			case maxsplit < 0:
				parts = strings.Split(self.s, a[0].s)
			case !fromRight:
				parts = strings.SplitN(self.s, a[0].s, maxsplit+1)
			default:
				parts = rsplitN(self.s, a[0].s, maxsplit)
			}
		}
		out := make([]Value, len(parts))
		for i, p := range parts {
			out[i] = Str(p)
		}
		return List(out), nil
	}
}

func rsplitN(s, sep string, maxsplit int) []string {
	var rev []string
	for maxsplit > 0 {
		i := strings.LastIndex(s, sep)
		if i < 0 {
			break
		}
		rev = append(rev, s[i+len(sep):])
		s = s[:i]
		maxsplit--
	}
	out := []string{s}
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i])
	}
	return out
}

// splitWhitespace is str.split() / str.rsplit() without a separator.
func splitWhitespace(s string, maxsplit int, fromRight bool) []string {
	if !fromRight {
		var out []string
		for {
			s = strings.TrimLeftFunc(s, pyIsSpace)
			if s == "" {
				return nonNil(out)
			}
			if maxsplit >= 0 && len(out) == maxsplit {
				return append(out, s)
			}
			i := strings.IndexFunc(s, pyIsSpace)
			if i < 0 {
				return append(out, s)
			}
			out = append(out, s[:i])
			s = s[i:]
		}
	}
	var rev []string
	for {
		s = strings.TrimRightFunc(s, pyIsSpace)
		if s == "" {
			break
		}
		if maxsplit >= 0 && len(rev) == maxsplit {
			rev = append(rev, s)
			break
		}
		i := strings.LastIndexFunc(s, pyIsSpace)
		if i < 0 {
			rev = append(rev, s)
			break
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		rev = append(rev, s[i+size:])
		s = s[:i]
	}
	out := make([]string, 0, len(rev))
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i])
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func strSplitlines(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("splitlines", args, kw, []string{"keepends"}, 0, falseValue)
	if err != nil {
		return Value{}, err
	}
	keep := a[0].Truth()
	var out []Value
	s := self.s
	start := 0
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		isBreak := c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0x1c || c == 0x1d || c == 0x1e || c == 0x85 || c == 0x2028 || c == 0x2029
		if !isBreak {
			i += size
			continue
		}
		end := i + size
		if c == '\r' && end < len(s) && s[end] == '\n' {
			end++
		}
		if keep {
			out = append(out, Str(s[start:end]))
		} else {
			out = append(out, Str(s[start:i]))
		}
		start, i = end, end
	}
	if start < len(s) {
		out = append(out, Str(s[start:]))
	}
	if out == nil {
		out = []Value{}
	}
	return List(out), nil
}

// runeSpan converts Python start/end code point arguments into byte offsets.
func runeSpan(s string, start, end Value) (int, int, bool) {
	n := utf8.RuneCountInString(s)
	a, b := 0, n
	if !isMissing(start) && start.kind != KindNone {
		a = clampIndex(start)
		if a < 0 {
			a = max(a+n, 0)
		}
	}
	if !isMissing(end) && end.kind != KindNone {
		b = clampIndex(end)
		if b < 0 {
			b = max(b+n, 0)
		}
	}
	b = min(b, n)
	if a > n {
		return 0, 0, false
	}
	if a > b {
		return byteOffset(s, a), byteOffset(s, a), true
	}
	return byteOffset(s, a), byteOffset(s, b), true
}

func byteOffset(s string, runeIdx int) int {
	if isASCII(s) {
		return runeIdx
	}
	n := 0
	for i := range s {
		if n == runeIdx {
			return i
		}
		n++
	}
	return len(s)
}

func strAffix(prefix bool) methodFn {
	name := "endswith"
	if prefix {
		name = "startswith"
	}
	return func(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
		if err := noKw(name, kw); err != nil {
			return Value{}, err
		}
		if len(args) == 1 && args[0].kind == KindStr {
			// One str and no span, the common call: the whole string.
			if prefix {
				return Bool(strings.HasPrefix(self.s, args[0].s)), nil
			}
			return Bool(strings.HasSuffix(self.s, args[0].s)), nil
		}
		a, err := bind(name, args, nil, []string{"prefix", "start", "end"}, 1)
		if err != nil {
			return Value{}, err
		}
		lo, hi, ok := runeSpan(self.s, a[1], a[2])
		if !ok {
			return falseValue, nil
		}
		s := self.s[lo:hi]
		var cands []Value
		switch a[0].kind {
		case KindStr:
			cands = []Value{a[0]}
		case KindTuple:
			cands = a[0].items()
		default:
			return Value{}, typeErr("%s first arg must be str or a tuple of str, not %s", name, a[0].typeName())
		}
		for _, c := range cands {
			if c.kind != KindStr {
				return Value{}, typeErr("tuple for %s must only contain str, not %s", name, c.typeName())
			}
			if (prefix && strings.HasPrefix(s, c.s)) || (!prefix && strings.HasSuffix(s, c.s)) {
				return trueValue, nil
			}
		}
		return falseValue, nil
	}
}

func strReplace(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("replace", args, kw, []string{"old", "new", "count"}, 2, Int(-1))
	if err != nil {
		return Value{}, err
	}
	if a[0].kind != KindStr || a[1].kind != KindStr {
		bad := a[0]
		if bad.kind == KindStr {
			bad = a[1]
		}
		return Value{}, typeErr("replace() argument must be str, not %s", bad.typeName())
	}
	if !a[2].isIntLike() {
		return Value{}, typeErr("'%s' object cannot be interpreted as an integer", a[2].typeName())
	}
	if err := r.checkReplaceSize(self.s, a[0].s, a[1].s); err != nil {
		return Value{}, err
	}
	return Str(strings.Replace(self.s, a[0].s, a[1].s, int(a[2].n))), nil
}

// checkReplaceSize refuses a replace whose result would exceed the output
// limit, before building it.
func (r *renderer) checkReplaceSize(s, old, new string) error {
	if len(new) <= len(old) {
		return nil
	}
	n := utf8.RuneCountInString(s) + 1
	if old != "" {
		n = strings.Count(s, old)
	}
	return r.checkSize(len(s) + n*(len(new)-len(old)))
}

func strCase(f func(string) string) methodFn {
	return func(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
		if len(args) > 0 || len(kw) > 0 {
			return Value{}, typeErr("method takes no arguments (%d given)", len(args)+len(kw))
		}
		return Str(f(self.s)), nil
	}
}

func pyUpper(s string) string {
	if isASCII(s) {
		return strings.ToUpper(s)
	}
	return strings.ReplaceAll(strings.ToUpper(s), "ß", "SS")
}

func pyLower(s string) string { return strings.ToLower(s) }

func isCased(r rune) bool { return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) }

// pyTitle is str.title: a cased character after an uncased one is
// title-cased, every other cased character lower-cased.
func pyTitle(s string) string {
	var b strings.Builder
	prevCased := false
	for _, c := range s {
		switch {
		case unicode.IsUpper(c) || unicode.IsTitle(c):
			if prevCased {
				c = unicode.ToLower(c)
			}
			prevCased = true
		case unicode.IsLower(c):
			if !prevCased {
				c = unicode.ToTitle(c)
			}
			prevCased = true
		default:
			prevCased = false
		}
		b.WriteRune(c)
	}
	return b.String()
}

func pyCapitalize(s string) string {
	if s == "" {
		return s
	}
	c, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToTitle(c)) + strings.ToLower(s[size:])
}

func pySwapcase(s string) string {
	return strings.Map(func(c rune) rune {
		if unicode.IsUpper(c) {
			return unicode.ToLower(c)
		}
		if unicode.IsLower(c) {
			return unicode.ToUpper(c)
		}
		return c
	}, s)
}

func strFind(name string, fromRight, raise bool) methodFn {
	return func(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
		if err := noKw(name, kw); err != nil {
			return Value{}, err
		}
		a, err := bind(name, args, nil, []string{"sub", "start", "end"}, 1)
		if err != nil {
			return Value{}, err
		}
		if a[0].kind != KindStr {
			return Value{}, typeErr("must be str, not %s", a[0].typeName())
		}
		lo, hi, ok := runeSpan(self.s, a[1], a[2])
		idx := -1
		if ok {
			var i int
			if fromRight {
				i = strings.LastIndex(self.s[lo:hi], a[0].s)
			} else {
				i = strings.Index(self.s[lo:hi], a[0].s)
			}
			if i >= 0 {
				idx = utf8.RuneCountInString(self.s[:lo+i])
			}
		}
		if idx < 0 && raise {
			return Value{}, valueErr("substring not found")
		}
		return Int(int64(idx)), nil
	}
}

func strCount(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
	a, err := bind("count", args, kw, []string{"sub", "start", "end"}, 1)
	if err != nil {
		return Value{}, err
	}
	if a[0].kind != KindStr {
		return Value{}, typeErr("must be str, not %s", a[0].typeName())
	}
	lo, hi, ok := runeSpan(self.s, a[1], a[2])
	if !ok {
		return Int(0), nil
	}
	sub := self.s[lo:hi]
	if a[0].s == "" {
		return Int(int64(utf8.RuneCountInString(sub) + 1)), nil
	}
	return Int(int64(strings.Count(sub, a[0].s))), nil
}

func strJoin(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
	if len(args) != 1 || len(kw) > 0 {
		return Value{}, typeErr("str.join() takes exactly one argument (%d given)", len(args)+len(kw))
	}
	items, err := iterate(args[0])
	if err != nil {
		return Value{}, typeErr("can only join an iterable")
	}
	var b strings.Builder
	for i, it := range items {
		if it.kind != KindStr {
			return Value{}, typeErr("sequence item %d: expected str instance, %s found", i, it.typeName())
		}
		if i > 0 {
			b.WriteString(self.s)
		}
		b.WriteString(it.s)
		if err := r.checkSize(b.Len()); err != nil {
			return Value{}, err
		}
	}
	return Str(b.String()), nil
}

func strIs(pred func(rune) bool) methodFn {
	return func(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
		if self.s == "" {
			return falseValue, nil
		}
		for _, c := range self.s {
			if !pred(c) {
				return falseValue, nil
			}
		}
		return trueValue, nil
	}
}

func strCased(upper bool) methodFn {
	return func(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
		cased := false
		for _, c := range self.s {
			if (upper && unicode.IsLower(c)) || (!upper && (unicode.IsUpper(c) || unicode.IsTitle(c))) {
				return falseValue, nil
			}
			if isCased(c) {
				cased = true
			}
		}
		return Bool(cased), nil
	}
}

func strIstitle(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
	return Bool(self.s != "" && pyTitle(self.s) == self.s && strings.IndexFunc(self.s, isCased) >= 0), nil
}

func strPartition(fromRight bool) methodFn {
	return func(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
		if len(args) != 1 || args[0].kind != KindStr {
			return Value{}, typeErr("partition() takes exactly one str argument")
		}
		sep := args[0].s
		if sep == "" {
			return Value{}, valueErr("empty separator")
		}
		var i int
		if fromRight {
			i = strings.LastIndex(self.s, sep)
		} else {
			i = strings.Index(self.s, sep)
		}
		if i < 0 {
			if fromRight {
				return Tuple([]Value{emptyStr, emptyStr, self}), nil
			}
			return Tuple([]Value{self, emptyStr, emptyStr}), nil
		}
		return Tuple([]Value{Str(self.s[:i]), Str(sep), Str(self.s[i+len(sep):])}), nil
	}
}

func strPad(mode string) methodFn {
	return func(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
		a, err := bind(mode, args, kw, []string{"width", "fillchar"}, 1, Str(" "))
		if err != nil {
			return Value{}, err
		}
		if !a[0].isIntLike() {
			return Value{}, typeErr("'%s' object cannot be interpreted as an integer", a[0].typeName())
		}
		if a[1].kind != KindStr || utf8.RuneCountInString(a[1].s) != 1 {
			return Value{}, typeErr("The fill character must be exactly one character long")
		}
		width := clampIndex(a[0])
		if err := r.checkSize(width); err != nil {
			return Value{}, err
		}
		return Str(padStr(self.s, width, a[1].s, mode)), nil
	}
}

func padStr(s string, width int, fill, mode string) string {
	n := utf8.RuneCountInString(s)
	if width <= n {
		return s
	}
	total := width - n
	var left int
	switch mode {
	case "ljust":
		left = 0
	case "rjust":
		left = total
	default:
		// CPython's centering puts the odd extra space on the left when the
		// width is odd... and on the right otherwise.
		left = total/2 + (total & width & 1)
	}
	return strings.Repeat(fill, left) + s + strings.Repeat(fill, total-left)
}

func strZfill(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
	if len(args) != 1 || !args[0].isIntLike() {
		return Value{}, typeErr("zfill() takes exactly one integer argument")
	}
	width := clampIndex(args[0])
	if err := r.checkSize(width); err != nil {
		return Value{}, err
	}
	s := self.s
	n := utf8.RuneCountInString(s)
	if width <= n {
		return self, nil
	}
	sign := ""
	if s != "" && (s[0] == '+' || s[0] == '-') {
		sign, s = s[:1], s[1:]
	}
	return Str(sign + strings.Repeat("0", width-n) + s), nil
}

func strRemove(prefix bool) methodFn {
	return func(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
		if len(args) != 1 || args[0].kind != KindStr {
			return Value{}, typeErr("remove affix takes exactly one str argument")
		}
		if prefix {
			return Str(strings.TrimPrefix(self.s, args[0].s)), nil
		}
		return Str(strings.TrimSuffix(self.s, args[0].s)), nil
	}
}
