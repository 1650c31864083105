package parsers

import (
	"bytes"
	"strings"

	"github.com/vrender/vrender/internal/statecodec"
)

// xmlBody is the scan state the XML families' parameter readers share:
// the body from the scan anchor, where the scan is, the value being read,
// and how far the match of the tag at tagAt got. A family's reader adds
// how its opening tag matches (xmlParams, mmParams). Each byte is examined
// once: a tag cut off by the end of the input so far is resumed where its
// match stopped, not matched again from its '<'.
type xmlBody struct {
	// buf holds the body from the current scan anchor: the start of a
	// value, or of a possible opening tag.
	buf []byte
	// pos is the next byte of buf to examine.
	pos     int
	inValue bool
	name    string
	// valStart is where the current value starts in buf.
	valStart int
	// tagOn is set while the tag at tagAt (a '<' in buf) is undecided;
	// close and ahead (and the family's opening-tag state) hold how far
	// its match got.
	close tagScan
	ahead tagScan
	tagOn bool
	tagAt int

	// scanned counts the bytes examined, for the complexity test.
	scanned int
}

// nextTag finds the next '<' from pos. Without one, the body so far is
// settled (kept only inside a value) and ok is false. fresh reports a tag
// whose match starts now: its match state must start over.
func (x *xmlBody) nextTag() (at int, fresh, ok bool) {
	i := bytes.IndexByte(x.buf[x.pos:], '<')
	if i < 0 {
		x.scanned += len(x.buf) - x.pos
		if x.inValue {
			x.pos = len(x.buf)
		} else {
			x.buf, x.pos = x.buf[:0], 0
		}
		return 0, false, false
	}
	x.scanned += i + 1
	at = x.pos + i
	if x.tagOn && x.tagAt == at {
		return at, false, true
	}
	x.tagOn, x.tagAt = true, at
	x.close, x.ahead = tagScan{}, tagScan{}
	return at, true, true
}

// holdTag keeps the body from the undecided opening tag at at on.
func (x *xmlBody) holdTag(at int) {
	if at > 0 {
		x.buf, x.tagAt = append(x.buf[:0], x.buf[at:]...), 0
	}
	x.pos = 0
}

// openValue starts the value of parameter name at end.
func (x *xmlBody) openValue(name string, end int) {
	x.name = name
	x.inValue, x.valStart, x.pos, x.tagOn = true, end, end, false
}

// skipTag moves past a '<' that starts no tag.
func (x *xmlBody) skipTag(at int) { x.pos, x.tagOn = at+1, false }

// endValue ends the value; the scan goes on at rest.
func (x *xmlBody) endValue(rest int) {
	x.pos, x.inValue, x.tagOn = rest, false, false
	x.compact()
}

// compact drops the consumed text before pos once it is at least half of
// buf: dropping it after every parameter would copy the rest of a long
// push once per parameter.
func (x *xmlBody) compact() {
	if x.pos < len(x.buf)-x.pos {
		return
	}
	x.buf, x.pos = append(x.buf[:0], x.buf[x.pos:]...), 0
}

// tagOpenState is a family's opening-tag match state.
type tagOpenState interface {
	codec(c *statecodec.Codec)
	// check checks a decoded match against its buffer's room.
	check(c *statecodec.Codec, room int)
}

// codec saves and restores the state of an xmlBody; open is the family's
// opening-tag state, saved after the value's fields.
func (x *xmlBody) codec(c *statecodec.Codec, open tagOpenState) {
	c.ByteSlice(&x.buf)
	c.Int(&x.pos)
	c.Bool(&x.inValue)
	c.String(&x.name)
	c.Int(&x.valStart)
	open.codec(c)
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
		open.check(c, room)
		x.close.check(c, room)
		x.ahead.check(c, room)
	}
}

// xmlParams reads "<parameter=NAME>VALUE</parameter>" pairs out of a
// streamed function body the way vLLM's _qwen3_arg_converter regex does:
//
//	<\s*parameter\s*=\s*([^>]*)>(.*?)(?:<\s*/\s*parameter\s*>|(?=<\s*parameter\s*=))
//
// A value ends at the first closing tag or just before the next opening
// tag; a value still open at the end of the body is dropped (the
// non-streaming converter runs with partial=False).
type xmlParams struct {
	xmlBody
	open xmlOpenScan
}

// xmlOpenScan resumes the match of the opening tag: head up to the name,
// then nameEnd finds its '>'.
type xmlOpenScan struct {
	head    tagScan
	nameEnd byteSearch
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
	// paramClosePat is <\s*/\s*parameter\s*>, the closing tag of both
	// XML families.
	paramClosePat = []tagElem{lit("<"), wsStar, lit("/"), wsStar, lit("parameter"), wsStar, lit(">")}
)

// feed consumes body text and returns the parameters it completes.
func (x *xmlParams) feed(text string, out []xmlParam) []xmlParam {
	x.buf = append(x.buf, text...)
	for {
		at, fresh, ok := x.nextTag()
		if !ok {
			return out
		}
		if fresh {
			x.open = xmlOpenScan{}
		}
		s := x.buf
		if !x.inValue {
			m, nameStart, end := x.openTag(s, at)
			switch m {
			case tagMore:
				x.holdTag(at)
				return out
			case tagNo:
				x.skipTag(at)
				continue
			}
			x.openValue(string(s[nameStart:end-1]), end)
			continue
		}
		mc, endClose := x.close.match(s, at, paramClosePat, &x.scanned)
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
			x.endValue(rest)
		default:
			x.skipTag(at)
		}
	}
}

// openTag resumes the match of <\s*parameter\s*=\s*([^>]*)> at s[at].
func (x *xmlParams) openTag(s []byte, at int) (m tagMatch, nameStart, end int) {
	o := &x.open
	m, j := o.head.match(s, at, xmlHeadPat, &x.scanned)
	if m != tagYes {
		return m, 0, 0
	}
	if !o.nameEnd.found && o.nameEnd.pos == 0 {
		o.nameEnd.pos = j - at
	}
	k := o.nameEnd.find(s, at, '>', &x.scanned)
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

// codec saves and restores the state of an xmlParams.
func (x *xmlParams) codec(c *statecodec.Codec) { x.xmlBody.codec(c, &x.open) }

// codec saves and restores the state of an xmlOpenScan.
func (o *xmlOpenScan) codec(c *statecodec.Codec) {
	o.head.codec(c)
	o.nameEnd.codec(c)
}

// check checks a decoded opening-tag match against its buffer's room.
func (o *xmlOpenScan) check(c *statecodec.Codec, room int) {
	o.head.check(c, room)
	o.nameEnd.check(c, room)
}
