package parsers

import (
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
	Kind        pyTokKind
	Text        string
	Bytes, FStr bool
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
	State pyLexState
	Buf   []byte
	Quote byte
	// Triple, Raw, Bytes and FStr describe the current string.
	Triple, Raw, Bytes, FStr bool
	// Quotes counts closing quotes seen in a row in a triple-quoted string.
	Quotes int
	// EscKind is 'o', 'x', 'u' or 'U' while reading escape digits.
	EscKind byte
	Esc     []byte
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
	switch l.State {
	case lxSpace, lxComment:
		return true
	case lxName:
		return l.emitName(tok)
	case lxNumber:
		return l.emitNumber(tok)
	case lxDot, lxEq:
		op := map[pyLexState]string{lxDot: ".", lxEq: "="}[l.State]
		l.State = lxSpace
		return tok(pyTok{Kind: ptOp, Text: op})
	}
	return false
}

func (l *pyLexer) emitName(tok func(pyTok) bool) bool {
	l.State = lxSpace
	return tok(pyTok{Kind: ptName, Text: string(l.Buf)})
}

func (l *pyLexer) emitNumber(tok func(pyTok) bool) bool {
	l.State = lxSpace
	return tok(pyTok{Kind: ptNumber, Text: string(l.Buf)})
}

func (l *pyLexer) step(c byte, tok func(pyTok) bool) (consumed, ok bool) {
	if c == 0 {
		// Python refuses source with NUL bytes.
		return false, false
	}
	switch l.State {
	case lxSpace:
		switch {
		case c == ' ' || c == '\t' || c == '\f' || c == '\n' || c == '\r':
		case c == '#':
			l.State = lxComment
		case c == '\\':
			l.State = lxContinue
		case c == '.':
			l.State = lxDot
		case c == '=':
			l.State = lxEq
		case c == '\'' || c == '"':
			l.startString(c, "")
		case c >= '0' && c <= '9':
			l.State, l.Buf = lxNumber, append(l.Buf[:0], c)
		case isPyNameStart(c):
			l.State, l.Buf = lxName, append(l.Buf[:0], c)
		default:
			return true, tok(pyTok{Kind: ptOp, Text: string(c)})
		}
		return true, true
	case lxComment:
		if c == '\n' || c == '\r' {
			l.State = lxSpace
		}
		return true, true
	case lxContinue:
		if c == '\r' {
			return true, true
		}
		l.State = lxSpace
		return true, c == '\n'
	case lxDot:
		if c >= '0' && c <= '9' {
			l.State, l.Buf = lxNumber, append(l.Buf[:0], '.')
			return false, true
		}
		l.State = lxSpace
		return false, tok(pyTok{Kind: ptOp, Text: "."})
	case lxEq:
		l.State = lxSpace
		if c == '=' {
			return true, tok(pyTok{Kind: ptOp, Text: "=="})
		}
		return false, tok(pyTok{Kind: ptOp, Text: "="})
	case lxName:
		if isPyNameByte(c) {
			l.Buf = append(l.Buf, c)
			return true, true
		}
		if (c == '\'' || c == '"') && stringPrefixes[strings.ToLower(string(l.Buf))] {
			l.startString(c, strings.ToLower(string(l.Buf)))
			return true, true
		}
		return false, l.emitName(tok)
	case lxNumber:
		last := l.Buf[len(l.Buf)-1]
		if isPyNameByte(c) || c == '.' || (c == '+' || c == '-') && (last == 'e' || last == 'E') {
			l.Buf = append(l.Buf, c)
			return true, true
		}
		return false, l.emitNumber(tok)
	case lxOpen:
		if c == l.Quote {
			l.State = lxQuote2
			return true, true
		}
		l.State = lxString
		return false, true
	case lxQuote2:
		if c == l.Quote {
			l.State, l.Triple = lxString, true
			return true, true
		}
		return false, l.emitString(tok)
	case lxString:
		return l.stringByte(c, tok)
	case lxRawEscape:
		// A raw string keeps the backslash and the byte after it, which
		// never ends the string.
		l.Buf = append(l.Buf, '\\', c)
		l.State = lxString
		return true, true
	case lxEscape:
		return true, l.escape(c)
	case lxEscDigits:
		return l.escDigit(c)
	}
	return false, false
}

func (l *pyLexer) startString(q byte, prefix string) {
	l.State, l.Quote, l.Buf = lxOpen, q, l.Buf[:0]
	l.Triple, l.Quotes = false, 0
	l.Raw = strings.Contains(prefix, "r")
	l.Bytes = strings.Contains(prefix, "b")
	l.FStr = strings.ContainsAny(prefix, "ft")
}

func (l *pyLexer) emitString(tok func(pyTok) bool) bool {
	l.State = lxSpace
	return tok(pyTok{Kind: ptString, Text: string(l.Buf), Bytes: l.Bytes, FStr: l.FStr})
}

func (l *pyLexer) stringByte(c byte, tok func(pyTok) bool) (bool, bool) {
	if l.Triple {
		if c == l.Quote {
			if l.Quotes++; l.Quotes == 3 {
				return true, l.emitString(tok)
			}
			return true, true
		}
		for ; l.Quotes > 0; l.Quotes-- {
			l.Buf = append(l.Buf, l.Quote)
		}
	} else {
		if c == l.Quote {
			return true, l.emitString(tok)
		}
		if c == '\n' || c == '\r' {
			return false, false
		}
	}
	if c == '\\' {
		l.State = lxEscape
		if l.Raw {
			l.State = lxRawEscape
		}
		return true, true
	}
	l.Buf = append(l.Buf, c)
	return true, true
}

// escape decodes the byte after a backslash in a non-raw string.
func (l *pyLexer) escape(c byte) bool {
	l.State = lxString
	switch c {
	case '\n':
	case '\\', '\'', '"':
		l.Buf = append(l.Buf, c)
	case 'a':
		l.Buf = append(l.Buf, 7)
	case 'b':
		l.Buf = append(l.Buf, 8)
	case 'f':
		l.Buf = append(l.Buf, 12)
	case 'n':
		l.Buf = append(l.Buf, '\n')
	case 'r':
		l.Buf = append(l.Buf, '\r')
	case 't':
		l.Buf = append(l.Buf, '\t')
	case 'v':
		l.Buf = append(l.Buf, 11)
	case '0', '1', '2', '3', '4', '5', '6', '7':
		l.State, l.EscKind, l.Esc = lxEscDigits, 'o', append(l.Esc[:0], c)
	case 'x':
		l.State, l.EscKind, l.Esc = lxEscDigits, 'x', l.Esc[:0]
	case 'u', 'U':
		if l.Bytes {
			l.Buf = append(l.Buf, '\\', c)
			break
		}
		l.State, l.EscKind, l.Esc = lxEscDigits, c, l.Esc[:0]
	case 'N':
		// \N{name} needs the Unicode name table; treated as unsupported.
		return false
	default:
		// Unknown escapes keep their backslash (a SyntaxWarning only).
		l.Buf = append(l.Buf, '\\', c)
	}
	return true
}

func (l *pyLexer) escDigit(c byte) (bool, bool) {
	if l.EscKind == 'o' {
		if c >= '0' && c <= '7' && len(l.Esc) < 3 {
			l.Esc = append(l.Esc, c)
			if len(l.Esc) < 3 {
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
	switch l.EscKind {
	case 'u':
		want = 4
	case 'U':
		want = 8
	}
	l.Esc = append(l.Esc, c)
	if len(l.Esc) < want {
		return true, true
	}
	return true, l.escRune(16)
}

func (l *pyLexer) escRune(base int) bool {
	n, err := strconv.ParseUint(string(l.Esc), base, 32)
	l.State = lxString
	if err != nil || n > 0x10FFFF {
		return false
	}
	// Lone surrogates cannot be written as UTF-8; U+FFFD stands in.
	l.Buf = appendPyRune(l.Buf, rune(n))
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
	Kind  pyNodeKind
	Canon string
	Const bool
	KeyID string
	Items []*pyNode
	// Keys are the dict's keys as JSON strings; Index finds a key's
	// place by identity.
	Keys  []string
	Index map[string]int
}

func (n *pyNode) appendJSON(dst []byte) []byte {
	switch n.Kind {
	case pnList:
		dst = append(dst, '[')
		for i, it := range n.Items {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = it.appendJSON(dst)
		}
		return append(dst, ']')
	case pnDict:
		dst = append(dst, '{')
		for i, it := range n.Items {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = append(dst, n.Keys[i]...)
			dst = append(dst, ": "...)
			dst = it.appendJSON(dst)
		}
		return append(dst, '}')
	}
	return append(dst, n.Canon...)
}

// setItem adds key: value, keeping the first key's place and text and the
// last value, as a Python dict display does.
func (n *pyNode) setItem(key, value *pyNode) {
	if key.KeyID != "" {
		if i, ok := n.Index[key.KeyID]; ok {
			n.Items[i] = value
			return
		}
		if n.Index == nil {
			n.Index = map[string]int{}
		}
		n.Index[key.KeyID] = len(n.Items)
	}
	jsonKey := key.Canon
	if !strings.HasPrefix(jsonKey, `"`) {
		// json.dumps turns int, float, bool and None keys into strings.
		jsonKey = pyjson.Quote(jsonKey)
	}
	n.Keys = append(n.Keys, jsonKey)
	n.Items = append(n.Items, value)
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
		return &pyNode{Canon: s, Const: true, KeyID: "n" + s}, true
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
		return &pyNode{Canon: plain, Const: true, KeyID: "n" + plain}, true
	}
	if !pyFloatSyntax(plain) {
		return nil, false
	}
	f, err := strconv.ParseFloat(plain, 64)
	if err != nil && !math.IsInf(f, 0) && f != 0 {
		return nil, false
	}
	return floatNode(f), true
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
	n := &pyNode{Canon: string(pyjson.AppendFloat(nil, f)), Const: true}
	switch {
	case math.IsNaN(f):
		// NaN never equals another key.
	case math.IsInf(f, 0):
		n.KeyID = "f" + n.Canon
	case f == math.Trunc(f):
		i, _ := big.NewFloat(f).Int(nil)
		n.KeyID = "n" + i.String()
	default:
		n.KeyID = "f" + n.Canon
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
	Node  *pyNode
	State uint8
	Key   *pyNode
}

// pyCallList is the parser over tokens. Calls go out as they are read:
// the name at '(' and the arguments at ')' (a repeated keyword may still
// replace an earlier value until then).
type pyCallList struct {
	State pyState
	Name  []string
	Stack []pyFrame
	// Str is a string literal that an adjacent one may still extend.
	Str *pyTok
	// Kws and KwVals are the current call's keywords so far; Kw indexes
	// the one being read.
	Kws    []string
	KwVals []*pyNode
	Kw     int
	// Pend is a name that '=' would make a keyword; Depth counts brackets
	// open in a positional argument.
	Pend  string
	Depth int
	// Prev is what a positional argument's last token was (pp*).
	Prev   uint8
	Calls  int
	Failed bool
	// out collects the deltas of one feed.
	out []ToolCallDelta
}

// token consumes one token; false means the text is not a call list.
func (p *pyCallList) token(t pyTok) bool {
	if p.Str != nil {
		if t.Kind == ptString {
			if t.Bytes != p.Str.Bytes {
				return false
			}
			p.Str.Text += t.Text
			p.Str.FStr = p.Str.FStr || t.FStr
			return true
		}
		s := p.Str
		p.Str = nil
		if s.Bytes || s.FStr {
			// bytes are not JSON-serialisable; f-strings are not constants.
			return false
		}
		q := pyjson.Quote(s.Text)
		if !p.value(&pyNode{Canon: q, Const: true, KeyID: "s" + s.Text}) {
			return false
		}
	}
	op := ""
	if t.Kind == ptOp {
		op = t.Text
	}
	switch p.State {
	case psOpen:
		if op != "[" {
			return false
		}
		p.State = psCallName
	case psCallName, psListNext:
		if p.State == psListNext && op == "]" {
			p.State = psDone
			return true
		}
		if t.Kind != ptName || pyKeywords[t.Text] {
			return false
		}
		p.Name = append(p.Name[:0], t.Text)
		p.State = psCallDot
	case psCallPart:
		if t.Kind != ptName || pyKeywords[t.Text] {
			return false
		}
		p.Name = append(p.Name, t.Text)
		p.State = psCallDot
	case psCallDot:
		switch op {
		case ".":
			p.State = psCallPart
		case "(":
			p.out = append(p.out, ToolCallDelta{Index: p.Calls, ID: newToolCallID(), Type: "function", Name: strings.Join(p.Name, ".")})
			p.Kws, p.KwVals = p.Kws[:0], p.KwVals[:0]
			p.State = psKwStart
		default:
			return false
		}
	case psKwStart:
		if op == ")" {
			return p.endCall()
		}
		if t.Kind == ptName && !pyKeywords[t.Text] {
			p.Pend = t.Text
			p.State = psKwName
			return true
		}
		return p.positional(t, op)
	case psKwName:
		if op != "=" {
			return p.positional(pyTok{Kind: ptName, Text: p.Pend}, "") && p.posToken(t, op)
		}
		// ast.parse accepts a repeated keyword (only the compiler rejects
		// it); the dict vLLM builds keeps its first place and last value.
		p.Kw = len(p.Kws)
		for i, k := range p.Kws {
			if k == p.Pend {
				p.Kw = i
			}
		}
		if p.Kw == len(p.Kws) {
			p.Kws = append(p.Kws, p.Pend)
			p.KwVals = append(p.KwVals, nil)
		}
		p.State = psValue
	case psPos:
		return p.posToken(t, op)
	case psKwAfter:
		switch op {
		case ",":
			p.State = psKwStart
		case ")":
			return p.endCall()
		default:
			return false
		}
	case psListAfter:
		switch op {
		case ",":
			p.State = psListNext
		case "]":
			p.State = psDone
		default:
			return false
		}
	case psDone:
		if op != ";" {
			return false
		}
		p.State = psSemi
	case psSemi:
		return false
	case psValue:
		return p.valueToken(t, op)
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
	if len(p.Kws) > 0 || t.Kind == ptOp && !strings.Contains("([{-+~*", op) {
		return false
	}
	p.State, p.Depth, p.Prev = psPos, 0, 0
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
	prev := p.Prev
	p.Prev = ppNone
	operand := t.Kind == ptNumber || t.Kind == ptString ||
		t.Kind == ptName && (!pyKeywords[t.Text] || t.Text == "True" || t.Text == "False" || t.Text == "None")
	if prev == ppDot {
		if t.Kind != ptName || pyKeywords[t.Text] {
			return false
		}
		p.Prev = ppOperand
		return true
	}
	if operand {
		switch {
		case t.Kind == ptString && (prev == ppStr && !t.Bytes || prev == ppBytes && t.Bytes):
		case prev != ppNone && prev != ppSub:
			return false
		}
		p.Prev = ppOperand
		if t.Kind == ptString {
			p.Prev = ppStr
			if t.Bytes {
				p.Prev = ppBytes
			}
		}
		return true
	}
	switch op {
	case "(":
		p.Depth++
	case "[":
		p.Depth++
		if prev != ppNone && prev != ppSub {
			p.Prev = ppSub
		}
	case "{":
		if prev != ppNone && prev != ppSub {
			return false
		}
		p.Depth++
	case ")", "]", "}":
		if op == "]" && prev == ppSub {
			return false
		}
		if p.Depth == 0 {
			return op == ")" && p.endCall()
		}
		p.Depth--
		p.Prev = ppOperand
	case ".":
		if prev == ppNone || prev == ppSub {
			return false
		}
		p.Prev = ppDot
	case ",":
		if p.Depth == 0 {
			p.State = psKwStart
		}
	case "=":
		return p.Depth > 0
	}
	return true
}

func (p *pyCallList) endCall() bool {
	args := []byte{'{'}
	for i, k := range p.Kws {
		if i > 0 {
			args = append(args, ", "...)
		}
		args = append(append(args, pyjson.Quote(k)...), ": "...)
		args = p.KwVals[i].appendJSON(args)
	}
	p.emitArgs(string(append(args, '}')))
	p.Calls++
	p.State = psListAfter
	return true
}

func (p *pyCallList) emitArgs(frag string) {
	p.out = appendArgs(p.out, p.Calls, frag)
}

// valueToken handles a token inside a keyword's value.
func (p *pyCallList) valueToken(t pyTok, op string) bool {
	var top *pyFrame
	if len(p.Stack) > 0 {
		top = &p.Stack[len(p.Stack)-1]
	}
	// Punctuation of the open container.
	if top != nil {
		dict := top.Node.Kind == pnDict
		switch {
		case !dict && top.State == 1 || dict && top.State == 3:
			switch {
			case op == ",":
				top.State = 0
				return true
			case op == "]" && !dict, op == "}" && dict:
				return p.closeFrame()
			}
			return false
		case dict && top.State == 1:
			if op != ":" {
				return false
			}
			top.State = 2
			return true
		case top.State == 0 && (op == "]" && !dict || op == "}" && dict):
			return p.closeFrame()
		}
	}
	// A value (or a dict key) starts.
	switch t.Kind {
	case ptString:
		s := t
		p.Str = &s
		return true
	case ptNumber:
		n, ok := pyNumber(t.Text)
		return ok && p.value(n)
	case ptName:
		switch t.Text {
		case "True":
			return p.value(&pyNode{Canon: "true", Const: true, KeyID: "n1"})
		case "False":
			return p.value(&pyNode{Canon: "false", Const: true, KeyID: "n0"})
		case "None":
			return p.value(&pyNode{Canon: "null", Const: true, KeyID: "none"})
		case "true", "false", "null":
			// JSON spellings are names, accepted as values only.
			return p.value(&pyNode{Canon: t.Text})
		}
		return false
	}
	switch op {
	case "[":
		p.Stack = append(p.Stack, pyFrame{Node: &pyNode{Kind: pnList}})
		return true
	case "{":
		p.Stack = append(p.Stack, pyFrame{Node: &pyNode{Kind: pnDict}})
		return true
	}
	return false
}

// closeFrame ends the innermost container; it becomes a value itself.
func (p *pyCallList) closeFrame() bool {
	n := p.Stack[len(p.Stack)-1].Node
	p.Stack = p.Stack[:len(p.Stack)-1]
	return p.value(n)
}

// value places a complete value in its container or ends the keyword.
func (p *pyCallList) value(n *pyNode) bool {
	if len(p.Stack) == 0 {
		if p.State != psValue {
			return false
		}
		p.KwVals[p.Kw] = n
		p.State = psKwAfter
		return true
	}
	top := &p.Stack[len(p.Stack)-1]
	if top.Node.Kind == pnList {
		if top.State != 0 {
			return false
		}
		top.Node.Items = append(top.Node.Items, n)
		top.State = 1
		return true
	}
	switch top.State {
	case 0:
		if n.Kind != pnScalar || !n.Const {
			return false
		}
		top.Key = n
		top.State = 1
	case 2:
		top.Node.setItem(top.Key, n)
		top.Key = nil
		top.State = 3
	default:
		return false
	}
	return true
}

// end reports whether the input ended with the list complete.
func (p *pyCallList) end() bool {
	return p.Str == nil && (p.State == psDone || p.State == psSemi)
}
