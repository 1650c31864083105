package protocol

import (
	"bytes"
	"unicode/utf8"

	"github.com/vrender/vrender/internal/pylax"
)

// refParseJSONBody is ParseJSONBody as it was before internal/wire took
// over the scanning, kept as the reference FuzzWireValidMatchesReference
// compares the one scanner with.
func refParseJSONBody(body []byte) ([]byte, error) {
	body = bytes.TrimPrefix(body, utf8BOM)
	if !utf8.Valid(body) {
		return nil, ErrBodyNotParsable
	}
	sc := pyScanner{s: body}
	if err := sc.document(); err != nil {
		if err.tooDeep {
			return nil, ErrBodyNotParsable
		}
		return nil, &JSONSyntaxError{Pos: utf8.RuneCount(body[:err.pos]), Msg: err.msg}
	}
	return body, nil
}

const maxJSONDepth = 990

type scanError struct {
	pos     int // byte offset
	msg     string
	tooDeep bool
}

// pyScanner walks JSON text with the same decisions, in the same order, as
// CPython's _json scanner, so the first error found is the one Python finds.
type pyScanner struct {
	s     []byte
	depth int
}

func (p *pyScanner) fail(pos int, msg string) *scanError { return &scanError{pos: pos, msg: msg} }

func (p *pyScanner) skipWS(i int) int {
	for i < len(p.s) {
		switch p.s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func (p *pyScanner) document() *scanError {
	i, err := p.value(p.skipWS(0))
	if err != nil {
		return err
	}
	if i = p.skipWS(i); i != len(p.s) {
		return p.fail(i, "Extra data")
	}
	return nil
}

// value scans one JSON value at i and returns the offset after it. A
// position where no value starts is Python's StopIteration, which every
// caller turns into "Expecting value" at that position.
func (p *pyScanner) value(i int) (int, *scanError) {
	if i >= len(p.s) {
		return 0, p.fail(i, "Expecting value")
	}
	switch p.s[i] {
	case '"':
		return p.str(i + 1)
	case '{':
		return p.nested(i+1, p.object)
	case '[':
		return p.nested(i+1, p.array)
	case 'n':
		if bytes.HasPrefix(p.s[i:], []byte("null")) {
			return i + 4, nil
		}
	case 't':
		if bytes.HasPrefix(p.s[i:], []byte("true")) {
			return i + 4, nil
		}
	case 'f':
		if bytes.HasPrefix(p.s[i:], []byte("false")) {
			return i + 5, nil
		}
	}
	return p.number(i)
}

func (p *pyScanner) nested(i int, scan func(int) (int, *scanError)) (int, *scanError) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxJSONDepth {
		return 0, &scanError{pos: i, tooDeep: true}
	}
	return scan(i)
}

func (p *pyScanner) number(start int) (int, *scanError) {
	s, i := p.s, start
	if s[i] == '-' {
		i++
		if i >= len(s) {
			return 0, p.fail(start, "Expecting value")
		}
	}
	switch {
	case s[i] >= '1' && s[i] <= '9':
		i++
		for i < len(s) && pylax.IsDigit(s[i]) {
			i++
		}
	case s[i] == '0':
		i++
	default:
		return 0, p.fail(start, "Expecting value")
	}
	if i < len(s)-1 && s[i] == '.' && pylax.IsDigit(s[i+1]) {
		i += 2
		for i < len(s) && pylax.IsDigit(s[i]) {
			i++
		}
	}
	if i < len(s)-1 && (s[i] == 'e' || s[i] == 'E') {
		e := i
		i++
		if i < len(s)-1 && (s[i] == '-' || s[i] == '+') {
			i++
		}
		for i < len(s) && pylax.IsDigit(s[i]) {
			i++
		}
		if !pylax.IsDigit(s[i-1]) {
			i = e // "1e" is the number 1 followed by junk
		}
	}
	return i, nil
}

// str scans a string whose opening quote is at i-1.
func (p *pyScanner) str(i int) (int, *scanError) {
	s, begin := p.s, i-1
	for {
		for i < len(s) && s[i] != '"' && s[i] != '\\' {
			if s[i] <= 0x1f {
				return 0, p.fail(i, "Invalid control character at")
			}
			i++
		}
		if i >= len(s) {
			return 0, p.fail(begin, "Unterminated string starting at")
		}
		if s[i] == '"' {
			return i + 1, nil
		}
		i++ // the backslash
		if i >= len(s) {
			return 0, p.fail(begin, "Unterminated string starting at")
		}
		if s[i] != 'u' {
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
				continue
			}
			return 0, p.fail(i-1, "Invalid \\escape")
		}
		u := i
		i++
		if i+4 >= len(s) {
			return 0, p.fail(u, "Invalid \\uXXXX escape")
		}
		c, ok := refHex4(s[i : i+4])
		if !ok {
			return 0, p.fail(u, "Invalid \\uXXXX escape")
		}
		i += 4
		// A high surrogate may pair with a following \uXXXX; CPython checks
		// that escape's digits too.
		if c >= 0xD800 && c <= 0xDBFF && i+6 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
			c2, ok := refHex4(s[i+2 : i+6])
			if !ok {
				return 0, p.fail(i+1, "Invalid \\uXXXX escape")
			}
			if c2 >= 0xDC00 && c2 <= 0xDFFF {
				i += 6
			}
		}
	}
}

func refHex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return r, true
}

// object scans members after the opening brace at i-1.
func (p *pyScanner) object(i int) (int, *scanError) {
	s := p.s
	i = p.skipWS(i)
	if i < len(s) && s[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return 0, p.fail(i, "Expecting property name enclosed in double quotes")
		}
		var err *scanError
		if i, err = p.str(i + 1); err != nil {
			return 0, err
		}
		i = p.skipWS(i)
		if i >= len(s) || s[i] != ':' {
			return 0, p.fail(i, "Expecting ':' delimiter")
		}
		i = p.skipWS(i + 1)
		if i, err = p.value(i); err != nil {
			return 0, err
		}
		i = p.skipWS(i)
		if i < len(s) && s[i] == '}' {
			return i + 1, nil
		}
		if i >= len(s) || s[i] != ',' {
			return 0, p.fail(i, "Expecting ',' delimiter")
		}
		i = p.skipWS(i + 1)
	}
}

// array scans items after the opening bracket at i-1.
func (p *pyScanner) array(i int) (int, *scanError) {
	s := p.s
	i = p.skipWS(i)
	if i < len(s) && s[i] == ']' {
		return i + 1, nil
	}
	for {
		var err *scanError
		if i, err = p.value(i); err != nil {
			return 0, err
		}
		i = p.skipWS(i)
		if i < len(s) && s[i] == ']' {
			return i + 1, nil
		}
		if i >= len(s) || s[i] != ',' {
			return 0, p.fail(i, "Expecting ',' delimiter")
		}
		i = p.skipWS(i + 1)
	}
}
