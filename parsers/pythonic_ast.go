package parsers

import (
	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/internal/statecodec"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/vrender/vrender/parsers/pyjson"
)

// This file reads a Python list of calls with literal keyword arguments,
// the subset of Python that vLLM's pythonic parsers accept after
// ast.parse: `[f(a=1, b='x'), m.g(c={'k': [None, True]})]`. Anything
// outside that subset is a failure, whether Python would call it a syntax
// error or vLLM an unexpected AST node: both end in "no calls, the text is
// content". Known gaps: parenthesised values, \N{...} escapes and
// statements after the list other than comments and one ";" fail here but
// not in Python; positional arguments (ignored by vLLM) get only a light
// syntax check, so a few malformed ones pass here.

// pyTokKind is a lexical token class.
type pyTokKind uint8

const (
	ptName pyTokKind = iota + 1
	ptNumber
	ptString
	ptOp
)

// pyTok is one token: Text is the name, number or operator; a string's
// decoded value is in Text too.
type pyTok struct {
	kind        pyTokKind
	text        string
	bytes, fStr bool
}

// pyLexState is where the lexer is.
type pyLexState uint8

const (
	lxSpace     pyLexState = iota // between tokens
	lxComment                     // after '#'
	lxContinue                    // after a backslash between tokens
	lxDot                         // after '.': an operator or a number
	lxEq                          // after '=': "=" or "=="
	lxName                        // inside a name (or string prefix)
	lxNumber                      // inside a number
	lxOpen                        // after an opening quote
	lxQuote2                      // after two quotes: '' or the start of '''
	lxString                      // inside a string
	lxEscape                      // after a backslash in a string
	lxRawEscape                   // after a backslash in a raw string
	lxEscDigits                   // inside \ooo, \xhh, \uhhhh, \Uhhhhhhhh
)

// pyLexer turns Python source into tokens a byte at a time.
type pyLexer struct {
	state pyLexState
	buf   []byte
	quote byte
	// triple, Raw, Bytes and FStr describe the current string.
	triple, raw, bytes, fStr bool
	// quotes counts closing quotes seen in a row in a triple-quoted string.
	quotes int
	// escKind is 'o', 'x', 'u' or 'U' while reading escape digits.
	escKind byte
	esc     []byte
}

func isPyNameStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isPyNameByte(c byte) bool { return isPyNameStart(c) || c >= '0' && c <= '9' }

// stringPrefixes are Python's string prefixes, lower-cased.
var stringPrefixes = map[string]bool{
	"r": true, "u": true, "b": true, "f": true, "t": true,
	"br": true, "rb": true, "fr": true, "rf": true, "tr": true, "rt": true,
}

// feed lexes src, handing tokens to tok; it returns false on a lexical
// error or when tok refuses a token.
func (l *pyLexer) feed(src string, tok func(pyTok) bool) bool {
	for i := 0; i < len(src); {
		consumed, ok := l.step(src[i], tok)
		if !ok {
			return false
		}
		if consumed {
			i++
		}
	}
	return true
}

// end flushes a pending name or number; a string or escape still open is
// an error.
func (l *pyLexer) end(tok func(pyTok) bool) bool {
	switch l.state {
	case lxSpace, lxComment:
		return true
	case lxName:
		return l.emitName(tok)
	case lxNumber:
		return l.emitNumber(tok)
	case lxDot, lxEq:
		op := map[pyLexState]string{lxDot: ".", lxEq: "="}[l.state]
		l.state = lxSpace
		return tok(pyTok{kind: ptOp, text: op})
	}
	return false
}

func (l *pyLexer) emitName(tok func(pyTok) bool) bool {
	l.state = lxSpace
	return tok(pyTok{kind: ptName, text: string(l.buf)})
}

func (l *pyLexer) emitNumber(tok func(pyTok) bool) bool {
	l.state = lxSpace
	return tok(pyTok{kind: ptNumber, text: string(l.buf)})
}

func (l *pyLexer) step(c byte, tok func(pyTok) bool) (consumed, ok bool) {
	if c == 0 {
		// Python refuses source with NUL bytes.
		return false, false
	}
	switch l.state {
	case lxSpace:
		switch {
		case c == ' ' || c == '\t' || c == '\f' || c == '\n' || c == '\r':
		case c == '#':
			l.state = lxComment
		case c == '\\':
			l.state = lxContinue
		case c == '.':
			l.state = lxDot
		case c == '=':
			l.state = lxEq
		case c == '\'' || c == '"':
			l.startString(c, "")
		case c >= '0' && c <= '9':
			l.state, l.buf = lxNumber, append(l.buf[:0], c)
		case isPyNameStart(c):
			l.state, l.buf = lxName, append(l.buf[:0], c)
		default:
			return true, tok(pyTok{kind: ptOp, text: string(c)})
		}
		return true, true
	case lxComment:
		if c == '\n' || c == '\r' {
			l.state = lxSpace
		}
		return true, true
	case lxContinue:
		if c == '\r' {
			return true, true
		}
		l.state = lxSpace
		return true, c == '\n'
	case lxDot:
		if c >= '0' && c <= '9' {
			l.state, l.buf = lxNumber, append(l.buf[:0], '.')
			return false, true
		}
		l.state = lxSpace
		return false, tok(pyTok{kind: ptOp, text: "."})
	case lxEq:
		l.state = lxSpace
		if c == '=' {
			return true, tok(pyTok{kind: ptOp, text: "=="})
		}
		return false, tok(pyTok{kind: ptOp, text: "="})
	case lxName:
		if isPyNameByte(c) {
			l.buf = append(l.buf, c)
			return true, true
		}
		if (c == '\'' || c == '"') && stringPrefixes[strings.ToLower(string(l.buf))] {
			l.startString(c, strings.ToLower(string(l.buf)))
			return true, true
		}
		return false, l.emitName(tok)
	case lxNumber:
		last := l.buf[len(l.buf)-1]
		if isPyNameByte(c) || c == '.' || (c == '+' || c == '-') && (last == 'e' || last == 'E') {
			l.buf = append(l.buf, c)
			return true, true
		}
		return false, l.emitNumber(tok)
	case lxOpen:
		if c == l.quote {
			l.state = lxQuote2
			return true, true
		}
		l.state = lxString
		return false, true
	case lxQuote2:
		if c == l.quote {
			l.state, l.triple = lxString, true
			return true, true
		}
		return false, l.emitString(tok)
	case lxString:
		return l.stringByte(c, tok)
	case lxRawEscape:
		// A raw string keeps the backslash and the byte after it, which
		// never ends the string.
		l.buf = append(l.buf, '\\', c)
		l.state = lxString
		return true, true
	case lxEscape:
		return true, l.escape(c)
	case lxEscDigits:
		return l.escDigit(c)
	}
	return false, false
}

func (l *pyLexer) startString(q byte, prefix string) {
	l.state, l.quote, l.buf = lxOpen, q, l.buf[:0]
	l.triple, l.quotes = false, 0
	l.raw = strings.Contains(prefix, "r")
	l.bytes = strings.Contains(prefix, "b")
	l.fStr = strings.ContainsAny(prefix, "ft")
}

func (l *pyLexer) emitString(tok func(pyTok) bool) bool {
	l.state = lxSpace
	return tok(pyTok{kind: ptString, text: string(l.buf), bytes: l.bytes, fStr: l.fStr})
}

func (l *pyLexer) stringByte(c byte, tok func(pyTok) bool) (bool, bool) {
	if l.triple {
		if c == l.quote {
			if l.quotes++; l.quotes == 3 {
				return true, l.emitString(tok)
			}
			return true, true
		}
		for ; l.quotes > 0; l.quotes-- {
			l.buf = append(l.buf, l.quote)
		}
	} else {
		if c == l.quote {
			return true, l.emitString(tok)
		}
		if c == '\n' || c == '\r' {
			return false, false
		}
	}
	if c == '\\' {
		l.state = lxEscape
		if l.raw {
			l.state = lxRawEscape
		}
		return true, true
	}
	l.buf = append(l.buf, c)
	return true, true
}

// escape decodes the byte after a backslash in a non-raw string.
func (l *pyLexer) escape(c byte) bool {
	l.state = lxString
	switch c {
	case '\n':
	case '\\', '\'', '"':
		l.buf = append(l.buf, c)
	case 'a':
		l.buf = append(l.buf, 7)
	case 'b':
		l.buf = append(l.buf, 8)
	case 'f':
		l.buf = append(l.buf, 12)
	case 'n':
		l.buf = append(l.buf, '\n')
	case 'r':
		l.buf = append(l.buf, '\r')
	case 't':
		l.buf = append(l.buf, '\t')
	case 'v':
		l.buf = append(l.buf, 11)
	case '0', '1', '2', '3', '4', '5', '6', '7':
		l.state, l.escKind, l.esc = lxEscDigits, 'o', append(l.esc[:0], c)
	case 'x':
		l.state, l.escKind, l.esc = lxEscDigits, 'x', l.esc[:0]
	case 'u', 'U':
		if l.bytes {
			l.buf = append(l.buf, '\\', c)
			break
		}
		l.state, l.escKind, l.esc = lxEscDigits, c, l.esc[:0]
	case 'N':
		// \N{name} needs the Unicode name table; treated as unsupported.
		return false
	default:
		// Unknown escapes keep their backslash (a SyntaxWarning only).
		l.buf = append(l.buf, '\\', c)
	}
	return true
}

func (l *pyLexer) escDigit(c byte) (bool, bool) {
	if l.escKind == 'o' {
		if c >= '0' && c <= '7' && len(l.esc) < 3 {
			l.esc = append(l.esc, c)
			if len(l.esc) < 3 {
				return true, true
			}
			return true, l.escRune(8)
		}
		return false, l.escRune(8)
	}
	if !isHexByte(c) {
		return false, false
	}
	want := 2
	switch l.escKind {
	case 'u':
		want = 4
	case 'U':
		want = 8
	}
	l.esc = append(l.esc, c)
	if len(l.esc) < want {
		return true, true
	}
	return true, l.escRune(16)
}

func (l *pyLexer) escRune(base int) bool {
	n, err := strconv.ParseUint(string(l.esc), base, 32)
	l.state = lxString
	if err != nil || n > 0x10FFFF {
		return false
	}
	// Lone surrogates cannot be written as UTF-8; U+FFFD stands in.
	l.buf = appendPyRune(l.buf, rune(n))
	return true
}

func appendPyRune(dst []byte, r rune) []byte {
	return append(dst, string(r)...)
}

func isHexByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// pyKeywords are Python's reserved words: never a call or argument name.
var pyKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true,
	"async": true, "await": true, "break": true, "class": true, "continue": true,
	"def": true, "del": true, "elif": true, "else": true, "except": true,
	"finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true,
	"not": true, "or": true, "pass": true, "raise": true, "return": true,
	"try": true, "while": true, "with": true, "yield": true,
}

// pyNodeKind is the kind of a literal value.
type pyNodeKind uint8

const (
	pnScalar pyNodeKind = iota
	pnList
	pnDict
)

// pyNode is a literal argument value. Canon is a scalar's json.dumps form;
// Const is set for ast.Constant scalars (dict keys must be one); KeyID
// says which keys Python's dict treats as equal (1, 1.0 and True).
type pyNode struct {
	kind    pyNodeKind
	canon   string
	isConst bool
	keyID   string
	items   []*pyNode
	// keys are the dict's keys as JSON strings; Index finds a key's
	// place by identity.
	keys  []string
	index map[string]int
}

func (n *pyNode) appendJSON(dst []byte) []byte {
	switch n.kind {
	case pnList:
		dst = append(dst, '[')
		for i, it := range n.items {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = it.appendJSON(dst)
		}
		return append(dst, ']')
	case pnDict:
		dst = append(dst, '{')
		for i, it := range n.items {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = append(dst, n.keys[i]...)
			dst = append(dst, ": "...)
			dst = it.appendJSON(dst)
		}
		return append(dst, '}')
	}
	return append(dst, n.canon...)
}

// setItem adds key: value, keeping the first key's place and text and the
// last value, as a Python dict display does.
func (n *pyNode) setItem(key, value *pyNode) {
	if key.keyID != "" {
		if i, ok := n.index[key.keyID]; ok {
			n.items[i] = value
			return
		}
		if n.index == nil {
			n.index = map[string]int{}
		}
		n.index[key.keyID] = len(n.items)
	}
	jsonKey := key.canon
	if !strings.HasPrefix(jsonKey, `"`) {
		// json.dumps turns int, float, bool and None keys into strings.
		jsonKey = pyjson.Quote(jsonKey)
	}
	n.keys = append(n.keys, jsonKey)
	n.items = append(n.items, value)
}

// pyNumber parses a Python number literal into a scalar node; complex
// numbers and malformed literals fail.
func pyNumber(text string) (*pyNode, bool) {
	if strings.HasSuffix(text, "_") || strings.Contains(text, "__") || strings.Contains(text, "_.") || strings.Contains(text, "._") {
		return nil, false
	}
	lower := strings.ToLower(text)
	if len(lower) > 2 && lower[0] == '0' && strings.ContainsRune("xob", rune(lower[1])) {
		digits := strings.ReplaceAll(lower[2:], "_", "")
		if strings.HasPrefix(lower[2:], "_") {
			digits = strings.ReplaceAll(lower[3:], "_", "")
		}
		base := map[byte]int{'x': 16, 'o': 8, 'b': 2}[lower[1]]
		v, ok := new(big.Int).SetString(digits, base)
		if !ok || digits == "" || strings.ContainsAny(digits, "+-") {
			return nil, false
		}
		s := v.String()
		return &pyNode{canon: s, isConst: true, keyID: "n" + s}, true
	}
	plain := strings.ReplaceAll(lower, "_", "")
	if plain == "" || strings.HasPrefix(text, "_") {
		return nil, false
	}
	isInt := true
	for i := 0; i < len(plain); i++ {
		if plain[i] < '0' || plain[i] > '9' {
			isInt = false
			break
		}
	}
	if isInt {
		if len(plain) > 1 && plain[0] == '0' {
			if strings.Trim(plain, "0") != "" {
				return nil, false
			}
			plain = "0"
		}
		if len(plain) > pyfmt.MaxIntDigits {
			// CPython's compiler refuses the literal (SyntaxError) past
			// int_max_str_digits; runs of zeros, done above, are exempt.
			return nil, false
		}
		return &pyNode{canon: plain, isConst: true, keyID: "n" + plain}, true
	}
	if !pyFloatSyntax(plain) {
		return nil, false
	}
	return floatNode(pyjson.ParseFloat(plain)), true
}

// pyFloatSyntax checks digits [. digits] [e [+-] digits] with at least one
// digit in the mantissa.
func pyFloatSyntax(s string) bool {
	i, mant := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i, mant = i+1, mant+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, mant = i+1, mant+1
		}
	}
	if mant == 0 {
		return false
	}
	if i < len(s) && s[i] == 'e' {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, exp = i+1, exp+1
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

func floatNode(f float64) *pyNode {
	n := &pyNode{canon: string(pyjson.AppendFloat(nil, f)), isConst: true}
	switch {
	case math.IsNaN(f):
		// NaN never equals another key.
	case math.IsInf(f, 0):
		n.keyID = "f" + n.canon
	case f == math.Trunc(f):
		i, _ := big.NewFloat(f).Int(nil)
		n.keyID = "n" + i.String()
	default:
		n.keyID = "f" + n.canon
	}
	return n
}

// pyState is where the call-list parser is outside literal values.
type pyState uint8

const (
	psOpen      pyState = iota // expecting '['
	psCallName                 // expecting a call's name
	psCallDot                  // after a name part: '.' or '('
	psCallPart                 // after '.': a name part
	psKwStart                  // in a call: an argument or ')'
	psKwName                   // after a name: '=' makes it a keyword
	psPos                      // inside a positional argument
	psValue                    // inside a keyword's value
	psKwAfter                  // after a value: ',' or ')'
	psListAfter                // after a call: ',' or ']'
	psListNext                 // after ',': a call or ']'
	psDone                     // the list is closed
	psSemi                     // after the list and a ';'
)

// pyFrame is an open list or dict inside a value. Dict states: 0 key or
// '}', 1 ':', 2 value, 3 ',' or '}'. List states: 0 value or ']', 1 ',' or
// ']'.
type pyFrame struct {
	node  *pyNode
	state uint8
	key   *pyNode
}

// pyCallList is the parser over tokens. Calls go out as they are read:
// the name at '(' and the arguments at ')' (a repeated keyword may still
// replace an earlier value until then).
type pyCallList struct {
	state pyState
	name  []string
	stack []pyFrame
	// str is a string literal that an adjacent one may still extend.
	str *pyTok
	// kws and KwVals are the current call's keywords so far; Kw indexes
	// the one being read.
	kws    []string
	kwVals []*pyNode
	kw     int
	// pend is a name that '=' would make a keyword; Depth counts brackets
	// open in a positional argument.
	pend  string
	depth int
	// prev is what a positional argument's last token was (pp*).
	prev   uint8
	calls  int
	failed bool
	// out collects the deltas of one feed.
	out []ToolCallDelta
}

// token consumes one token; false means the text is not a call list.
func (p *pyCallList) token(t pyTok) bool {
	if p.str != nil {
		if t.kind == ptString {
			return p.extendString(t)
		}
		if !p.flushString() {
			return false
		}
	}
	op := ""
	if t.kind == ptOp {
		op = t.text
	}
	switch p.state {
	case psOpen, psCallName, psListNext, psCallPart, psCallDot:
		return p.callHead(t, op)
	case psKwStart:
		if op == ")" {
			return p.endCall()
		}
		if t.kind == ptName && !pyKeywords[t.text] {
			p.pend = t.text
			p.state = psKwName
			return true
		}
		return p.positional(t, op)
	case psKwName:
		return p.keyword(t, op)
	case psPos:
		return p.posToken(t, op)
	case psValue:
		return p.valueToken(t, op)
	default:
		return p.separator(op)
	}
}

// extendString joins an adjacent string literal to the pending one, as
// Python concatenates them; a bytes literal does not join a str.
func (p *pyCallList) extendString(t pyTok) bool {
	if t.bytes != p.str.bytes {
		return false
	}
	p.str.text += t.text
	p.str.fStr = p.str.fStr || t.fStr
	return true
}

// flushString hands the pending string literal, complete now, on as a
// value.
func (p *pyCallList) flushString() bool {
	s := p.str
	p.str = nil
	if s.bytes || s.fStr {
		// bytes are not JSON-serialisable; f-strings are not constants.
		return false
	}
	q := pyjson.Quote(s.text)
	return p.value(&pyNode{canon: q, isConst: true, keyID: "s" + s.text})
}

// callHead reads the list's '[' and a call's dotted name up to its '(',
// which sends the call's name.
func (p *pyCallList) callHead(t pyTok, op string) bool {
	switch p.state {
	case psOpen:
		if op != "[" {
			return false
		}
		p.state = psCallName
	case psCallName, psListNext:
		if p.state == psListNext && op == "]" {
			p.state = psDone
			return true
		}
		if t.kind != ptName || pyKeywords[t.text] {
			return false
		}
		p.name = append(p.name[:0], t.text)
		p.state = psCallDot
	case psCallPart:
		if t.kind != ptName || pyKeywords[t.text] {
			return false
		}
		p.name = append(p.name, t.text)
		p.state = psCallDot
	case psCallDot:
		switch op {
		case ".":
			p.state = psCallPart
		case "(":
			p.out = append(p.out, ToolCallDelta{Index: p.calls, ID: newToolCallID(), Type: "function", Name: strings.Join(p.name, ".")})
			p.kws, p.kwVals = p.kws[:0], p.kwVals[:0]
			p.state = psKwStart
		default:
			return false
		}
	}
	return true
}

// keyword reads the token after a name in a call: '=' makes the name a
// keyword whose value follows; anything else makes it the start of a
// positional argument.
func (p *pyCallList) keyword(t pyTok, op string) bool {
	if op != "=" {
		return p.positional(pyTok{kind: ptName, text: p.pend}, "") && p.posToken(t, op)
	}
	// ast.parse accepts a repeated keyword (only the compiler rejects
	// it); the dict vLLM builds keeps its first place and last value.
	p.kw = len(p.kws)
	for i, k := range p.kws {
		if k == p.pend {
			p.kw = i
		}
	}
	if p.kw == len(p.kws) {
		p.kws = append(p.kws, p.pend)
		p.kwVals = append(p.kwVals, nil)
	}
	p.state = psValue
	return true
}

// separator reads what may follow an argument, a call or the closed list.
func (p *pyCallList) separator(op string) bool {
	switch p.state {
	case psKwAfter:
		switch op {
		case ",":
			p.state = psKwStart
		case ")":
			return p.endCall()
		default:
			return false
		}
	case psListAfter:
		switch op {
		case ",":
			p.state = psListNext
		case "]":
			p.state = psDone
		default:
			return false
		}
	case psDone:
		if op != ";" {
			return false
		}
		p.state = psSemi
	default: // psSemi: nothing may follow
		return false
	}
	return true
}

// endCall sends the call's arguments: json.dumps of the keyword dict.
// positional starts a positional argument, which vLLM ignores. Python
// refuses one after a keyword. Its expression is skipped with brackets
// balanced and only a light syntax check: two operands in a row (other
// than adjacent strings), "{" after an operand, or "=" outside brackets
// fail.
func (p *pyCallList) positional(t pyTok, op string) bool {
	if len(p.kws) > 0 || t.kind == ptOp && !strings.Contains("([{-+~*", op) {
		return false
	}
	p.state, p.depth, p.prev = psPos, 0, 0
	return p.posToken(t, op)
}

// Prev values in a positional argument.
const (
	ppNone    = iota // after an operator or at the start
	ppOperand        // after a name, number or closing bracket
	ppStr            // after a str literal
	ppBytes          // after a bytes literal
	ppDot            // after '.': a name must follow
	ppSub            // after '[' following an operand: not ']'
)

// posToken skips one token of a positional argument.
func (p *pyCallList) posToken(t pyTok, op string) bool {
	prev := p.prev
	p.prev = ppNone
	operand := t.kind == ptNumber || t.kind == ptString ||
		t.kind == ptName && (!pyKeywords[t.text] || t.text == "True" || t.text == "False" || t.text == "None")
	if prev == ppDot {
		if t.kind != ptName || pyKeywords[t.text] {
			return false
		}
		p.prev = ppOperand
		return true
	}
	if operand {
		switch {
		case t.kind == ptString && (prev == ppStr && !t.bytes || prev == ppBytes && t.bytes):
		case prev != ppNone && prev != ppSub:
			return false
		}
		p.prev = ppOperand
		if t.kind == ptString {
			p.prev = ppStr
			if t.bytes {
				p.prev = ppBytes
			}
		}
		return true
	}
	switch op {
	case "(":
		p.depth++
	case "[":
		p.depth++
		if prev != ppNone && prev != ppSub {
			p.prev = ppSub
		}
	case "{":
		if prev != ppNone && prev != ppSub {
			return false
		}
		p.depth++
	case ")", "]", "}":
		if op == "]" && prev == ppSub {
			return false
		}
		if p.depth == 0 {
			return op == ")" && p.endCall()
		}
		p.depth--
		p.prev = ppOperand
	case ".":
		if prev == ppNone || prev == ppSub {
			return false
		}
		p.prev = ppDot
	case ",":
		if p.depth == 0 {
			p.state = psKwStart
		}
	case "=":
		return p.depth > 0
	}
	return true
}

func (p *pyCallList) endCall() bool {
	args := []byte{'{'}
	for i, k := range p.kws {
		if i > 0 {
			args = append(args, ", "...)
		}
		args = append(append(args, pyjson.Quote(k)...), ": "...)
		args = p.kwVals[i].appendJSON(args)
	}
	p.emitArgs(string(append(args, '}')))
	p.calls++
	p.state = psListAfter
	return true
}

func (p *pyCallList) emitArgs(frag string) {
	p.out = appendArgs(p.out, p.calls, frag)
}

// valueToken handles a token inside a keyword's value.
func (p *pyCallList) valueToken(t pyTok, op string) bool {
	var top *pyFrame
	if len(p.stack) > 0 {
		top = &p.stack[len(p.stack)-1]
	}
	// Punctuation of the open container.
	if top != nil {
		dict := top.node.kind == pnDict
		switch {
		case !dict && top.state == 1 || dict && top.state == 3:
			switch {
			case op == ",":
				top.state = 0
				return true
			case op == "]" && !dict, op == "}" && dict:
				return p.closeFrame()
			}
			return false
		case dict && top.state == 1:
			if op != ":" {
				return false
			}
			top.state = 2
			return true
		case top.state == 0 && (op == "]" && !dict || op == "}" && dict):
			return p.closeFrame()
		}
	}
	// A value (or a dict key) starts.
	switch t.kind {
	case ptString:
		s := t
		p.str = &s
		return true
	case ptNumber:
		n, ok := pyNumber(t.text)
		return ok && p.value(n)
	case ptName:
		switch t.text {
		case "True":
			return p.value(&pyNode{canon: "true", isConst: true, keyID: "n1"})
		case "False":
			return p.value(&pyNode{canon: "false", isConst: true, keyID: "n0"})
		case "None":
			return p.value(&pyNode{canon: "null", isConst: true, keyID: "none"})
		case "true", "false", "null":
			// JSON spellings are names, accepted as values only.
			return p.value(&pyNode{canon: t.text})
		}
		return false
	}
	switch op {
	case "[":
		p.stack = append(p.stack, pyFrame{node: &pyNode{kind: pnList}})
		return true
	case "{":
		p.stack = append(p.stack, pyFrame{node: &pyNode{kind: pnDict}})
		return true
	}
	return false
}

// closeFrame ends the innermost container; it becomes a value itself.
func (p *pyCallList) closeFrame() bool {
	n := p.stack[len(p.stack)-1].node
	p.stack = p.stack[:len(p.stack)-1]
	return p.value(n)
}

// value places a complete value in its container or ends the keyword.
func (p *pyCallList) value(n *pyNode) bool {
	if len(p.stack) == 0 {
		if p.state != psValue {
			return false
		}
		p.kwVals[p.kw] = n
		p.state = psKwAfter
		return true
	}
	top := &p.stack[len(p.stack)-1]
	if top.node.kind == pnList {
		if top.state != 0 {
			return false
		}
		top.node.items = append(top.node.items, n)
		top.state = 1
		return true
	}
	switch top.state {
	case 0:
		if n.kind != pnScalar || !n.isConst {
			return false
		}
		top.key = n
		top.state = 1
	case 2:
		top.node.setItem(top.key, n)
		top.key = nil
		top.state = 3
	default:
		return false
	}
	return true
}

// end reports whether the input ended with the list complete.
func (p *pyCallList) end() bool {
	return p.str == nil && (p.state == psDone || p.state == psSemi)
}

// codec saves and restores the state of a pyLexer.
func (l *pyLexer) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &l.state, 13)
	c.ByteSlice(&l.buf)
	c.Byte(&l.quote)
	c.Bool(&l.triple)
	c.Bool(&l.raw)
	c.Bool(&l.bytes)
	c.Bool(&l.fStr)
	c.Int(&l.quotes)
	c.Byte(&l.escKind)
	c.ByteSlice(&l.esc)
}

// codec saves and restores the state of a pyTok.
func (p *pyTok) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &p.kind, 4)
	c.String(&p.text)
	c.Bool(&p.bytes)
	c.Bool(&p.fStr)
}
