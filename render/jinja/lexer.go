package jinja

import (
	"github.com/vrender/vrender/internal/pyfmt"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokType uint8

const (
	tEOF tokType = iota
	tData
	tVarBegin
	tVarEnd
	tBlockBegin
	tBlockEnd
	tName
	tString
	tInt
	tFloat
	tOp
)

type token struct {
	typ  tokType
	val  string // data text, name, operator, unescaped string
	num  Value  // int or float literal
	line int
}

func (t token) is(typ tokType, val string) bool { return t.typ == typ && t.val == val }

// describe is Jinja's describe_token, used in syntax error messages.
func (t token) describe() string {
	switch t.typ {
	case tEOF:
		return "end of template"
	case tName, tOp:
		return t.val
	case tVarEnd:
		return "end of print statement"
	case tBlockEnd:
		return "end of statement block"
	case tString:
		return "string"
	case tInt:
		return "integer"
	case tFloat:
		return "float"
	case tData:
		return "template data / text"
	case tVarBegin:
		return "begin of print statement"
	case tBlockBegin:
		return "begin of statement block"
	}
	return "token"
}

// lexer turns template source into tokens with the rules of Jinja2's lexer
// under trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False.
type lexer struct {
	src          string
	pos          int
	line         int
	toks         []token
	lineStarting bool
}

// pyIsSpace is Python's str.isspace for one character (what the regex \s
// and str.strip() use).
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

func normalizeSource(src string) string {
	if strings.IndexByte(src, '\r') >= 0 {
		src = strings.ReplaceAll(src, "\r\n", "\n")
		src = strings.ReplaceAll(src, "\r", "\n")
	}
	// keep_trailing_newline=False drops exactly one trailing newline.
	return strings.TrimSuffix(src, "\n")
}

func lex(src string) ([]token, error) {
	l := &lexer{src: normalizeSource(src), line: 1, lineStarting: true}
	if err := l.run(); err != nil {
		return nil, err
	}
	l.toks = append(l.toks, token{typ: tEOF, line: l.line})
	return l.toks, nil
}

func (l *lexer) emit(t token) {
	t.line = l.line
	l.toks = append(l.toks, t)
}

// nextTag finds the next "{{", "{%" or "{#" at or after from.
func (l *lexer) nextTag(from int) int {
	for i := from; ; {
		j := strings.IndexByte(l.src[i:], '{')
		if j < 0 {
			return -1
		}
		i += j
		if i+1 < len(l.src) {
			switch l.src[i+1] {
			case '{', '%', '#':
				return i
			}
		}
		i++
	}
}

func isSpaceOnly(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !pyIsSpace(r) {
			return false
		}
	}
	return true
}

// stripBefore applies whitespace control to the text before a tag: "-"
// strips all trailing whitespace, lstrip_blocks strips the spaces that open
// the tag's line for block, comment and raw tags unless "+" is given.
func (l *lexer) stripBefore(text string, sign byte, isVar bool) string {
	if sign == '-' {
		return strings.TrimRightFunc(text, pyIsSpace)
	}
	if sign != '+' && !isVar {
		lpos := strings.LastIndexByte(text, '\n') + 1
		if lpos > 0 || l.lineStarting {
			if isSpaceOnly(text[lpos:]) {
				return text[:lpos]
			}
		}
	}
	return text
}

func (l *lexer) emitData(text string) {
	if text != "" {
		l.emit(token{typ: tData, val: text})
	}
}

func (l *lexer) advance(to int) {
	l.line += strings.Count(l.src[l.pos:to], "\n")
	l.pos = to
}

// matchRawBegin matches {%[-+]?\s*raw\s*(-%}\s*|%}) at i and returns its end.
func (l *lexer) matchRawBegin(i int) (int, bool) {
	s := l.src
	p := i + 2
	if p < len(s) && (s[p] == '-' || s[p] == '+') {
		p++
	}
	p = skipSpace(s, p)
	if !strings.HasPrefix(s[p:], "raw") {
		return 0, false
	}
	p = skipSpace(s, p+3)
	if strings.HasPrefix(s[p:], "-%}") {
		return skipSpace(s, p+3), true
	}
	if strings.HasPrefix(s[p:], "%}") {
		return p + 2, true
	}
	return 0, false
}

func skipSpace(s string, p int) int {
	for p < len(s) {
		r, size := utf8.DecodeRuneInString(s[p:])
		if !pyIsSpace(r) {
			break
		}
		p += size
	}
	return p
}

func (l *lexer) run() error {
	for l.pos < len(l.src) {
		i := l.nextTag(l.pos)
		if i < 0 {
			l.emitData(l.src[l.pos:])
			l.advance(len(l.src))
			return nil
		}
		var sign byte
		if i+2 < len(l.src) && (l.src[i+2] == '-' || l.src[i+2] == '+') {
			sign = l.src[i+2]
		}
		kind := l.src[i+1]
		text := l.stripBefore(l.src[l.pos:i], sign, kind == '{')
		l.emitData(text)
		l.advance(i)
		if kind == '%' {
			if end, ok := l.matchRawBegin(i); ok {
				l.lineStarting = l.src[end-1] == '\n'
				l.advance(end)
				if err := l.lexRaw(); err != nil {
					return err
				}
				continue
			}
		}
		begin := i + 2
		if sign != 0 {
			begin++
		}
		l.lineStarting = false
		var err error
		switch kind {
		case '#':
			l.advance(begin)
			err = l.lexComment()
		case '%':
			l.emit(token{typ: tBlockBegin})
			l.advance(begin)
			err = l.lexTag(true)
		default:
			l.emit(token{typ: tVarBegin})
			l.advance(begin)
			err = l.lexTag(false)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// endTag matches a tag end at p: "+%}", "-%}\s*" or "%}\n?" for blocks and
// comments (close is "%}" or "#}"), "-}}\s*" or "}}" for variables.
func (l *lexer) endTag(p int, close string, trim bool) (int, bool) {
	s := l.src
	if trim && strings.HasPrefix(s[p:], "+"+close) {
		return p + 3, true
	}
	if strings.HasPrefix(s[p:], "-"+close) {
		return skipSpace(s, p+3), true
	}
	if strings.HasPrefix(s[p:], close) {
		e := p + 2
		if trim && e < len(s) && s[e] == '\n' {
			e++
		}
		return e, true
	}
	return 0, false
}

func (l *lexer) lexComment() error {
	for p := l.pos; p < len(l.src); p++ {
		if e, ok := l.endTag(p, "#}", true); ok {
			l.lineStarting = l.src[e-1] == '\n'
			l.advance(e)
			return nil
		}
	}
	return syntaxErr(l.line, "Missing end of comment tag")
}

func (l *lexer) lexRaw() error {
	s := l.src
	for p := l.pos; p < len(s); p++ {
		if !strings.HasPrefix(s[p:], "{%") {
			continue
		}
		q := p + 2
		var sign byte
		if q < len(s) && (s[q] == '-' || s[q] == '+') {
			sign = s[q]
			q++
		}
		q = skipSpace(s, q)
		if !strings.HasPrefix(s[q:], "endraw") {
			continue
		}
		q = skipSpace(s, q+6)
		e, ok := l.endTag(q, "%}", true)
		if !ok {
			continue
		}
		l.emitData(l.stripBefore(s[l.pos:p], sign, false))
		l.lineStarting = s[e-1] == '\n'
		l.advance(e)
		return nil
	}
	return syntaxErr(l.line, "Missing end of raw directive")
}

var operators3 = []string{"//", "**", "==", "!=", ">=", "<="}

const operators1 = "+-/*%~[](){}><=.:|,;"

func (l *lexer) lexTag(block bool) error {
	s := l.src
	var balance []byte
	closeTok, endTyp := "}}", tVarEnd
	if block {
		closeTok, endTyp = "%}", tBlockEnd
	}
	for l.pos < len(s) {
		p := l.pos
		if len(balance) == 0 {
			if e, ok := l.endTag(p, closeTok, block); ok {
				l.emit(token{typ: endTyp})
				l.lineStarting = s[e-1] == '\n'
				l.advance(e)
				return nil
			}
		}
		r, size := utf8.DecodeRuneInString(s[p:])
		switch {
		case pyIsSpace(r):
			l.advance(skipSpace(s, p))
			continue
		case r >= '0' && r <= '9':
			if e, v, ok := matchFloat(s, p); ok {
				l.emit(token{typ: tFloat, num: v, val: s[p:e]})
				l.advance(e)
				continue
			}
			e, v, err := matchInt(s, p)
			if te, ok := err.(*TemplateError); ok && te.PyType == "ValueError" {
				return te // int() itself raised, outside Jinja's syntax errors
			}
			if err != nil {
				return syntaxErr(l.line, "%s", err.Error())
			}
			l.emit(token{typ: tInt, num: v, val: s[p:e]})
			l.advance(e)
			continue
		case r == '_' || unicode.IsLetter(r):
			e := p + size
			for e < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[e:])
				if r2 != '_' && !unicode.IsLetter(r2) && !unicode.IsDigit(r2) && !unicode.Is(unicode.Mn, r2) && !unicode.Is(unicode.Mc, r2) && !unicode.Is(unicode.Pc, r2) {
					break
				}
				e += sz
			}
			l.emit(token{typ: tName, val: s[p:e]})
			l.advance(e)
			continue
		case r == '\'' || r == '"':
			e, ok := matchString(s, p)
			if !ok {
				break
			}
			val, err := unescapePython(s[p+1 : e-1])
			if err != nil {
				return syntaxErr(l.line, "%s", err.Error())
			}
			l.emit(token{typ: tString, val: val})
			l.advance(e)
			continue
		}
		op := ""
		for _, o := range operators3 {
			if strings.HasPrefix(s[p:], o) {
				op = o
				break
			}
		}
		if op == "" && strings.IndexByte(operators1, s[p]) >= 0 {
			op = s[p : p+1]
		}
		if op == "" {
			return syntaxErr(l.line, "unexpected char %s at %d", pyRepr(Str(string(r))), utf8.RuneCountInString(s[:p]))
		}
		switch op {
		case "(":
			balance = append(balance, ')')
		case "[":
			balance = append(balance, ']')
		case "{":
			balance = append(balance, '}')
		case ")", "]", "}":
			if len(balance) == 0 {
				return syntaxErr(l.line, "unexpected '%s'", op)
			}
			want := balance[len(balance)-1]
			balance = balance[:len(balance)-1]
			if want != op[0] {
				return syntaxErr(l.line, "unexpected '%s', expected '%c'", op, want)
			}
		}
		l.emit(token{typ: tOp, val: op})
		l.advance(p + len(op))
	}
	return nil
}

// digitRun matches (\d+_)*\d+ at p.
func digitRun(s string, p int) int {
	e := p
	for {
		q := e
		for q < len(s) && s[q] >= '0' && s[q] <= '9' {
			q++
		}
		if q == e {
			return e
		}
		e = q
		if e+1 < len(s) && s[e] == '_' && s[e+1] >= '0' && s[e+1] <= '9' {
			e++
			continue
		}
		return e
	}
}

func matchFloat(s string, p int) (int, Value, bool) {
	if p > 0 && s[p-1] == '.' {
		return 0, Value{}, false
	}
	e := digitRun(s, p)
	if e == p {
		return 0, Value{}, false
	}
	frac := -1
	if e+1 < len(s) && s[e] == '.' && s[e+1] >= '0' && s[e+1] <= '9' {
		frac = digitRun(s, e+1)
	}
	expEnd := -1
	q := e
	if frac > 0 {
		q = frac
	}
	if q < len(s) && (s[q] == 'e' || s[q] == 'E') {
		r := q + 1
		if r < len(s) && (s[r] == '+' || s[r] == '-') {
			r++
		}
		if d := digitRun(s, r); d > r {
			expEnd = d
		}
	}
	end := expEnd
	if end < 0 {
		end = frac
	}
	if end < 0 {
		return 0, Value{}, false
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s[p:end], "_", ""), 64)
	if err != nil {
		// Out-of-range literals are inf in Python too.
		return end, Float(f), true
	}
	return end, Float(f), true
}

func matchInt(s string, p int) (int, Value, error) {
	base := 10
	e := p
	if s[p] == '0' && p+1 < len(s) {
		switch s[p+1] | 0x20 {
		case 'b':
			base = 2
		case 'o':
			base = 8
		case 'x':
			base = 16
		}
	}
	if base != 10 {
		q := p + 2
		for {
			r := q
			if r < len(s) && s[r] == '_' {
				r++
			}
			if r < len(s) && isDigitIn(s[r], base) {
				q = r + 1
				continue
			}
			break
		}
		if q == p+2 {
			// Only "0" matches; the letter starts a name.
			base = 10
		} else {
			e = q
		}
	}
	if base == 10 {
		if s[p] == '0' {
			e = p + 1
			for {
				r := e
				if r < len(s) && s[r] == '_' {
					r++
				}
				if r < len(s) && s[r] == '0' {
					e = r + 1
					continue
				}
				break
			}
		} else {
			e = digitRun(s, p)
		}
	}
	digits := strings.ReplaceAll(s[p:e], "_", "")
	if base != 10 {
		digits = digits[2:]
	} else if len(digits) > pyfmt.MaxIntDigits {
		// Jinja2 lexes an integer with int(text, 0), which on Python 3.11+
		// refuses more than int_max_str_digits decimal digits (leading zeros
		// count; bases 2, 8 and 16 have no limit). Converting such a
		// literal would also cost quadratic time.
		return 0, Value{}, valueErr("%s", pyfmt.IntDigitsMessage(len(digits)))
	}
	b, ok := new(big.Int).SetString(digits, base)
	if !ok {
		return 0, Value{}, syntaxErr(0, "invalid integer literal")
	}
	return e, bigValue(b), nil
}

func isDigitIn(c byte, base int) bool {
	switch base {
	case 2:
		return c == '0' || c == '1'
	case 8:
		return c >= '0' && c <= '7'
	}
	return (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'f')
}

// matchString matches a quoted literal at p (backslash escapes any char).
func matchString(s string, p int) (int, bool) {
	q := s[p]
	for i := p + 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			return i + 1, true
		}
	}
	return 0, false
}

// unescapePython decodes a string literal body as Jinja does with Python's
// unicode-escape codec (after backslashreplace of non-ASCII characters).
func unescapePython(body string) (string, error) {
	if strings.IndexByte(body, '\\') < 0 {
		return body, nil
	}
	var b strings.Builder
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(body) {
			return "", errStr(`\ at end of string`)
		}
		c = body[i+1]
		i += 2
		switch c {
		case '\n':
		case '\\':
			b.WriteByte('\\')
		case '\'':
			b.WriteByte('\'')
		case '"':
			b.WriteByte('"')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(c - '0')
			for k := 0; k < 2 && i < len(body) && body[i] >= '0' && body[i] <= '7'; k++ {
				v = v*8 + int(body[i]-'0')
				i++
			}
			b.WriteRune(rune(v))
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			if i+n > len(body) {
				return "", errStr(`truncated \` + string(c) + strings.Repeat("X", n) + ` escape`)
			}
			v, err := strconv.ParseUint(body[i:i+n], 16, 32)
			if err != nil {
				return "", errStr(`truncated \` + string(c) + strings.Repeat("X", n) + ` escape`)
			}
			if v > unicode.MaxRune {
				return "", errStr(`illegal Unicode character`)
			}
			b.WriteRune(rune(v))
			i += n
		case 'N':
			return "", errStr(`malformed \N character escape`)
		default:
			b.WriteByte('\\')
			if c >= utf8.RuneSelf {
				r, size := utf8.DecodeRuneInString(body[i-1:])
				i += size - 1
				switch {
				case r < 0x100:
					b.WriteString(`\x`)
					writeHex(&b, uint32(r), 2)
				case r < 0x10000:
					b.WriteString(`\u`)
					writeHex(&b, uint32(r), 4)
				default:
					b.WriteString(`\U`)
					writeHex(&b, uint32(r), 8)
				}
			} else {
				b.WriteByte(c)
			}
		}
	}
	return b.String(), nil
}

type errStr string

func (e errStr) Error() string { return string(e) }
