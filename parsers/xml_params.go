package parsers

import (
	"bytes"
	"strings"
)

// xmlParams reads "<parameter=NAME>VALUE</parameter>" pairs out of a
// streamed function body the way vLLM's _qwen3_arg_converter regex does:
//
//	<\s*parameter\s*=\s*([^>]*)>(.*?)(?:<\s*/\s*parameter\s*>|(?=<\s*parameter\s*=))
//
// A value ends at the first closing tag or just before the next opening
// tag; a value still open at the end of the body is dropped (the
// non-streaming converter runs with partial=False). Each byte is examined
// once: a tag cut off by the end of the input so far is resumed where its
// match stopped, not matched again from its '<'.
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
	// TagOn is set while the tag at TagAt (a '<' in Buf) is undecided;
	// Head, NameEnd, Close and Ahead hold how far its match got.
	Head    tagScan
	NameEnd byteSearch
	Close   tagScan
	Ahead   tagScan
	TagOn   bool
	TagAt   int

	// scanned counts the bytes examined, for the complexity test.
	scanned int
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

var (
	xmlHeadPat  = []tagElem{lit("<"), wsStar, lit("parameter"), wsStar, lit("="), wsStar}
	xmlAheadPat = xmlHeadPat[:len(xmlHeadPat)-1]
	xmlClosePat = []tagElem{lit("<"), wsStar, lit("/"), wsStar, lit("parameter"), wsStar, lit(">")}
)

// feed consumes body text and returns the parameters it completes.
func (x *xmlParams) feed(text string, out []xmlParam) []xmlParam {
	x.Buf = append(x.Buf, text...)
	for {
		i := bytes.IndexByte(x.Buf[x.Pos:], '<')
		if i < 0 {
			x.scanned += len(x.Buf) - x.Pos
			if x.InValue {
				x.Pos = len(x.Buf)
			} else {
				x.Buf, x.Pos = x.Buf[:0], 0
			}
			return out
		}
		x.scanned += i + 1
		at := x.Pos + i
		s := x.Buf
		if !x.TagOn || x.TagAt != at {
			x.TagOn, x.TagAt = true, at
			x.Head, x.NameEnd, x.Close, x.Ahead = tagScan{}, byteSearch{}, tagScan{}, tagScan{}
		}
		if !x.InValue {
			m, nameStart, end := x.openTag(s, at)
			switch m {
			case tagMore:
				if at > 0 {
					x.Buf, x.TagAt = append(x.Buf[:0], x.Buf[at:]...), 0
				}
				x.Pos = 0
				return out
			case tagNo:
				x.Pos, x.TagOn = at+1, false
				continue
			}
			x.Name = string(s[nameStart : end-1])
			x.InValue, x.ValStart, x.Pos, x.TagOn = true, end, end, false
			continue
		}
		mc, endClose := x.Close.match(s, at, xmlClosePat, &x.scanned)
		ma := tagNo
		if mc == tagNo {
			ma, _ = x.Ahead.match(s, at, xmlAheadPat, &x.scanned)
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
			x.Pos, x.InValue, x.TagOn = rest, false, false
			x.compact()
		default:
			x.Pos, x.TagOn = at+1, false
		}
	}
}

// compact drops the consumed text before Pos once it is at least half of
// Buf: dropping it after every parameter would copy the rest of a long
// push once per parameter.
func (x *xmlParams) compact() {
	if x.Pos < len(x.Buf)-x.Pos {
		return
	}
	x.Buf, x.Pos = append(x.Buf[:0], x.Buf[x.Pos:]...), 0
}

// openTag resumes the match of <\s*parameter\s*=\s*([^>]*)> at s[at].
func (x *xmlParams) openTag(s []byte, at int) (m tagMatch, nameStart, end int) {
	m, j := x.Head.match(s, at, xmlHeadPat, &x.scanned)
	if m != tagYes {
		return m, 0, 0
	}
	if !x.NameEnd.Found && x.NameEnd.Pos == 0 {
		x.NameEnd.Pos = j - at
	}
	k := x.NameEnd.find(s, at, '>', &x.scanned)
	if k < 0 {
		return tagMore, 0, 0
	}
	return tagYes, j, k + 1
}

// trimWrappingNewline strips one leading and one trailing "\n".
func trimWrappingNewline(v string) string {
	v = strings.TrimPrefix(v, "\n")
	return strings.TrimSuffix(v, "\n")
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
