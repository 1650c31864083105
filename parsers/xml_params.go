package parsers

import (
	"bytes"
	"github.com/vrender/vrender/internal/statecodec"
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
	// buf holds the body from the current scan anchor: the start of a
	// value, or of a possible opening tag.
	buf []byte
	// pos is the next byte of Buf to examine.
	pos     int
	inValue bool
	name    string
	// valStart is where the current value starts in Buf.
	valStart int
	// TagOn is set while the tag at TagAt (a '<' in Buf) is undecided;
	// Head, NameEnd, Close and Ahead hold how far its match got.
	head    tagScan
	nameEnd byteSearch
	close   tagScan
	ahead   tagScan
	tagOn   bool
	tagAt   int

	// scanned counts the bytes examined, for the complexity test.
	scanned int
}

// xmlParam is one completed parameter.
type xmlParam struct{ name, value string }

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
	x.buf = append(x.buf, text...)
	for {
		i := bytes.IndexByte(x.buf[x.pos:], '<')
		if i < 0 {
			x.scanned += len(x.buf) - x.pos
			if x.inValue {
				x.pos = len(x.buf)
			} else {
				x.buf, x.pos = x.buf[:0], 0
			}
			return out
		}
		x.scanned += i + 1
		at := x.pos + i
		s := x.buf
		if !x.tagOn || x.tagAt != at {
			x.tagOn, x.tagAt = true, at
			x.head, x.nameEnd, x.close, x.ahead = tagScan{}, byteSearch{}, tagScan{}, tagScan{}
		}
		if !x.inValue {
			m, nameStart, end := x.openTag(s, at)
			switch m {
			case tagMore:
				if at > 0 {
					x.buf, x.tagAt = append(x.buf[:0], x.buf[at:]...), 0
				}
				x.pos = 0
				return out
			case tagNo:
				x.pos, x.tagOn = at+1, false
				continue
			}
			x.name = string(s[nameStart : end-1])
			x.inValue, x.valStart, x.pos, x.tagOn = true, end, end, false
			continue
		}
		mc, endClose := x.close.match(s, at, xmlClosePat, &x.scanned)
		ma := tagNo
		if mc == tagNo {
			ma, _ = x.ahead.match(s, at, xmlAheadPat, &x.scanned)
		}
		switch {
		case mc == tagMore || ma == tagMore:
			x.pos = at
			return out
		case mc == tagYes || ma == tagYes:
			out = append(out, xmlParam{name: x.name, value: trimWrappingNewline(string(s[x.valStart:at]))})
			rest := at
			if mc == tagYes {
				rest = endClose
			}
			x.pos, x.inValue, x.tagOn = rest, false, false
			x.compact()
		default:
			x.pos, x.tagOn = at+1, false
		}
	}
}

// compact drops the consumed text before Pos once it is at least half of
// Buf: dropping it after every parameter would copy the rest of a long
// push once per parameter.
func (x *xmlParams) compact() {
	if x.pos < len(x.buf)-x.pos {
		return
	}
	x.buf, x.pos = append(x.buf[:0], x.buf[x.pos:]...), 0
}

// openTag resumes the match of <\s*parameter\s*=\s*([^>]*)> at s[at].
func (x *xmlParams) openTag(s []byte, at int) (m tagMatch, nameStart, end int) {
	m, j := x.head.match(s, at, xmlHeadPat, &x.scanned)
	if m != tagYes {
		return m, 0, 0
	}
	if !x.nameEnd.found && x.nameEnd.pos == 0 {
		x.nameEnd.pos = j - at
	}
	k := x.nameEnd.find(s, at, '>', &x.scanned)
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

// codec saves and restores the state of a xmlParams.
func (x *xmlParams) codec(c *statecodec.Codec) {
	c.ByteSlice(&x.buf)
	c.Int(&x.pos)
	c.Bool(&x.inValue)
	c.String(&x.name)
	c.Int(&x.valStart)
	x.head.codec(c)
	x.nameEnd.codec(c)
	x.close.codec(c)
	x.ahead.codec(c)
	c.Bool(&x.tagOn)
	c.Int(&x.tagAt)
	// valStart and tagAt, and the matches of the tag at tagAt, are
	// stale outside a value and an undecided tag.
	c.Within(len(x.buf), x.pos)
	if x.inValue {
		c.Within(len(x.buf), x.valStart)
	}
	if x.tagOn {
		c.Within(len(x.buf), x.tagAt)
		room := len(x.buf) - x.tagAt
		x.head.check(c, room)
		x.nameEnd.check(c, room)
		x.close.check(c, room)
		x.ahead.check(c, room)
	}
}
