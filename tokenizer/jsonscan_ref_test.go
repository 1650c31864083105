package tokenizer

import (
	"bytes"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// refJSONScanner is the scanner tokenizer.json was read with before
// internal/wire's Reader, kept as the reference of the differential tests.
// It reads the two large parts of a tokenizer.json (the vocabulary
// object and the merges array) directly from bytes: encoding/json spends
// most of a load building maps of interfaces or reflecting per element.
type refJSONScanner struct {
	b   []byte
	pos int
	buf []byte
}

func (s *refJSONScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", s.pos, fmt.Sprintf(format, args...))
}

func (s *refJSONScanner) skipSpace() {
	for s.pos < len(s.b) && refJSONSpace[s.b[s.pos]] {
		s.pos++
	}
}

var refJSONSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

func (s *refJSONScanner) expect(c byte) error {
	s.skipSpace()
	if s.pos >= len(s.b) || s.b[s.pos] != c {
		return s.errorf("expected %q", c)
	}
	s.pos++
	return nil
}

// peek returns the next non-space byte, or 0 at the end.
func (s *refJSONScanner) peek() byte {
	s.skipSpace()
	if s.pos >= len(s.b) {
		return 0
	}
	return s.b[s.pos]
}

// str reads a JSON string. The result aliases an internal buffer when the
// string has escapes, so callers must copy it before the next call.
func (s *refJSONScanner) str() ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return nil, err
	}
	start := s.pos
	for s.pos < len(s.b) {
		c := s.b[s.pos]
		if c == '"' {
			out := s.b[start:s.pos]
			s.pos++
			return out, nil
		}
		if c == '\\' {
			return s.strEscaped(start)
		}
		s.pos++
	}
	return nil, s.errorf("unterminated string")
}

func (s *refJSONScanner) strEscaped(start int) ([]byte, error) {
	s.buf = append(s.buf[:0], s.b[start:s.pos]...)
	for s.pos < len(s.b) {
		c := s.b[s.pos]
		switch {
		case c == '"':
			s.pos++
			return s.buf, nil
		case c != '\\':
			s.buf = append(s.buf, c)
			s.pos++
			continue
		}
		if s.pos+1 >= len(s.b) {
			break
		}
		e := s.b[s.pos+1]
		s.pos += 2
		switch e {
		case '"', '\\', '/':
			s.buf = append(s.buf, e)
		case 'b':
			s.buf = append(s.buf, '\b')
		case 'f':
			s.buf = append(s.buf, '\f')
		case 'n':
			s.buf = append(s.buf, '\n')
		case 'r':
			s.buf = append(s.buf, '\r')
		case 't':
			s.buf = append(s.buf, '\t')
		case 'u':
			r, err := s.hex4()
			if err != nil {
				return nil, err
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(utf8.RuneError)
				if s.pos+1 < len(s.b) && s.b[s.pos] == '\\' && s.b[s.pos+1] == 'u' {
					save := s.pos
					s.pos += 2
					low, err := s.hex4()
					if err != nil {
						return nil, err
					}
					if d := utf16.DecodeRune(r, low); d != utf8.RuneError {
						r2 = d
					} else {
						s.pos = save
					}
				}
				r = r2
			}
			s.buf = utf8.AppendRune(s.buf, r)
		default:
			return nil, s.errorf("bad escape \\%c", e)
		}
	}
	return nil, s.errorf("unterminated string")
}

func (s *refJSONScanner) hex4() (rune, error) {
	if s.pos+4 > len(s.b) {
		return 0, s.errorf("short \\u escape")
	}
	v, err := strconv.ParseUint(string(s.b[s.pos:s.pos+4]), 16, 32)
	if err != nil {
		return 0, s.errorf("bad \\u escape")
	}
	s.pos += 4
	return rune(v), nil
}

func (s *refJSONScanner) uint32() (uint32, error) {
	s.skipSpace()
	start := s.pos
	var v uint64
	for s.pos < len(s.b) && s.b[s.pos] >= '0' && s.b[s.pos] <= '9' {
		v = v*10 + uint64(s.b[s.pos]-'0')
		if v > 1<<31-1 {
			return 0, s.errorf("id out of range")
		}
		s.pos++
	}
	if s.pos == start {
		return 0, s.errorf("expected a non-negative integer")
	}
	return uint32(v), nil
}

// vocab reads a vocabulary object at the scanner's position.
func (s *refJSONScanner) vocab() (arena []byte, ends []int, ids []int32, err error) {
	if err := s.expect('{'); err != nil {
		return nil, nil, nil, err
	}
	if s.peek() == '}' {
		s.pos++
		return nil, nil, nil, nil
	}
	arena = make([]byte, 0, 1<<16)
	for {
		k, err := s.str()
		if err != nil {
			return nil, nil, nil, err
		}
		arena = append(arena, k...)
		if err := s.expect(':'); err != nil {
			return nil, nil, nil, err
		}
		id, err := s.uint32()
		if err != nil {
			return nil, nil, nil, err
		}
		ends = append(ends, len(arena))
		ids = append(ids, int32(id))
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return arena, ends, ids, nil
		default:
			return nil, nil, nil, s.errorf("expected ',' or '}' in vocab")
		}
	}
}

// merges reads a merges array at the scanner's position.
func (s *refJSONScanner) merges(fn func(rank int, a, b []byte) error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	if s.peek() == ']' {
		s.pos++
		return nil
	}
	var first []byte
	for rank := 0; ; rank++ {
		var a, c []byte
		switch s.peek() {
		case '"':
			line, err := s.str()
			if err != nil {
				return err
			}
			sp := -1
			for i, ch := range line {
				if ch == ' ' {
					if sp >= 0 {
						sp = -2
						break
					}
					sp = i
				}
			}
			if sp < 0 {
				return fmt.Errorf("merge %d: %q is not two tokens separated by one space", rank+1, line)
			}
			a, c = line[:sp], line[sp+1:]
		case '[':
			s.pos++
			t, err := s.str()
			if err != nil {
				return err
			}
			first = append(first[:0], t...)
			if err := s.expect(','); err != nil {
				return err
			}
			if c, err = s.str(); err != nil {
				return err
			}
			if err := s.expect(']'); err != nil {
				return err
			}
			a = first
		default:
			return s.errorf("expected a merge")
		}
		if err := fn(rank, a, c); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.errorf("expected ',' or ']' in merges")
		}
	}
}

// skipValue advances past one JSON value without decoding it. It jumps
// from one structural byte to the next: whitespace, commas and scalars in
// between are not looked at one by one.
func (s *refJSONScanner) skipValue() error {
	s.skipSpace()
	if s.pos >= len(s.b) {
		return s.errorf("unexpected end of JSON")
	}
	switch s.b[s.pos] {
	case '"':
		return s.skipString()
	case '{', '[':
	default:
		// A scalar ends at the next delimiter.
		start := s.pos
		for s.pos < len(s.b) && !refJSONDelim[s.b[s.pos]] {
			s.pos++
		}
		if s.pos == start {
			return s.errorf("unexpected %q", s.b[s.pos])
		}
		return nil
	}
	depth := 0
	for s.pos < len(s.b) {
		switch s.b[s.pos] {
		case '"':
			if err := s.skipString(); err != nil {
				return err
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				s.pos++
				return nil
			}
		}
		s.pos++
	}
	return s.errorf("unexpected end of JSON")
}

var refJSONDelim = [256]bool{' ': true, '\t': true, '\n': true, '\r': true, ',': true, '}': true, ']': true, ':': true}

// skipString advances past the string starting at s.pos.
func (s *refJSONScanner) skipString() error {
	s.pos++
	for {
		i := bytes.IndexByte(s.b[s.pos:], '"')
		if i < 0 {
			return s.errorf("unterminated string")
		}
		end := s.pos + i
		// The quote is escaped when preceded by an odd number of backslashes.
		k := end
		for k > s.pos && s.b[k-1] == '\\' {
			k--
		}
		s.pos = end + 1
		if (end-k)%2 == 0 {
			return nil
		}
	}
}

// rawValue skips one value and returns its bytes.
func (s *refJSONScanner) rawValue() ([]byte, error) {
	s.skipSpace()
	start := s.pos
	if err := s.skipValue(); err != nil {
		return nil, err
	}
	return s.b[start:s.pos], nil
}

// object reads an object at the scanner's position, calling fn with each
// member's key; fn must consume the value.
func (s *refJSONScanner) object(fn func(key string) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	for {
		k, err := s.str()
		if err != nil {
			return err
		}
		key := string(k)
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := fn(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.errorf("expected ',' or '}'")
		}
	}
}
