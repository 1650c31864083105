package parsers

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// xmlParams reads "<parameter=NAME>VALUE</parameter>" pairs out of a
// streamed function body the way vLLM's _qwen3_arg_converter regex does:
//
//	<\s*parameter\s*=\s*([^>]*)>(.*?)(?:<\s*/\s*parameter\s*>|(?=<\s*parameter\s*=))
//
// A value ends at the first closing tag or just before the next opening
// tag; a value still open at the end of the body is dropped (the
// non-streaming converter runs with partial=False). Each '<' is examined
// once unless it may start a tag that is cut off by the end of the input.
type xmlParams struct {
	// Buf holds the body from the current scan anchor: the start of a
	// value, or of a possible opening tag.
	Buf []byte
	// Pos is the next byte of Buf to examine.
	Pos     int
	InValue bool
	Name    string
	// ValStart is where the current value starts in Buf.
	ValStart int
}

// xmlParam is one completed parameter.
type xmlParam struct{ Name, Value string }

// tagMatch is the result of matching a tag pattern at a position.
type tagMatch uint8

const (
	tagNo   tagMatch = iota // the pattern cannot match here
	tagYes                  // it matches
	tagMore                 // the input ends inside a possible match
)

// feed consumes body text and returns the parameters it completes.
func (x *xmlParams) feed(text string, out []xmlParam) []xmlParam {
	x.Buf = append(x.Buf, text...)
	for {
		i := bytes.IndexByte(x.Buf[x.Pos:], '<')
		if i < 0 {
			if x.InValue {
				x.Pos = len(x.Buf)
			} else {
				x.Buf, x.Pos = x.Buf[:0], 0
			}
			return out
		}
		at := x.Pos + i
		s := x.Buf
		if !x.InValue {
			m, nameStart, end := matchOpenTag(s, at)
			switch m {
			case tagMore:
				x.Buf, x.Pos = append(x.Buf[:0], x.Buf[at:]...), 0
				return out
			case tagNo:
				x.Pos = at + 1
				continue
			}
			x.Name = string(s[nameStart : end-1])
			x.InValue, x.ValStart, x.Pos = true, end, end
			continue
		}
		mc, endClose := matchCloseTag(s, at)
		ma := tagNo
		if mc == tagNo {
			ma = matchAheadTag(s, at)
		}
		switch {
		case mc == tagMore || ma == tagMore:
			x.Pos = at
			return out
		case mc == tagYes || ma == tagYes:
			out = append(out, xmlParam{Name: x.Name, Value: trimWrappingNewline(string(s[x.ValStart:at]))})
			rest := at
			if mc == tagYes {
				rest = endClose
			}
			x.Buf, x.Pos = append(x.Buf[:0], x.Buf[rest:]...), 0
			x.InValue = false
		default:
			x.Pos = at + 1
		}
	}
}

// trimWrappingNewline strips one leading and one trailing "\n".
func trimWrappingNewline(v string) string {
	v = strings.TrimPrefix(v, "\n")
	return strings.TrimSuffix(v, "\n")
}

// skipRegexSpace skips what Python's \s matches in a str pattern.
func skipRegexSpace(s []byte, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRune(s[i:])
		if !pyIsSpace(r) {
			break
		}
		i += n
	}
	return i
}

// matchLit matches lit at s[i:].
func matchLit(s []byte, i int, lit string) (tagMatch, int) {
	rest := s[i:]
	if bytes.HasPrefix(rest, []byte(lit)) {
		return tagYes, i + len(lit)
	}
	if len(rest) < len(lit) && strings.HasPrefix(lit, string(rest)) {
		return tagMore, i
	}
	return tagNo, i
}

// matchSeq matches '<' followed by the literal parts, each after optional
// whitespace.
func matchSeq(s []byte, i int, parts ...string) (tagMatch, int) {
	i++ // '<'
	for _, p := range parts {
		i = skipRegexSpace(s, i)
		if i == len(s) {
			return tagMore, i
		}
		m, j := matchLit(s, i, p)
		if m != tagYes {
			return m, i
		}
		i = j
	}
	return tagYes, i
}

// matchOpenTag matches <\s*parameter\s*=\s*([^>]*)> at s[i].
func matchOpenTag(s []byte, i int) (m tagMatch, nameStart, end int) {
	m, j := matchSeq(s, i, "parameter", "=")
	if m != tagYes {
		return m, 0, 0
	}
	j = skipRegexSpace(s, j)
	k := bytes.IndexByte(s[j:], '>')
	if k < 0 {
		return tagMore, 0, 0
	}
	return tagYes, j, j + k + 1
}

// matchCloseTag matches <\s*/\s*parameter\s*> at s[i].
func matchCloseTag(s []byte, i int) (tagMatch, int) {
	return matchSeq(s, i, "/", "parameter", ">")
}

// matchAheadTag matches <\s*parameter\s*= at s[i].
func matchAheadTag(s []byte, i int) tagMatch {
	m, _ := matchSeq(s, i, "parameter", "=")
	return m
}
