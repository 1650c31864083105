package jinja

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// percentFormat is Python's str % args (printf-style formatting).
func percentFormat(fmtV, argV Value) (string, error) {
	f := fmtV.s
	a := newPercentArgs(argV)
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(f) {
			return "", valueErr("incomplete format")
		}
		var arg Value
		haveArg := false
		if f[i] == '(' {
			v, j, err := a.key(f, i)
			if err != nil {
				return "", err
			}
			arg, haveArg, i = v, true, j
		}
		spec, j, err := percentSpec(f, i, a)
		if err != nil {
			return "", err
		}
		i = j
		conv := f[i]
		if conv == '%' {
			b.WriteByte('%')
			continue
		}
		if !haveArg {
			if arg, err = a.take(); err != nil {
				return "", err
			}
		}
		text, err := percentConvert(arg, spec, conv, i)
		if err != nil {
			return "", err
		}
		b.WriteString(text)
	}
	// Python skips this check when the argument supports item access (a
	// list or dict), not only for mappings.
	if a.next < len(a.args) && !a.usedMapping && a.mapping == nil && argV.kind != KindList {
		return "", typeErr("not all arguments converted during string formatting")
	}
	return b.String(), nil
}

// percentArgs is the right operand of str % args: the values the
// conversions take in turn, or the mapping %(key)s names.
type percentArgs struct {
	args        []Value
	next        int
	mapping     *Dict
	usedMapping bool
}

func newPercentArgs(argV Value) *percentArgs {
	switch argV.kind {
	case KindTuple:
		return &percentArgs{args: argV.items()}
	case KindDict:
		return &percentArgs{args: []Value{argV}, mapping: argV.dict()}
	default:
		return &percentArgs{args: []Value{argV}}
	}
}

// take is the next positional value.
func (a *percentArgs) take() (Value, error) {
	if a.next >= len(a.args) {
		return Value{}, typeErr("not enough arguments for format string")
	}
	a.next++
	return a.args[a.next-1], nil
}

// key reads the "(key)" at f[i] and returns the mapping's value and the
// index after the ')'.
func (a *percentArgs) key(f string, i int) (Value, int, error) {
	depth, j := 1, i+1
	for ; j < len(f) && depth > 0; j++ {
		if f[j] == '(' {
			depth++
		} else if f[j] == ')' {
			depth--
		}
	}
	if depth > 0 {
		return Value{}, 0, valueErr("incomplete format key")
	}
	key := f[i+1 : j-1]
	if a.mapping == nil {
		return Value{}, 0, typeErr("format requires a mapping")
	}
	v, ok := a.mapping.GetStr(key)
	if !ok {
		return Value{}, 0, newErr(KindType, "KeyError", pyRepr(Str(key)))
	}
	a.usedMapping = true
	return v, j, nil
}

// percentSpec reads a conversion's flags, width, precision and length
// modifier from f[i:] (a '*' takes its value from a) and returns the
// index of the conversion character.
func percentSpec(f string, i int, a *percentArgs) (fmtSpec, int, error) {
	spec := fmtSpec{}
	for ; i < len(f) && strings.IndexByte("-+ #0", f[i]) >= 0; i++ {
		switch f[i] {
		case '-':
			spec.align = '<'
		case '+':
			spec.sign = '+'
		case ' ':
			if spec.sign != '+' {
				spec.sign = ' '
			}
		case '#':
			spec.alt = true
		case '0':
			spec.zero = true
		}
	}
	if i < len(f) && f[i] == '*' {
		w, err := a.take()
		if err != nil {
			return spec, 0, err
		}
		if !w.isIntLike() {
			return spec, 0, typeErr("* wants int")
		}
		spec.width = int(w.n)
		if spec.width < 0 {
			spec.align, spec.width = '<', -spec.width
		}
		i++
	} else {
		for ; i < len(f) && f[i] >= '0' && f[i] <= '9'; i++ {
			spec.width = min(spec.width*10+int(f[i]-'0'), maxFieldWidth+1)
		}
	}
	spec.prec = -1
	if i < len(f) && f[i] == '.' {
		i++
		spec.prec = 0
		if i < len(f) && f[i] == '*' {
			p, err := a.take()
			if err != nil {
				return spec, 0, err
			}
			spec.prec = int(p.n)
			i++
		} else {
			for ; i < len(f) && f[i] >= '0' && f[i] <= '9'; i++ {
				spec.prec = min(spec.prec*10+int(f[i]-'0'), maxFieldWidth+1)
			}
		}
	}
	for i < len(f) && (f[i] == 'h' || f[i] == 'l' || f[i] == 'L') {
		i++
	}
	if i >= len(f) {
		return spec, 0, valueErr("incomplete format")
	}
	if err := checkWidth(spec); err != nil {
		return spec, 0, err
	}
	return spec, i, nil
}

// percentConvert is the text one conversion writes for arg; i is its index
// in the format, for the error.
func percentConvert(arg Value, spec fmtSpec, conv byte, i int) (string, error) {
	var body string
	switch conv {
	case 's':
		body = pyStr(arg)
		if spec.prec >= 0 {
			body = truncRunes(body, spec.prec)
		}
	case 'r', 'a':
		body = pyRepr(arg)
		if spec.prec >= 0 {
			body = truncRunes(body, spec.prec)
		}
	case 'd', 'i', 'u':
		if !arg.isNumber() {
			return "", typeErr("%%%c format: a real number is required, not %s", conv, arg.typeName())
		}
		iv := arg
		if arg.kind == KindFloat {
			if math.IsInf(arg.fl(), 0) || math.IsNaN(arg.fl()) {
				return "", newErr(KindType, "OverflowError", "cannot convert float infinity to integer")
			}
			iv = Int(int64(arg.fl()))
		}
		return formatIntSpec(iv, spec, 'd'), nil
	case 'x', 'X', 'o':
		if !arg.isIntLike() {
			return "", typeErr("%%%c format: an integer is required, not %s", conv, arg.typeName())
		}
		return formatIntSpec(arg, spec, conv), nil
	case 'f', 'F', 'e', 'E', 'g', 'G':
		if !arg.isNumber() {
			return "", typeErr("must be real number, not %s", arg.typeName())
		}
		if spec.prec < 0 {
			spec.prec = 6
		}
		return formatFloatSpec(arg.toFloat(), spec, conv), nil
	case 'c':
		switch {
		case arg.kind == KindStr && utf8.RuneCountInString(arg.s) == 1:
			body = arg.s
		case arg.isIntLike():
			body = string(rune(arg.n))
		default:
			return "", typeErr("%%c requires int or char")
		}
	default:
		return "", valueErr("unsupported format character '%c' (0x%x) at index %d", conv, conv, i)
	}
	return pad(body, spec), nil
}

func truncRunes(s string, n int) string {
	i := 0
	for p := range s {
		if i == n {
			return s[:p]
		}
		i++
	}
	return s
}

// maxFieldWidth bounds widths and precisions in format specifications so that
// "%*d" or "{:999999999}" cannot allocate without limit.
const maxFieldWidth = 1 << 20

func checkWidth(spec fmtSpec) error {
	if spec.width > maxFieldWidth || spec.prec > maxFieldWidth || spec.width < 0 {
		return limitErr("format width or precision exceeds %d", maxFieldWidth)
	}
	return nil
}

// fmtSpec is a parsed format specification (printf flags or format()'s
// mini-language).
type fmtSpec struct {
	fill  string
	align byte // '<', '>', '^', '=' or 0
	sign  byte // '+', '-', ' ' or 0
	alt   bool
	zero  bool
	width int
	group byte // ',' or '_' or 0
	prec  int  // -1 when absent
	typ   byte
}

func pad(s string, spec fmtSpec) string {
	n := utf8.RuneCountInString(s)
	if spec.width <= n {
		return s
	}
	fill := spec.fill
	if fill == "" {
		fill = " "
	}
	total := spec.width - n
	switch spec.align {
	case '<':
		return s + strings.Repeat(fill, total)
	case '^':
		left := total / 2
		return strings.Repeat(fill, left) + s + strings.Repeat(fill, total-left)
	}
	return strings.Repeat(fill, total) + s
}

// padNumber pads a formatted number, putting zero padding after the sign.
func padNumber(sign, digits string, spec fmtSpec, defaultRight bool) string {
	if spec.zero && spec.align == 0 {
		spec.align, spec.fill = '=', "0"
	}
	if spec.align == '=' {
		n := utf8.RuneCountInString(sign + digits)
		if spec.width > n {
			fill := spec.fill
			if fill == "" {
				fill = " "
			}
			return sign + strings.Repeat(fill, spec.width-n) + digits
		}
		return sign + digits
	}
	if spec.align == 0 && defaultRight {
		spec.align = '>'
	}
	return pad(sign+digits, spec)
}

func signOf(neg bool, spec fmtSpec) string {
	switch {
	case neg:
		return "-"
	case spec.sign == '+':
		return "+"
	case spec.sign == ' ':
		return " "
	}
	return ""
}

func groupDigits(d string, sep byte) string {
	if sep == 0 || len(d) <= 3 {
		return d
	}
	var b strings.Builder
	first := len(d) % 3
	if first > 0 {
		b.WriteString(d[:first])
	}
	for i := first; i < len(d); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(sep)
		}
		b.WriteString(d[i : i+3])
	}
	return b.String()
}

func formatIntSpec(v Value, spec fmtSpec, conv byte) string {
	bi := v.bigInt()
	neg := bi.Sign() < 0
	abs := bi
	if neg {
		abs = new(big.Int).Neg(bi)
	}
	var digits, prefix string
	switch conv {
	case 'x':
		digits, prefix = abs.Text(16), "0x"
	case 'X':
		digits, prefix = strings.ToUpper(abs.Text(16)), "0X"
	case 'o':
		digits, prefix = abs.Text(8), "0o"
	case 'b':
		digits, prefix = abs.Text(2), "0b"
	default:
		digits = groupDigits(abs.String(), spec.group)
	}
	if spec.prec > len(digits) && conv != 'd' {
		digits = strings.Repeat("0", spec.prec-len(digits)) + digits
	}
	if spec.prec > len(digits) && conv == 'd' && spec.typ == 0 {
		digits = strings.Repeat("0", spec.prec-len(digits)) + digits
	}
	sign := signOf(neg, spec)
	if spec.alt && prefix != "" {
		sign += prefix
	}
	return padNumber(sign, digits, spec, true)
}

func formatFloatSpec(f float64, spec fmtSpec, conv byte) string {
	neg := math.Signbit(f) && !math.IsNaN(f)
	a := math.Abs(f)
	var digits string
	switch {
	case math.IsInf(a, 0):
		digits = "inf"
	case math.IsNaN(a):
		digits = "nan"
	default:
		switch conv {
		case 'f', 'F':
			digits = strconv.FormatFloat(a, 'f', spec.prec, 64)
		case 'e', 'E':
			digits = strconv.FormatFloat(a, 'e', spec.prec, 64)
		case '%':
			digits = strconv.FormatFloat(a*100, 'f', spec.prec, 64) + "%"
		default:
			p := spec.prec
			if p == 0 {
				p = 1
			}
			exp := 0
			if a != 0 {
				e := strconv.FormatFloat(a, 'e', p-1, 64)
				exp, _ = strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
			}
			if exp < -4 || exp >= p {
				digits = strconv.FormatFloat(a, 'e', p-1, 64)
				if !spec.alt {
					m, e, _ := strings.Cut(digits, "e")
					if strings.Contains(m, ".") {
						m = strings.TrimRight(strings.TrimRight(m, "0"), ".")
					}
					digits = m + "e" + e
				}
			} else {
				digits = strconv.FormatFloat(a, 'f', max(p-1-exp, 0), 64)
				if !spec.alt && strings.Contains(digits, ".") {
					digits = strings.TrimRight(strings.TrimRight(digits, "0"), ".")
				}
			}
		}
		if spec.group != 0 {
			intPart, frac, hasFrac := strings.Cut(digits, ".")
			if !strings.ContainsAny(intPart, "e") {
				digits = groupDigits(intPart, spec.group)
				if hasFrac {
					digits += "." + frac
				}
			}
		}
	}
	if conv == 'E' || conv == 'F' || conv == 'G' {
		digits = strings.ToUpper(digits)
	}
	return padNumber(signOf(neg, spec), digits, spec, true)
}

// parseFormatSpec parses format()'s mini-language:
// [[fill]align][sign][#][0][width][,|_][.precision][type].
func parseFormatSpec(s string) (fmtSpec, error) {
	spec := fmtSpec{prec: -1}
	rs := []rune(s)
	i := 0
	isAlign := func(r rune) bool { return r == '<' || r == '>' || r == '^' || r == '=' }
	if len(rs) >= 2 && isAlign(rs[1]) {
		spec.fill, spec.align = string(rs[0]), byte(rs[1])
		i = 2
	} else if len(rs) >= 1 && isAlign(rs[0]) {
		spec.align = byte(rs[0])
		i = 1
	}
	if i < len(rs) && (rs[i] == '+' || rs[i] == '-' || rs[i] == ' ') {
		spec.sign = byte(rs[i])
		i++
	}
	if i < len(rs) && rs[i] == '#' {
		spec.alt = true
		i++
	}
	if i < len(rs) && rs[i] == '0' {
		spec.zero = true
		i++
	}
	for i < len(rs) && rs[i] >= '0' && rs[i] <= '9' {
		spec.width = min(spec.width*10+int(rs[i]-'0'), maxFieldWidth+1)
		i++
	}
	if i < len(rs) && (rs[i] == ',' || rs[i] == '_') {
		spec.group = byte(rs[i])
		i++
	}
	if i < len(rs) && rs[i] == '.' {
		i++
		spec.prec = 0
		start := i
		for i < len(rs) && rs[i] >= '0' && rs[i] <= '9' {
			spec.prec = min(spec.prec*10+int(rs[i]-'0'), maxFieldWidth+1)
			i++
		}
		if i == start {
			return spec, valueErr("Format specifier missing precision")
		}
	}
	if i < len(rs) {
		spec.typ = byte(rs[i])
		i++
	}
	if i < len(rs) {
		return spec, valueErr("Invalid format specifier '%s'", s)
	}
	return spec, checkWidth(spec)
}

// formatValue is Python's format(v, spec).
func formatValue(v Value, specStr string) (string, error) {
	if specStr == "" {
		return pyStr(v), nil
	}
	spec, err := parseFormatSpec(specStr)
	if err != nil {
		return "", err
	}
	switch v.kind {
	case KindStr:
		if spec.typ != 0 && spec.typ != 's' {
			return "", valueErr("Unknown format code '%c' for object of type 'str'", spec.typ)
		}
		s := v.s
		if spec.prec >= 0 {
			s = truncRunes(s, spec.prec)
		}
		if spec.zero && spec.align == 0 {
			spec.align, spec.fill = '<', "0"
		}
		return pad(s, spec), nil
	case KindInt, KindBool, KindBigInt:
		switch spec.typ {
		case 0, 'd', 'n':
			if v.kind == KindBool && spec.typ == 0 && spec.prec < 0 && spec.sign == 0 && spec.width == 0 {
				return pyStr(v), nil
			}
			return formatIntSpec(v, spec, 'd'), nil
		case 'x', 'X', 'o', 'b':
			return formatIntSpec(v, spec, spec.typ), nil
		case 'c':
			return pad(string(rune(v.n)), spec), nil
		case 'e', 'E', 'f', 'F', 'g', 'G', '%':
			if spec.prec < 0 {
				spec.prec = 6
			}
			return formatFloatSpec(v.toFloat(), spec, spec.typ), nil
		}
		return "", valueErr("Unknown format code '%c' for object of type 'int'", spec.typ)
	case KindFloat:
		switch spec.typ {
		case 'e', 'E', 'f', 'F', 'g', 'G', '%':
			if spec.prec < 0 {
				spec.prec = 6
			}
			return formatFloatSpec(v.fl(), spec, spec.typ), nil
		case 0:
			if spec.prec < 0 {
				s := formatFloatRepr(math.Abs(v.fl()))
				if spec.group != 0 {
					ip, frac, _ := strings.Cut(s, ".")
					s = groupDigits(ip, spec.group) + "." + frac
				}
				return padNumber(signOf(math.Signbit(v.fl()), spec), s, spec, true), nil
			}
			return formatFloatSpec(v.fl(), spec, 'g'), nil
		}
		return "", valueErr("Unknown format code '%c' for object of type 'float'", spec.typ)
	}
	return "", typeErr("unsupported format string passed to %s.__format__", v.typeName())
}

// strFormatMethod is str.format(*args, **kwargs) as the sandbox runs it.
func strFormatMethod(r *renderer, self Value, args []Value, kw []kwArg) (Value, error) {
	s, err := r.strFormat(self.s, args, kw)
	if err != nil {
		return Value{}, err
	}
	return Str(s), nil
}

func (r *renderer) strFormat(f string, args []Value, kw []kwArg) (string, error) {
	var b strings.Builder
	fa := formatArgs{args: args, kw: kw}
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c == '}' {
			if i+1 < len(f) && f[i+1] == '}' {
				b.WriteByte('}')
				i++
				continue
			}
			return "", valueErr("Single '}' encountered in format string")
		}
		if c != '{' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(f) && f[i+1] == '{' {
			b.WriteByte('{')
			i++
			continue
		}
		depth, j := 1, i+1
		for ; j < len(f); j++ {
			if f[j] == '{' {
				depth++
			} else if f[j] == '}' {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		if j >= len(f) {
			return "", valueErr("Single '{' encountered in format string")
		}
		field := f[i+1 : j]
		i = j
		spec := ""
		conv := byte(0)
		if k := strings.IndexByte(field, ':'); k >= 0 {
			field, spec = field[:k], field[k+1:]
		}
		if k := strings.IndexByte(field, '!'); k >= 0 {
			if k+2 != len(field) {
				return "", valueErr("expected ':' after conversion specifier")
			}
			conv = field[k+1]
			field = field[:k]
		}
		if strings.Contains(spec, "{") {
			nested, err := r.strFormat(spec, args, kw)
			if err != nil {
				return "", err
			}
			spec = nested
		}
		// Split the field name into its first part and accessors.
		end := len(field)
		if k := strings.IndexAny(field, ".["); k >= 0 {
			end = k
		}
		first, rest := field[:end], field[end:]
		v, err := fa.field(first)
		if err != nil {
			return "", err
		}
		if v, err = r.fieldAccess(v, rest); err != nil {
			return "", err
		}
		switch conv {
		case 's':
			v = Str(pyStr(v))
		case 'r', 'a':
			v = Str(pyRepr(v))
		case 0:
		default:
			return "", valueErr("Unknown conversion specifier %c", conv)
		}
		out, err := formatValue(v, spec)
		if err != nil {
			return "", err
		}
		b.WriteString(out)
		if err := r.checkSize(b.Len()); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// formatArgs are str.format's arguments: positional ones numbered
// automatically or by hand (never both), and keywords.
type formatArgs struct {
	args   []Value
	kw     []kwArg
	auto   int
	manual bool
}

// field is the argument a replacement field's first part names.
func (a *formatArgs) field(first string) (Value, error) {
	switch {
	case first == "":
		if a.manual {
			return Value{}, valueErr("cannot switch from manual field specification to automatic field numbering")
		}
		if a.auto >= len(a.args) {
			return Value{}, newErr(KindType, "IndexError", "Replacement index "+strconv.Itoa(a.auto)+" out of range for positional args tuple")
		}
		a.auto++
		return a.args[a.auto-1], nil
	case first[0] >= '0' && first[0] <= '9':
		n, err := strconv.Atoi(first)
		if err != nil {
			return Value{}, valueErr("invalid field %s", first)
		}
		a.manual = true
		if a.auto > 0 {
			return Value{}, valueErr("cannot switch from automatic field numbering to manual field specification")
		}
		if n >= len(a.args) {
			return Value{}, newErr(KindType, "IndexError", "Replacement index "+strconv.Itoa(n)+" out of range for positional args tuple")
		}
		return a.args[n], nil
	default:
		var v Value
		found := false
		for _, k := range a.kw {
			if k.name == first {
				v, found = k.val, true
			}
		}
		if !found {
			return Value{}, newErr(KindType, "KeyError", pyRepr(Str(first)))
		}
		return v, nil
	}
}

// fieldAccess applies a replacement field's accessors (.name, [key]) to v.
func (r *renderer) fieldAccess(v Value, rest string) (Value, error) {
	for rest != "" {
		var err error
		if rest[0] == '.' {
			k := strings.IndexAny(rest[1:], ".[")
			name := rest[1:]
			if k >= 0 {
				name = rest[1 : k+1]
			}
			rest = rest[1+len(name):]
			if v, err = r.getattr(v, name); err != nil {
				return Value{}, err
			}
			continue
		}
		k := strings.IndexByte(rest, ']')
		if k < 0 {
			return Value{}, valueErr("Missing ']' in format string")
		}
		key := rest[1:k]
		rest = rest[k+1:]
		var kv Value = Str(key)
		if n, err := strconv.Atoi(key); err == nil {
			kv = Int(int64(n))
		}
		if v, err = r.getitem(v, kv); err != nil {
			return Value{}, err
		}
	}
	return v, nil
}
