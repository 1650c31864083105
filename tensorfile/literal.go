package tensorfile

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
)

// The .npy header is a Python dict literal. literalParser reads the part
// of ast.literal_eval's language a header uses — dicts, tuples, lists,
// strings, ints, True, False, None — and nothing else; it never evaluates.

type litKind uint8

const (
	litDict litKind = iota + 1
	litTuple
	litList
	litStr
	litInt
	litBool
	litNone
)

type literal struct {
	kind  litKind
	str   string
	int   int
	bool  bool
	keys  []*literal // litDict
	items []*literal // litDict values, litTuple and litList elements
}

// maxLiteralDepth bounds nesting; a real header nests two deep.
const maxLiteralDepth = 16

type literalParser struct {
	s     []byte
	i     int
	depth int
	longs bool // accept Python 2's "L" suffix on ints (_filter_header)
	// nameLine is the line of the first bare name (a variable, which
	// literal_eval refuses after the text parsed as Python); 0 when none.
	nameLine int
}

// parse reads one literal covering the whole input (surrounding space
// allowed).
func (p *literalParser) parse() (*literal, bool) {
	v, ok := p.value()
	if !ok {
		return nil, false
	}
	p.space()
	return v, p.i == len(p.s)
}

func (p *literalParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.i++
		default:
			return
		}
	}
}

func (p *literalParser) value() (*literal, bool) {
	p.space()
	if p.i >= len(p.s) {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.container('}', litDict)
	case c == '(':
		return p.container(')', litTuple)
	case c == '[':
		return p.container(']', litList)
	case c == '\'' || c == '"':
		return p.str(c)
	case c == '-' || c == '+' || c >= '0' && c <= '9':
		return p.number()
	}
	for _, w := range [...]struct {
		word string
		lit  literal
	}{{"True", literal{kind: litBool, bool: true}}, {"False", literal{kind: litBool}}, {"None", literal{kind: litNone}}} {
		if p.hasWord(w.word) {
			p.i += len(w.word)
			l := w.lit
			return &l, true
		}
	}
	if c := p.s[p.i]; c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
		// A name parses as Python; literal_eval then refuses it.
		if p.nameLine == 0 {
			p.nameLine = 1 + bytes.Count(p.s[:p.i], []byte("\n"))
		}
		for p.i < len(p.s) && isNameByte(p.s[p.i]) {
			p.i++
		}
		return &literal{kind: litNone}, true
	}
	return nil, false
}

// hasWord reports the keyword w at p.i, not followed by a name character.
func (p *literalParser) hasWord(w string) bool {
	if !strings.HasPrefix(string(p.s[p.i:min(len(p.s), p.i+len(w))]), w) {
		return false
	}
	j := p.i + len(w)
	return j == len(p.s) || !isNameByte(p.s[j])
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// container reads a dict, tuple or list: elements separated by commas, a
// trailing comma allowed; a parenthesised single value without a comma is
// that value, as in Python.
func (p *literalParser) container(end byte, kind litKind) (*literal, bool) {
	if p.depth++; p.depth > maxLiteralDepth {
		return nil, false
	}
	defer func() { p.depth-- }()
	p.i++
	v := &literal{kind: kind}
	commas := 0
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			break
		}
		if len(v.items) > commas {
			return nil, false // two elements without a comma
		}
		item, ok := p.value()
		if !ok {
			return nil, false
		}
		if kind == litDict {
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, false
			}
			p.i++
			val, ok := p.value()
			if !ok {
				return nil, false
			}
			v.keys = append(v.keys, item)
			item = val
		}
		v.items = append(v.items, item)
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			commas++
		}
	}
	if kind == litTuple && len(v.items) == 1 && commas == 0 {
		return v.items[0], true
	}
	if kind == litDict {
		// A repeated key keeps its last value, as in a Python dict.
		last := make(map[string]int, len(v.keys))
		for i, k := range v.keys {
			if k.kind == litStr {
				last[k.str] = i
			}
		}
		keys, items := v.keys[:0:0], v.items[:0:0]
		for i, k := range v.keys {
			if k.kind != litStr || last[k.str] == i {
				keys, items = append(keys, k), append(items, v.items[i])
			}
		}
		v.keys, v.items = keys, items
	}
	return v, true
}

// str reads a quoted string with Python's simple escapes; other escapes
// and raw newlines are refused.
func (p *literalParser) str(q byte) (*literal, bool) {
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return &literal{kind: litStr, str: b.String()}, true
		case c == '\n':
			return nil, false
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return nil, false
			}
			e := p.s[p.i+1]
			r, ok := map[byte]byte{'\\': '\\', '\'': '\'', '"': '"', 'n': '\n', 't': '\t', 'r': '\r', '0': 0}[e]
			if !ok {
				return nil, false
			}
			b.WriteByte(r)
			p.i += 2
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return nil, false
}

// number reads a decimal int with an optional sign (and, for versions 1
// and 2, a trailing L).
func (p *literalParser) number() (*literal, bool) {
	start := p.i
	if c := p.s[p.i]; c == '-' || c == '+' {
		p.i++
		p.space()
	}
	digits := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	if p.i == digits {
		return nil, false
	}
	text := string(p.s[digits:p.i])
	if len(text) > 1 && text[0] == '0' && strings.Trim(text, "0") != "" {
		return nil, false // Python refuses leading zeros
	}
	if p.longs && p.i < len(p.s) && (p.s[p.i] == 'L' || p.s[p.i] == 'l') {
		p.i++
	}
	if p.i < len(p.s) && isNameByte(p.s[p.i]) || p.i < len(p.s) && p.s[p.i] == '.' {
		return nil, false // a float, a name or a malformed number
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return nil, false
	}
	if p.s[start] == '-' {
		n = -n
	}
	return &literal{kind: litInt, int: int(n)}, true
}

// repr is Python's repr of the literal, for error messages.
func (l *literal) repr() string {
	switch l.kind {
	case litStr:
		return pyStr(l.str)
	case litInt:
		return strconv.Itoa(l.int)
	case litBool:
		if l.bool {
			return "True"
		}
		return "False"
	case litNone:
		return "None"
	case litDict:
		parts := make([]string, len(l.items))
		for i := range l.items {
			parts[i] = l.keys[i].repr() + ": " + l.items[i].repr()
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	parts := make([]string, len(l.items))
	for i, it := range l.items {
		parts[i] = it.repr()
	}
	if l.kind == litList {
		return "[" + strings.Join(parts, ", ") + "]"
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// pyStr is Python's repr of a str (single quotes unless the text holds one
// and no double quote).
func pyStr(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatInt(int64(r)|0x100, 16)[1:])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// pyBytesAsStr is the repr of a header decoded as latin-1.
func pyBytesAsStr(raw []byte) string {
	r := make([]rune, len(raw))
	for i, c := range raw {
		r[i] = rune(c)
	}
	return pyStr(string(r))
}

// sortedKeysRepr is repr(sorted(d.keys())).
func sortedKeysRepr(keys map[string]*literal) string {
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	for i, k := range names {
		names[i] = pyStr(k)
	}
	return "[" + strings.Join(names, ", ") + "]"
}
