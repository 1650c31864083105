package wire

// The reference: Parse, Valid, AppendString, AppendStringASCII and
// AppendInts as they were before their fast paths (commit 4411b70), copied
// verbatim with a ref prefix. The differential tests and fuzz targets hold the current
// functions to these, byte for byte and error for error.

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// refValid checks data as json.loads would (data must be UTF-8); the error is
// a *SyntaxError or ErrTooDeep. It allocates nothing on success.
func refValid(data []byte) error {
	p := refParser{s: data}
	_, err := p.document()
	return p.err(err)
}

// refParse decodes data as json.loads would, checking it exactly as refValid
// does, in one pass. Object members with the same key keep the first
// key's position and the last value, as a Python dict does. Strings are
// decoded (invalid UTF-8 and lone surrogates become U+FFFD, which a Go
// string cannot otherwise hold). The tree aliases data (Raw fields, and
// strings without escapes), so data must not change while it is in use.
func refParse(data []byte) (*Node, error) {
	p := refParser{s: data, build: true}
	n, err := p.document()
	if err != nil {
		return nil, p.err(err)
	}
	return n, nil
}

func (p *refParser) err(e *scanError) error {
	if e == nil {
		return nil
	}
	if e.tooDeep {
		return ErrTooDeep
	}
	before := p.s[:e.pos]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return &SyntaxError{Pos: utf8.RuneCount(before), Msg: e.msg, line: line, col: col}
}

// refParser walks JSON text with the decisions of CPython's _json scanner; with
// build set it also makes the tree, from slabs so that a document of n
// values costs a handful of allocations rather than n.
type refParser struct {
	s     []byte
	depth int
	build bool

	nodes []Node   // slab the nodes are cut from
	ptrs  []*Node  // slab of child lists
	keys  []string // slab of key lists
	text  []byte   // arena of decoded strings: chunks, each only appended to
	chunk int      // the size of the last chunk
	stack []*Node  // children of the open containers
	kstk  []string // keys of the open objects
}

func (p *refParser) fail(pos int, msg string) *scanError { return &scanError{pos: pos, msg: msg} }

func (p *refParser) node(k Kind, start, end int) *Node {
	if len(p.nodes) == cap(p.nodes) {
		p.nodes = make([]Node, 0, min(max(2*cap(p.nodes), 16), 4096))
	}
	p.nodes = p.nodes[:len(p.nodes)+1]
	n := &p.nodes[len(p.nodes)-1]
	n.Kind = k
	n.Raw = p.s[start:end:end]
	return n
}

// ptrList copies list into a slice of its own, capped so that appending
// to it never writes into a neighbour.
func (p *refParser) ptrList(list []*Node) []*Node {
	if len(list) > cap(p.ptrs)-len(p.ptrs) {
		p.ptrs = make([]*Node, 0, max(len(list), min(max(2*cap(p.ptrs), 64), 8192)))
	}
	a := len(p.ptrs)
	p.ptrs = append(p.ptrs, list...)
	return p.ptrs[a:len(p.ptrs):len(p.ptrs)]
}

func (p *refParser) keyList(list []string) []string {
	if len(list) > cap(p.keys)-len(p.keys) {
		p.keys = make([]string, 0, max(len(list), min(max(2*cap(p.keys), 32), 4096)))
	}
	a := len(p.keys)
	p.keys = append(p.keys, list...)
	return p.keys[a:len(p.keys):len(p.keys)]
}

// refAlias is b as a string without a copy: b is part of the input, which
// refParse's caller must not change while the tree is in use.
func refAlias(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// reserve makes room in the text arena for the decoded form of an n-byte
// literal (at most 3n bytes: U+FFFD for each invalid byte), so that the
// string is decoded into one chunk without moving it.
func (p *refParser) reserve(n int) {
	if cap(p.text)-len(p.text) >= 3*n {
		return
	}
	p.chunk = min(max(2*p.chunk, 4<<10), 64<<10)
	p.text = make([]byte, 0, max(3*n, p.chunk))
}

// intern turns the bytes decoded since from, at the end of the text arena,
// into a string without copying them. That is safe because the refParser only
// ever appends to a chunk, within its capacity (reserve): bytes below its
// length are never written again.
func (p *refParser) intern(from int) string {
	if len(p.text) == from {
		return ""
	}
	return unsafe.String(&p.text[from], len(p.text)-from)
}

func (p *refParser) skipWS(i int) int {
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

func (p *refParser) document() (*Node, *scanError) {
	n, i, err := p.value(p.skipWS(0))
	if err != nil {
		return nil, err
	}
	if i = p.skipWS(i); i != len(p.s) {
		return nil, p.fail(i, "Extra data")
	}
	return n, nil
}

var (
	refLitNull  = []byte("null")
	refLitTrue  = []byte("true")
	refLitFalse = []byte("false")
)

// value scans one JSON value at i and returns the offset after it. A
// position where no value starts is Python's StopIteration, which every
// caller turns into "Expecting value" at that position.
func (p *refParser) value(i int) (*Node, int, *scanError) {
	if i >= len(p.s) {
		return nil, 0, p.fail(i, "Expecting value")
	}
	switch p.s[i] {
	case '"':
		return p.strValue(i)
	case '{':
		return p.nested(i, true)
	case '[':
		return p.nested(i, false)
	case 'n':
		if bytes.HasPrefix(p.s[i:], refLitNull) {
			return p.scalar(Null, i, i+4), i + 4, nil
		}
	case 't':
		if bytes.HasPrefix(p.s[i:], refLitTrue) {
			n := p.scalar(Bool, i, i+4)
			if n != nil {
				n.B = true
			}
			return n, i + 4, nil
		}
	case 'f':
		if bytes.HasPrefix(p.s[i:], refLitFalse) {
			return p.scalar(Bool, i, i+5), i + 5, nil
		}
	}
	end, err := p.number(i)
	if err != nil {
		return nil, 0, err
	}
	n := p.scalar(Number, i, end)
	if n != nil {
		n.S = refAlias(p.s[i:end])
	}
	return n, end, nil
}

func (p *refParser) scalar(k Kind, start, end int) *Node {
	if !p.build {
		return nil
	}
	return p.node(k, start, end)
}

func (p *refParser) strValue(i int) (*Node, int, *scanError) {
	end, escaped, err := p.str(i + 1)
	if err != nil {
		return nil, 0, err
	}
	if !p.build {
		return nil, end, nil
	}
	n := p.node(String, i, end)
	n.S = p.decode(i+1, end-1, escaped)
	return n, end, nil
}

func (p *refParser) nested(i int, object bool) (*Node, int, *scanError) {
	p.depth++
	if p.depth > MaxDepth {
		return nil, 0, &scanError{pos: i + 1, tooDeep: true}
	}
	var n *Node
	var end int
	var err *scanError
	if object {
		n, end, err = p.object(i)
	} else {
		n, end, err = p.array(i)
	}
	p.depth--
	return n, end, err
}

func refIsDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *refParser) number(start int) (int, *scanError) {
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
		for i < len(s) && refIsDigit(s[i]) {
			i++
		}
	case s[i] == '0':
		i++
	default:
		return 0, p.fail(start, "Expecting value")
	}
	if i < len(s)-1 && s[i] == '.' && refIsDigit(s[i+1]) {
		i += 2
		for i < len(s) && refIsDigit(s[i]) {
			i++
		}
	}
	if i < len(s)-1 && (s[i] == 'e' || s[i] == 'E') {
		e := i
		i++
		if i < len(s)-1 && (s[i] == '-' || s[i] == '+') {
			i++
		}
		for i < len(s) && refIsDigit(s[i]) {
			i++
		}
		if !refIsDigit(s[i-1]) {
			i = e // "1e" is the number 1 followed by junk
		}
	}
	return i, nil
}

// str scans a string whose opening quote is at i-1 and returns the offset
// after its closing quote and whether it holds escapes.
func (p *refParser) str(i int) (int, bool, *scanError) {
	s, begin := p.s, i-1
	escaped := false
	for {
		for i < len(s) && s[i] != '"' && s[i] != '\\' {
			if s[i] <= 0x1f {
				return 0, false, p.fail(i, "Invalid control character at")
			}
			i++
		}
		if i >= len(s) {
			return 0, false, p.fail(begin, "Unterminated string starting at")
		}
		if s[i] == '"' {
			return i + 1, escaped, nil
		}
		escaped = true
		i++ // the backslash
		if i >= len(s) {
			return 0, false, p.fail(begin, "Unterminated string starting at")
		}
		if s[i] != 'u' {
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
				continue
			}
			return 0, false, p.fail(i-1, "Invalid \\escape")
		}
		u := i
		i++
		if i+4 >= len(s) {
			return 0, false, p.fail(u, "Invalid \\uXXXX escape")
		}
		c, ok := refHex4(s[i : i+4])
		if !ok {
			return 0, false, p.fail(u, "Invalid \\uXXXX escape")
		}
		i += 4
		// A high surrogate may pair with a following \uXXXX; CPython checks
		// that escape's digits too.
		if c >= 0xD800 && c <= 0xDBFF && i+6 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
			c2, ok := refHex4(s[i+2 : i+6])
			if !ok {
				return 0, false, p.fail(i+1, "Invalid \\uXXXX escape")
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

// decode returns the text of the string literal body s[start:end], which
// str has already checked.
func (p *refParser) decode(start, end int, escaped bool) string {
	raw := p.s[start:end]
	if !escaped && utf8.Valid(raw) {
		return refAlias(raw)
	}
	p.reserve(len(raw))
	from := len(p.text)
	if !escaped {
		p.text = refAppendValidUTF8(p.text, raw)
		return p.intern(from)
	}
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			j := i + 1
			for j < len(raw) && raw[j] != '\\' {
				j++
			}
			p.text = refAppendValidUTF8(p.text, raw[i:j])
			i = j
			continue
		}
		e := raw[i+1]
		i += 2
		switch e {
		case 'b':
			p.text = append(p.text, '\b')
		case 'f':
			p.text = append(p.text, '\f')
		case 'n':
			p.text = append(p.text, '\n')
		case 'r':
			p.text = append(p.text, '\r')
		case 't':
			p.text = append(p.text, '\t')
		case 'u':
			r, _ := refHex4(raw[i : i+4])
			i += 4
			if utf16.IsSurrogate(r) {
				d := utf8.RuneError
				if r < 0xDC00 && i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					if r2, ok := refHex4(raw[i+2 : i+6]); ok {
						if dr := utf16.DecodeRune(r, r2); dr != utf8.RuneError {
							d = dr
							i += 6
						}
					}
				}
				r = d
			}
			p.text = append(p.text, buf[:utf8.EncodeRune(buf[:], r)]...)
		default: // '"', '\\', '/'
			p.text = append(p.text, e)
		}
	}
	return p.intern(from)
}

// refAppendValidUTF8 appends b with each invalid byte as U+FFFD, as
// encoding/json does (and as refAppendString writes such bytes).
func refAppendValidUTF8(dst, b []byte) []byte {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, b[:size]...)
		}
		b = b[size:]
	}
	return dst
}

// object scans members after the opening brace at i.
func (p *refParser) object(open int) (*Node, int, *scanError) {
	s := p.s
	i := p.skipWS(open + 1)
	base, kbase := len(p.stack), len(p.kstk)
	depth := 0
	if i < len(s) && s[i] == '}' {
		return p.closeObject(open, i+1, base, kbase, depth), i + 1, nil
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return nil, 0, p.fail(i, "Expecting property name enclosed in double quotes")
		}
		kstart := i
		end, escaped, err := p.str(i + 1)
		if err != nil {
			return nil, 0, err
		}
		if p.build {
			p.kstk = append(p.kstk, p.decode(kstart+1, end-1, escaped))
		}
		i = p.skipWS(end)
		if i >= len(s) || s[i] != ':' {
			return nil, 0, p.fail(i, "Expecting ':' delimiter")
		}
		i = p.skipWS(i + 1)
		var v *Node
		if v, i, err = p.value(i); err != nil {
			return nil, 0, err
		}
		if p.build {
			p.stack = append(p.stack, v)
			depth = max(depth, v.Depth+1)
		}
		i = p.skipWS(i)
		if i < len(s) && s[i] == '}' {
			return p.closeObject(open, i+1, base, kbase, depth), i + 1, nil
		}
		if i >= len(s) || s[i] != ',' {
			return nil, 0, p.fail(i, "Expecting ',' delimiter")
		}
		i = p.skipWS(i + 1)
	}
}

func (p *refParser) closeObject(open, end, base, kbase, depth int) *Node {
	if !p.build {
		return nil
	}
	n := p.node(Object, open, end)
	n.Depth = depth
	keys, vals := p.kstk[kbase:], p.stack[base:]
	if refHasDuplicate(keys) {
		// Python's dict: the first position, the last value.
		d := &Node{}
		for k, key := range keys {
			d.Set(key, vals[k])
		}
		keys, vals = d.Keys, d.Vals
	}
	n.Keys = p.keyList(keys)
	n.Vals = p.ptrList(vals)
	p.kstk, p.stack = p.kstk[:kbase], p.stack[:base]
	return n
}

func refHasDuplicate(keys []string) bool {
	if len(keys) <= 16 {
		for i := 1; i < len(keys); i++ {
			for _, k := range keys[:i] {
				if k == keys[i] {
					return true
				}
			}
		}
		return false
	}
	seen := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		if _, ok := seen[k]; ok {
			return true
		}
		seen[k] = struct{}{}
	}
	return false
}

// array scans items after the opening bracket at open.
func (p *refParser) array(open int) (*Node, int, *scanError) {
	s := p.s
	i := p.skipWS(open + 1)
	base := len(p.stack)
	depth := 0
	if i < len(s) && s[i] == ']' {
		return p.closeArray(open, i+1, base, depth), i + 1, nil
	}
	for {
		var v *Node
		var err *scanError
		if v, i, err = p.value(i); err != nil {
			return nil, 0, err
		}
		if p.build {
			p.stack = append(p.stack, v)
			depth = max(depth, v.Depth+1)
		}
		i = p.skipWS(i)
		if i < len(s) && s[i] == ']' {
			return p.closeArray(open, i+1, base, depth), i + 1, nil
		}
		if i >= len(s) || s[i] != ',' {
			return nil, 0, p.fail(i, "Expecting ',' delimiter")
		}
		i = p.skipWS(i + 1)
	}
}

func (p *refParser) closeArray(open, end, base, depth int) *Node {
	if !p.build {
		return nil
	}
	n := p.node(Array, open, end)
	n.Depth = depth
	n.Arr = p.ptrList(p.stack[base:])
	if n.Arr == nil {
		n.Arr = []*Node{}
	}
	p.stack = p.stack[:base]
	return n
}

// refPlain[c] is true for the ASCII bytes a JSON string holds unescaped.
var refPlain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// refAppendString appends s as json.dumps(s, ensure_ascii=False) writes it:
// UTF-8 (U+2028 and U+2029 included) kept raw, '"', '\\' and the control
// characters escaped, \n \r \t \b \f by name, others as \u00XX. A Python
// str cannot hold bytes that are not UTF-8; each such byte is written as
// U+FFFD, as a lossy decode would have made it.
func refAppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if refPlain[c] {
				i++
				continue
			}
			dst = refAppendEscape(append(dst, s[start:i]...), c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// refAppendEscape appends the escape of the ASCII byte c that json.dumps
// writes.
func refAppendEscape(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// refAppendInts appends ids as a JSON list.
func refAppendInts(dst []byte, ids []int) []byte {
	dst = append(dst, '[')
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, int64(id), 10)
	}
	return append(dst, ']')
}

func refAppendStringASCII(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && r != 0x7f && refPlain[r]:
			dst = append(dst, byte(r))
		case r < utf8.RuneSelf && r != 0x7f:
			dst = refAppendEscape(dst, byte(r))
		case r >= 0x10000:
			r -= 0x10000
			dst = appendU4(dst, 0xd800+(r>>10))
			dst = appendU4(dst, 0xdc00+(r&0x3ff))
		default:
			dst = appendU4(dst, r)
		}
	}
	return append(dst, '"')
}
