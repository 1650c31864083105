package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/segmentio/asm/ascii"
)

// The reading half of the package: one scanner that makes the decisions of
// CPython's C JSON scanner in the same order, so the first error it finds
// is the one json.loads raises (3.12 messages), and that can build the
// decoded tree in the same pass. vLLM parses every body with json.loads,
// so its error text and positions are part of the wire format.
//
// Why not github.com/go-json-experiment/json's jsontext (measured on the
// 40 KB cold 9k render body, Go 1.26's encoding/json/jsontext behind
// GOEXPERIMENT=jsonv2, which is the same code; 2 shared cores, so ranges):
// validating alone, jsontext's ReadValue (52-61 µs) and Valid (65-97 µs)
// are alike; but walking its tokens with strings unquoted, which a tree
// needs before building any of it, took 204-223 µs and 206 allocations,
// against 154-253 µs and 27 allocations for Parse with the tree built.
// And its errors are not CPython's, so every error would need a second,
// exact pass, and it rejects duplicate names unless told otherwise.

// Kind is the JSON type of a Node.
type Kind uint8

// The JSON types.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Node is a decoded JSON value that keeps object key order, as a dict
// built by json.loads does. Raw, and strings without escapes, alias the
// parsed input.
type Node struct {
	Kind Kind
	B    bool   // a Bool's value
	S    string // a String's value, or a Number's literal
	Arr  []*Node
	Keys []string
	Vals []*Node
	// Raw is the value's JSON text within the input (nil for nodes built
	// by code rather than parsed).
	Raw []byte
	// Depth is the longest chain of nested values below this one in the
	// text (a value a repeated key replaced included): 0 for scalars and
	// empty containers.
	Depth int
}

// StringNode is a String node of s, built by code.
func StringNode(s string) *Node { return &Node{Kind: String, S: s} }

// NullNode is a shared null; do not modify it.
var NullNode = &Node{Kind: Null}

// Get returns an object's member.
func (n *Node) Get(key string) (*Node, bool) {
	if n == nil || n.Kind != Object {
		return nil, false
	}
	for i, k := range n.Keys {
		if k == key {
			return n.Vals[i], true
		}
	}
	return nil, false
}

// Set replaces a member in place or appends it, as dict assignment does.
func (n *Node) Set(key string, v *Node) {
	for i, k := range n.Keys {
		if k == key {
			n.Vals[i] = v
			return
		}
	}
	n.Keys = append(n.Keys, key)
	n.Vals = append(n.Vals, v)
}

// Del removes an object member.
func (n *Node) Del(key string) {
	for i, k := range n.Keys {
		if k == key {
			n.Keys = append(n.Keys[:i:i], n.Keys[i+1:]...)
			n.Vals = append(n.Vals[:i:i], n.Vals[i+1:]...)
			return
		}
	}
}

// IsNull reports an absent or null value.
func (n *Node) IsNull() bool { return n == nil || n.Kind == Null }

// Text returns a String node's value.
func (n *Node) Text() (string, bool) {
	if n == nil || n.Kind != String {
		return "", false
	}
	return n.S, true
}

// IsFloat reports a Number that json.loads makes a float.
func (n *Node) IsFloat() bool { return n.Kind == Number && strings.ContainsAny(n.S, ".eE") }

// SyntaxError is a document json.loads rejects: Msg is CPython's message
// ("Expecting value", "Expecting ',' delimiter", …) and Pos the offset in
// code points where its decoder stopped.
type SyntaxError struct {
	Pos  int
	Msg  string
	line int
	col  int
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s (char %d)", e.Msg, e.Pos) }

// PyString is str() of Python's JSONDecodeError.
func (e *SyntaxError) PyString() string {
	return fmt.Sprintf("%s: line %d column %d (char %d)", e.Msg, e.line, e.col, e.Pos)
}

// ErrTooDeep is a document nested deeper than CPython's recursion limit,
// where json.loads raises RecursionError instead of returning.
var ErrTooDeep = errors.New("JSON nested too deeply")

// MaxDepth approximates CPython's recursion limit.
const MaxDepth = 990

// Valid checks data as json.loads would (data must be UTF-8); the error is
// a *SyntaxError or ErrTooDeep. It allocates nothing on success.
func Valid(data []byte) error {
	p := parser{s: data}
	_, err := p.document()
	return p.err(err)
}

// Parse decodes data as json.loads would, checking it exactly as Valid
// does, in one pass. Object members with the same key keep the first
// key's position and the last value, as a Python dict does. Strings are
// decoded (invalid UTF-8 and lone surrogates become U+FFFD, which a Go
// string cannot otherwise hold). The tree aliases data (Raw fields, and
// strings without escapes), so data must not change while it is in use.
func Parse(data []byte) (*Node, error) {
	return parse(data, false)
}

// ParseUTF8 is Parse for data the caller has already found to be valid
// UTF-8 (a request body is checked as a whole first): strings are then
// not validated again one by one, which was a second pass over every
// prompt's non-ASCII text.
func ParseUTF8(data []byte) (*Node, error) {
	return parse(data, true)
}

func parse(data []byte, validUTF8 bool) (*Node, error) {
	p := parser{s: data, build: true, validUTF8: validUTF8}
	sc := scratchPool.Get().(*scratch)
	p.stack, p.kstk = sc.stack[:0], sc.kstk[:0]
	n, err := p.document()
	sc.keep(p.stack, p.kstk)
	scratchPool.Put(sc)
	if err != nil {
		return nil, p.err(err)
	}
	return n, nil
}

// scratch is the parser's working stacks, which no tree keeps (closing a
// container copies its children into a slab), so they are reused across
// documents rather than grown from nothing by every Parse.
type scratch struct {
	stack []*Node
	kstk  []string
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// keep takes the stacks back for the next document, cleared so that the
// pool holds on to no tree or input, unless they grew past what a request
// body needs.
func (sc *scratch) keep(stack []*Node, kstk []string) {
	const most = 4096
	sc.stack, sc.kstk = nil, nil
	if cap(stack) <= most {
		clear(stack[:cap(stack)])
		sc.stack = stack[:0]
	}
	if cap(kstk) <= most {
		clear(kstk[:cap(kstk)])
		sc.kstk = kstk[:0]
	}
}

type scanError struct {
	pos     int // byte offset
	msg     string
	tooDeep bool
}

func (p *parser) err(e *scanError) error {
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

// parser walks JSON text with the decisions of CPython's _json scanner; with
// build set it also makes the tree, from slabs so that a document of n
// values costs a handful of allocations rather than n.
type parser struct {
	s     []byte
	depth int
	build bool
	// validUTF8: s is known to be valid UTF-8, so is every string in it
	// (its quotes are ASCII, so they fall between characters).
	validUTF8 bool

	nodes []Node   // slab the nodes are cut from
	ptrs  []*Node  // slab of child lists
	keys  []string // slab of key lists
	text  []byte   // arena of decoded strings: chunks, each only appended to
	chunk int      // the size of the last chunk
	stack []*Node  // children of the open containers
	kstk  []string // keys of the open objects

	// at is the input offset the last node ended at, and made the items
	// of each slab kind handed out before the current slab: together the
	// density the next slab is sized by.
	at                            int
	nodesMade, ptrsMade, keysMade int
}

// slabCap is the capacity of a new slab of some kind once made items of
// it came from the input before offset p.at: what the rest of the input
// needs at that density and a quarter more, within [lo, hi]. A first slab
// (made 0) is lo, kept small by the callers for short documents, which are
// most of those parsed (tool arguments, schemas).
func (p *parser) slabCap(made, lo, hi int) int {
	est := 0
	if p.at > 0 {
		est = made * (len(p.s) - p.at) / p.at
	}
	return min(max(est+est/4, lo), hi)
}

func (p *parser) fail(pos int, msg string) *scanError { return &scanError{pos: pos, msg: msg} }

func (p *parser) node(k Kind, start, end int) *Node {
	p.at = end
	if len(p.nodes) == cap(p.nodes) {
		// A value takes at least two bytes of input in all but the
		// smallest documents, mostly far more.
		p.nodesMade += len(p.nodes)
		p.nodes = make([]Node, 0, p.slabCap(p.nodesMade, min(len(p.s)/8+1, 16), 4096))
	}
	p.nodes = p.nodes[:len(p.nodes)+1]
	n := &p.nodes[len(p.nodes)-1]
	n.Kind = k
	n.Raw = p.s[start:end:end]
	return n
}

// ptrList copies list into a slice of its own, capped so that appending
// to it never writes into a neighbour.
func (p *parser) ptrList(list []*Node) []*Node {
	if len(list) > cap(p.ptrs)-len(p.ptrs) {
		p.ptrsMade += len(p.ptrs)
		p.ptrs = make([]*Node, 0, max(len(list), p.slabCap(p.ptrsMade, min(len(p.s)/4+1, 64), 8192)))
	}
	a := len(p.ptrs)
	p.ptrs = append(p.ptrs, list...)
	return p.ptrs[a:len(p.ptrs):len(p.ptrs)]
}

func (p *parser) keyList(list []string) []string {
	if len(list) > cap(p.keys)-len(p.keys) {
		p.keysMade += len(p.keys)
		p.keys = make([]string, 0, max(len(list), p.slabCap(p.keysMade, min(len(p.s)/8+1, 32), 4096)))
	}
	a := len(p.keys)
	p.keys = append(p.keys, list...)
	return p.keys[a:len(p.keys):len(p.keys)]
}

// alias is b as a string without a copy: b is part of the input, which
// Parse's caller must not change while the tree is in use.
func alias(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// reserve makes room in the text arena for n bytes, the most a literal
// decodes to, so that the string is decoded into one chunk without moving
// it. The first chunk is smaller for a short document.
func (p *parser) reserve(n int) {
	if cap(p.text)-len(p.text) >= n {
		return
	}
	p.chunk = min(max(2*p.chunk, min(len(p.s)/4, 4<<10)), 64<<10)
	p.text = make([]byte, 0, max(n, p.chunk))
}

// intern turns the bytes decoded since from, at the end of the text arena,
// into a string without copying them. That is safe because the parser only
// ever appends to a chunk, within its capacity (reserve): bytes below its
// length are never written again.
func (p *parser) intern(from int) string {
	if len(p.text) == from {
		return ""
	}
	return unsafe.String(&p.text[from], len(p.text)-from)
}

func (p *parser) skipWS(i int) int {
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

func (p *parser) document() (*Node, *scanError) {
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
	litNull  = []byte("null")
	litTrue  = []byte("true")
	litFalse = []byte("false")
)

// value scans one JSON value at i and returns the offset after it. A
// position where no value starts is Python's StopIteration, which every
// caller turns into "Expecting value" at that position.
func (p *parser) value(i int) (*Node, int, *scanError) {
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
		if bytes.HasPrefix(p.s[i:], litNull) {
			return p.scalar(Null, i, i+4), i + 4, nil
		}
	case 't':
		if bytes.HasPrefix(p.s[i:], litTrue) {
			n := p.scalar(Bool, i, i+4)
			if n != nil {
				n.B = true
			}
			return n, i + 4, nil
		}
	case 'f':
		if bytes.HasPrefix(p.s[i:], litFalse) {
			return p.scalar(Bool, i, i+5), i + 5, nil
		}
	}
	end, err := p.number(i)
	if err != nil {
		return nil, 0, err
	}
	n := p.scalar(Number, i, end)
	if n != nil {
		n.S = alias(p.s[i:end])
	}
	return n, end, nil
}

func (p *parser) scalar(k Kind, start, end int) *Node {
	if !p.build {
		return nil
	}
	return p.node(k, start, end)
}

func (p *parser) strValue(i int) (*Node, int, *scanError) {
	end, info, err := p.str(i + 1)
	if err != nil {
		return nil, 0, err
	}
	if !p.build {
		return nil, end, nil
	}
	n := p.node(String, i, end)
	n.S = p.decode(i+1, end-1, info)
	return n, end, nil
}

func (p *parser) nested(i int, object bool) (*Node, int, *scanError) {
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

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *parser) number(start int) (int, *scanError) {
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
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	case s[i] == '0':
		i++
	default:
		return 0, p.fail(start, "Expecting value")
	}
	if i < len(s)-1 && s[i] == '.' && isDigit(s[i+1]) {
		i += 2
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s)-1 && (s[i] == 'e' || s[i] == 'E') {
		e := i
		i++
		if i < len(s)-1 && (s[i] == '-' || s[i] == '+') {
			i++
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if !isDigit(s[i-1]) {
			i = e // "1e" is the number 1 followed by junk
		}
	}
	return i, nil
}

// strInfo is what str learnt of a string literal's body, which tells
// decode whether the body can be used as it is.
type strInfo uint8

const (
	strEscaped  strInfo = 1 << iota // holds a backslash escape
	strNonASCII                     // holds bytes >= 0x80, which may not be UTF-8
)

// str scans a string whose opening quote is at i-1 and returns the offset
// after its closing quote and whether it holds escapes or bytes outside
// ASCII, found in the same pass: a body that is ASCII needs no UTF-8 check.
func (p *parser) str(i int) (int, strInfo, *scanError) {
	s, begin := p.s, i-1
	var info strInfo
	var high uint64 // the bytes skipped, or-ed: their top bits
	for {
		// Plain bytes one at a time, and after eight in a row the rest of
		// the run by words: keys, short values and the text between dense
		// escapes (code, JSON held in a string) end sooner, where word
		// tests would not pay.
		for run := 0; i < len(s); {
			c := s[i]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			high |= uint64(c)
			i++
			if run++; run == 8 {
				var h uint64
				i, h = skipPlain(s, i)
				high |= h
				run = 0
			}
		}
		if i >= len(s) {
			return 0, 0, p.fail(begin, "Unterminated string starting at")
		}
		switch c := s[i]; {
		case c == '"':
			if high&msb != 0 {
				info |= strNonASCII
			}
			return i + 1, info, nil
		case c == '\\':
		case c <= 0x1f:
			return 0, 0, p.fail(i, "Invalid control character at")
		}
		info |= strEscaped
		i++ // the backslash
		if i >= len(s) {
			return 0, 0, p.fail(begin, "Unterminated string starting at")
		}
		if s[i] != 'u' {
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
				continue
			}
			return 0, 0, p.fail(i-1, "Invalid \\escape")
		}
		u := i
		i++
		if i+4 >= len(s) {
			return 0, 0, p.fail(u, "Invalid \\uXXXX escape")
		}
		c, ok := hex4(s[i : i+4])
		if !ok {
			return 0, 0, p.fail(u, "Invalid \\uXXXX escape")
		}
		i += 4
		// A high surrogate may pair with a following \uXXXX; CPython checks
		// that escape's digits too.
		if c >= 0xD800 && c <= 0xDBFF && i+6 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
			c2, ok := hex4(s[i+2 : i+6])
			if !ok {
				return 0, 0, p.fail(i+1, "Invalid \\uXXXX escape")
			}
			if c2 >= 0xDC00 && c2 <= 0xDFFF {
				i += 6
			}
		}
	}
}

// Word-at-a-time tests on eight bytes loaded little-endian, so the lowest
// flagged byte is the first in the text. The borrow of a subtraction only
// runs upward from a byte that is flagged, so that lowest flag is exact;
// bytes above it may be flagged falsely, which no caller looks at.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// stringStops flags (high bit) each byte of w that ends a run of plain
// string bytes: '"', '\\' or a control character below 0x20.
func stringStops(w uint64) uint64 {
	q := w ^ (lsb * '"')
	b := w ^ (lsb * '\\')
	return ((w-lsb*0x20)&^w | (q-lsb)&^q | (b-lsb)&^b) & msb
}

// skipPlain returns the offset of the first byte at or after i that is
// '"', '\\' or below 0x20 (near the end of s it may stop early, leaving
// the rest to a byte loop), and the bytes it skipped or-ed together. It
// checks eight bytes at a time; a run that goes on past swarBytes (a data
// URL is megabytes of one string) is then skipped by vectorized passes
// over windows that double as the run grows (each at most four times the
// run before it), so text with a stop every few hundred bytes is not
// scanned far past its stops.
func skipPlain(s []byte, i int) (int, uint64) {
	end := min(i+swarBytes, len(s))
	i, high := skipWords(s[:end], i)
	if i < end || end == len(s) {
		return i, high
	}
	return skipLong(s, i, high)
}

// swarBytes is how far skipPlain scans by words before it takes windows.
const swarBytes = 64

// skipLong is skipPlain past the first swarBytes of a run. Each window is
// searched for its first quote and first backslash (bytes.IndexByte), and
// the bytes before them checked to be printable ASCII (0x20-0x7e, which
// holds no stop and no high bit) in one pass each; a window that is not
// (text outside ASCII, DEL, a control character) is scanned by words.
func skipLong(s []byte, i int, high uint64) (int, uint64) {
	for size := 4 * swarBytes; i < len(s); size = min(2*size, maxWindow) {
		w := s[i:min(i+size, len(s))]
		stop := false
		if q := bytes.IndexByte(w, '"'); q >= 0 {
			w, stop = w[:q], true
		}
		if b := bytes.IndexByte(w, '\\'); b >= 0 {
			w, stop = w[:b], true
		}
		if !ascii.ValidPrint(w) {
			j, h := skipWords(w, 0)
			if j < len(w) {
				// A stop inside w, or a tail shorter than a word: the
				// byte loop goes on from there.
				return i + j, high | h
			}
			high |= h
		}
		i += len(w)
		if stop {
			return i, high
		}
	}
	return i, high
}

// maxWindow bounds skipLong's windows: large enough that each pass's call
// costs nothing beside its bytes, small enough to stay in the L1 cache
// for the passes after the first.
const maxWindow = 16 << 10

// skipWords is skipPlain by words alone, to the end of s.
func skipWords(s []byte, i int) (int, uint64) {
	var high uint64
	for i+8 <= len(s) {
		w := binary.LittleEndian.Uint64(s[i:])
		if m := stringStops(w); m != 0 {
			// The bits below the first stop's top bit: the bytes before it.
			return i + bits.TrailingZeros64(m)>>3, high | w&(m&-m-1)
		}
		high |= w
		i += 8
	}
	return i, high
}

func hex4(b []byte) (rune, bool) {
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
// str has already checked and described in info.
func (p *parser) decode(start, end int, info strInfo) string {
	raw := p.s[start:end]
	if info == 0 || info == strNonASCII && (p.validUTF8 || utf8.Valid(raw)) {
		return alias(raw)
	}
	// Escapes only shorten text; each invalid byte becomes three, U+FFFD.
	if info&strNonASCII == 0 {
		p.reserve(len(raw))
	} else {
		p.reserve(3 * len(raw))
	}
	from := len(p.text)
	if info&strEscaped == 0 {
		p.text = appendValidUTF8(p.text, raw)
		return p.intern(from)
	}
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			j := bytes.IndexByte(raw[i:], '\\')
			if j < 0 {
				j = len(raw)
			} else {
				j += i
			}
			if info&strNonASCII == 0 || p.validUTF8 || utf8.Valid(raw[i:j]) {
				p.text = append(p.text, raw[i:j]...)
			} else {
				p.text = appendValidUTF8(p.text, raw[i:j])
			}
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
			r, _ := hex4(raw[i : i+4])
			i += 4
			if utf16.IsSurrogate(r) {
				d := utf8.RuneError
				if r < 0xDC00 && i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					if r2, ok := hex4(raw[i+2 : i+6]); ok {
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

// appendValidUTF8 appends b with each invalid byte as U+FFFD, as
// encoding/json does (and as AppendString writes such bytes).
func appendValidUTF8(dst, b []byte) []byte {
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
func (p *parser) object(open int) (*Node, int, *scanError) {
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
		end, info, err := p.str(i + 1)
		if err != nil {
			return nil, 0, err
		}
		if p.build {
			p.kstk = append(p.kstk, p.decode(kstart+1, end-1, info))
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

func (p *parser) closeObject(open, end, base, kbase, depth int) *Node {
	if !p.build {
		return nil
	}
	n := p.node(Object, open, end)
	n.Depth = depth
	keys, vals := p.kstk[kbase:], p.stack[base:]
	if hasDuplicate(keys) {
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

func hasDuplicate(keys []string) bool {
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
func (p *parser) array(open int) (*Node, int, *scanError) {
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

func (p *parser) closeArray(open, end, base, depth int) *Node {
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

// MarshalJSON writes n as AppendNode does, so a typed value holding a
// tree still marshals as the JSON it was decoded from.
func (n *Node) MarshalJSON() ([]byte, error) { return AppendNode(nil, n), nil }

// AppendNode appends n as JSON text: a parsed node's own text, a node
// built by code (or holding one) compactly, as json.dumps with
// separators=(",", ":") and ensure_ascii=False writes it.
func AppendNode(dst []byte, n *Node) []byte {
	if n.Raw != nil {
		return append(dst, n.Raw...)
	}
	switch n.Kind {
	case Bool:
		return AppendBool(dst, n.B)
	case Number:
		return append(dst, n.S...)
	case String:
		return AppendString(dst, n.S)
	case Array:
		dst = append(dst, '[')
		for i, v := range n.Arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendNode(dst, v)
		}
		return append(dst, ']')
	case Object:
		dst = append(dst, '{')
		for i, k := range n.Keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(AppendString(dst, k), ':')
			dst = AppendNode(dst, n.Vals[i])
		}
		return append(dst, '}')
	}
	return append(dst, "null"...)
}
