package wire

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Reader reads one JSON document in place, value by value, for decoders
// of a known shape that would spend more building Parse's tree than
// reading what they need: an engine's per-token stream events, the
// vocabulary of a tokenizer.json. It runs Parse's scanner, so every value
// it reads is accepted or rejected as json.loads would, and a syntax error
// is the *SyntaxError json.loads raises at that point of the text. Where
// the text is valid JSON but not what the caller asked for (a number
// where a string belongs), the error is a *ValueError.
//
// Strings are decoded as Parse decodes them and alias either the input
// (no escapes) or an arena the Reader only ever appends to: they stay
// valid while the input does, across Reset too; copy one
// (strings.Clone) to keep it longer.
type Reader struct {
	p parser
	i int
}

// NewReader returns a Reader at the start of data.
func NewReader(data []byte) *Reader {
	r := new(Reader)
	r.Reset(data)
	return r
}

// Reset starts reading data, keeping the arena for escaped strings.
func (r *Reader) Reset(data []byte) {
	r.p.s, r.p.depth, r.i = data, 0, 0
}

// ValueError is valid JSON that is not the value the reader was asked
// for; Pos is in code points, as a SyntaxError's.
type ValueError struct {
	Pos int
	Msg string
}

func (e *ValueError) Error() string { return fmt.Sprintf("%s (char %d)", e.Msg, e.Pos) }

// Kind returns the type of the value at the reader's position (after
// whitespace) from its first byte, without checking the value; false
// where no value can start.
func (r *Reader) Kind() (Kind, bool) {
	r.ws()
	if r.i >= len(r.p.s) {
		return 0, false
	}
	switch c := r.p.s[r.i]; {
	case c == '"':
		return String, true
	case c == '{':
		return Object, true
	case c == '[':
		return Array, true
	case c == 'n':
		return Null, true
	case c == 't' || c == 'f':
		return Bool, true
	case c == '-' || isDigit(c):
		return Number, true
	}
	return 0, false
}

// Null reads a null if one is next and reports whether it did.
func (r *Reader) Null() bool {
	r.ws()
	if len(r.p.s)-r.i >= 4 && string(r.p.s[r.i:r.i+4]) == "null" {
		r.i += 4
		return true
	}
	return false
}

// Bool reads true or false.
func (r *Reader) Bool() (bool, error) {
	r.ws()
	s := r.p.s[r.i:]
	switch {
	case len(s) >= 4 && string(s[:4]) == "true":
		r.i += 4
		return true, nil
	case len(s) >= 5 && string(s[:5]) == "false":
		r.i += 5
		return false, nil
	}
	return false, r.mismatch("Expecting a boolean")
}

// String reads a string.
func (r *Reader) String() (string, error) {
	r.ws()
	if r.i >= len(r.p.s) || r.p.s[r.i] != '"' {
		return "", r.mismatch("Expecting a string")
	}
	return r.str()
}

// str reads the string whose opening quote is at the reader's position.
func (r *Reader) str() (string, error) {
	// Keys, ids and vocabulary tokens are short and hold no escapes: take
	// them in one loop (checking UTF-8 only when a byte is not ASCII), and
	// leave escapes and errors to the scanner.
	s := r.p.s
	var seen byte // the classes of the bytes before the quote
	for j := r.i + 1; j < len(s); j++ {
		c := strClass[s[j]]
		if c == strQuote {
			body := s[r.i+1 : j]
			if seen&strStop != 0 || (seen&strHigh != 0 && !utf8.Valid(body)) {
				break
			}
			r.i = j + 1
			return alias(body), nil
		}
		seen |= c
	}
	end, escaped, err := r.p.str(r.i + 1)
	if err != nil {
		return "", r.p.err(err)
	}
	str := r.p.decode(r.i+1, end-1, escaped)
	r.i = end
	return str, nil
}

// Number reads a number and returns its literal, which aliases the input.
func (r *Reader) Number() (string, error) {
	r.ws()
	if r.i >= len(r.p.s) || (r.p.s[r.i] != '-' && !isDigit(r.p.s[r.i])) {
		return "", r.mismatch("Expecting a number")
	}
	end, err := r.p.number(r.i)
	if err != nil {
		return "", r.p.err(err)
	}
	lit := alias(r.p.s[r.i:end])
	r.i = end
	return lit, nil
}

// Int reads a number written as an integer (no fraction, no exponent)
// that fits an int: what encoding/json decodes into an int.
func (r *Reader) Int() (int, error) {
	// Token ids and counts: up to 9 digits with nothing that could
	// continue the number after them, read in one loop.
	r.ws()
	s, i := r.p.s, r.i
	if i < len(s) && s[i] == '-' {
		i++
	}
	j, n := i, 0
	for j < len(s) && j-i < 9 && isDigit(s[j]) {
		n = n*10 + int(s[j]-'0')
		j++
	}
	if j > i && (s[i] != '0' || j == i+1) && (j == len(s) || !continuesNumber(s[j])) {
		if i > r.i {
			n = -n
		}
		r.i = j
		return n, nil
	}
	start := r.i
	lit, err := r.Number()
	if err != nil {
		return 0, err
	}
	digits := lit
	if digits[0] == '-' {
		digits = digits[1:]
	}
	n = 0
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if !isDigit(c) {
			return 0, r.valueError(start, "Expecting an integer")
		}
		n = n*10 + int(c-'0')
	}
	if len(digits) > 9 { // may not fit: let strconv decide
		n64, err := strconv.ParseInt(lit, 10, strconv.IntSize)
		if err != nil {
			return 0, r.valueError(start, "Integer out of range")
		}
		return int(n64), nil
	}
	if len(digits) < len(lit) {
		n = -n
	}
	return n, nil
}

// Raw reads one value of any type and returns its text, which aliases the
// input.
func (r *Reader) Raw() ([]byte, error) {
	r.ws()
	start := r.i
	_, end, err := r.p.value(r.i)
	if err != nil {
		return nil, r.p.err(err)
	}
	r.i = end
	return r.p.s[start:end:end], nil
}

// Skip reads one value of any type.
func (r *Reader) Skip() error {
	if r.Null() { // the usual value of a member nobody reads
		return nil
	}
	_, err := r.Raw()
	return err
}

// Object reads an object, calling member with each key (decoded, in text
// order, repeats included) with the reader at the member's value: member
// reads the value with the reader's methods, or reads nothing and the
// value is skipped. An error from member is returned as it is.
func (r *Reader) Object(member func(key string) error) error {
	r.ws()
	s := r.p.s
	if r.i >= len(s) || s[r.i] != '{' {
		return r.mismatch("Expecting an object")
	}
	open := r.i
	if r.p.depth++; r.p.depth > MaxDepth {
		return r.p.err(&scanError{pos: open + 1, tooDeep: true})
	}
	i := skipSpace(r.p.s, open+1)
	if i < len(s) && s[i] == '}' {
		r.i = i + 1
		r.p.depth--
		return nil
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return r.p.err(r.p.fail(i, "Expecting property name enclosed in double quotes"))
		}
		r.i = i
		key, err := r.str()
		if err != nil {
			return err
		}
		i = skipSpace(r.p.s, r.i)
		if i >= len(s) || s[i] != ':' {
			return r.p.err(r.p.fail(i, "Expecting ':' delimiter"))
		}
		r.i = skipSpace(r.p.s, i+1)
		at := r.i
		if err := member(key); err != nil {
			return err
		}
		if r.i == at {
			if err := r.Skip(); err != nil {
				return err
			}
		}
		i = skipSpace(r.p.s, r.i)
		if i < len(s) && s[i] == '}' {
			r.i = i + 1
			r.p.depth--
			return nil
		}
		if i >= len(s) || s[i] != ',' {
			return r.p.err(r.p.fail(i, "Expecting ',' delimiter"))
		}
		i = skipSpace(r.p.s, i+1)
	}
}

// Array reads an array, calling item with the reader at each item: item
// reads it with the reader's methods, or reads nothing and it is skipped.
// An error from item is returned as it is.
func (r *Reader) Array(item func() error) error {
	r.ws()
	s := r.p.s
	if r.i >= len(s) || s[r.i] != '[' {
		return r.mismatch("Expecting an array")
	}
	open := r.i
	if r.p.depth++; r.p.depth > MaxDepth {
		return r.p.err(&scanError{pos: open + 1, tooDeep: true})
	}
	r.i = skipSpace(r.p.s, open+1)
	if r.i < len(s) && s[r.i] == ']' {
		r.i++
		r.p.depth--
		return nil
	}
	for {
		at := r.i
		if err := item(); err != nil {
			return err
		}
		if r.i == at {
			if err := r.Skip(); err != nil {
				return err
			}
		}
		i := skipSpace(r.p.s, r.i)
		if i < len(s) && s[i] == ']' {
			r.i = i + 1
			r.p.depth--
			return nil
		}
		if i >= len(s) || s[i] != ',' {
			return r.p.err(r.p.fail(i, "Expecting ',' delimiter"))
		}
		r.i = skipSpace(r.p.s, i+1)
	}
}

// End checks that nothing but whitespace follows the values read.
func (r *Reader) End() error {
	r.ws()
	if r.i != len(r.p.s) {
		return r.p.err(r.p.fail(r.i, "Extra data"))
	}
	return nil
}

func (r *Reader) ws() { r.i = skipSpace(r.p.s, r.i) }

// skipSpace returns the offset of the first byte at or after i that is not
// JSON whitespace. Pretty-printed files (tokenizer.json) indent every
// line, so this loop is a good part of reading them: a table lookup per
// byte beats the comparisons.
func skipSpace(s []byte, i int) int {
	for i < len(s) && jsonSpace[s[i]] {
		i++
	}
	return i
}

// strClass sorts the bytes of a string literal for Reader.str: plain ASCII
// (0), the closing quote, bytes that need the scanner (controls and the
// backslash), and bytes of multi-byte characters.
var strClass = func() (t [256]byte) {
	for c := range 0x20 {
		t[c] = strStop
	}
	t['\\'] = strStop
	t['"'] = strQuote
	for c := utf8.RuneSelf; c < 256; c++ {
		t[c] = strHigh
	}
	return t
}()

const (
	strQuote = 1 << iota
	strStop
	strHigh
)

var jsonSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// mismatch is the error for a value of the wrong type at the reader's
// position: the syntax error when no valid value starts there (as
// json.loads would report it), else a ValueError.
func (r *Reader) mismatch(msg string) error {
	p := parser{s: r.p.s, depth: r.p.depth}
	if _, _, err := p.value(r.i); err != nil {
		return p.err(err)
	}
	return r.valueError(r.i, msg)
}

func (r *Reader) valueError(at int, msg string) error {
	for at < len(r.p.s) && isWS(r.p.s[at]) {
		at++
	}
	return &ValueError{Pos: utf8.RuneCount(r.p.s[:at]), Msg: msg}
}

func continuesNumber(c byte) bool { return isDigit(c) || c == '.' || c == 'e' || c == 'E' }

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
