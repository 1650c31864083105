package jinja

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pyStr is Python's str(v), which is what {{ v }} prints.
func pyStr(v Value) string {
	switch v.kind {
	case KindStr:
		return v.s
	case KindUndefinedValue:
		return ""
	case KindInt:
		return strconv.FormatInt(v.n, 10)
	}
	var b strings.Builder
	writeRepr(&b, v, false)
	return b.String()
}

// pyRepr is Python's repr(v).
func pyRepr(v Value) string {
	var b strings.Builder
	writeRepr(&b, v, true)
	return b.String()
}

// writeRepr writes repr(v), or str(v) at the top level when top is false
// (containers always repr their items).
func writeRepr(b *strings.Builder, v Value, quote bool) {
	switch v.kind {
	case KindUndefinedValue:
		if quote {
			b.WriteString("Undefined")
		}
	case KindNone:
		b.WriteString("None")
	case KindBool:
		if v.n != 0 {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case KindInt:
		b.WriteString(strconv.FormatInt(v.n, 10))
	case KindBigInt:
		b.WriteString(v.bigInt().String())
	case KindFloat:
		b.WriteString(formatFloatRepr(v.fl()))
	case KindStr:
		if !quote {
			b.WriteString(v.s)
		} else if v.safe {
			b.WriteString("Markup(")
			writeStrRepr(b, v.s)
			b.WriteString(")")
		} else {
			writeStrRepr(b, v.s)
		}
	case KindList:
		b.WriteByte('[')
		for i, it := range v.items() {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, it, true)
		}
		b.WriteByte(']')
	case KindTuple:
		items := v.items()
		b.WriteByte('(')
		for i, it := range items {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, it, true)
		}
		if len(items) == 1 {
			b.WriteByte(',')
		}
		b.WriteByte(')')
	case KindDict:
		writeDictRepr(b, v.dict())
	case KindNamespace:
		b.WriteString("<Namespace ")
		writeDictRepr(b, v.ref.(*Namespace).attrs)
		b.WriteString(">")
	case KindLoop:
		l := v.ref.(*loopCtx)
		b.WriteString("<LoopContext ")
		b.WriteString(strconv.Itoa(l.index0 + 1))
		b.WriteString("/")
		b.WriteString(strconv.Itoa(len(l.items)))
		b.WriteString(">")
	case KindIter:
		it := v.ref.(*iterState)
		if it.view {
			b.WriteString(it.typeName + "([")
			for i, x := range it.items {
				if i > 0 {
					b.WriteString(", ")
				}
				writeRepr(b, x, true)
			}
			b.WriteString("])")
		} else {
			b.WriteString("<" + it.typeName + " object>")
		}
	case KindCallable:
		c := v.ref.(*Callable)
		switch {
		case c.macro != nil:
			b.WriteString("<Macro ")
			writeStrRepr(b, c.name)
			b.WriteString(">")
		case c.self != nil:
			b.WriteString("<built-in method " + c.name + " of " + c.self.typeName() + " object>")
		default:
			b.WriteString("<function " + c.name + ">")
		}
	}
}

func writeDictRepr(b *strings.Builder, d *Dict) {
	b.WriteByte('{')
	for i, k := range d.Keys() {
		if i > 0 {
			b.WriteString(", ")
		}
		writeRepr(b, k, true)
		b.WriteString(": ")
		writeRepr(b, d.vals[i], true)
	}
	b.WriteByte('}')
}

// writeStrRepr writes Python's repr of a str: single quotes unless the text
// has a single quote and no double quote; non-printable characters escaped.
func writeStrRepr(b *strings.Builder, s string) {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	b.WriteByte(q)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteByte(q)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\udcff`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x`)
			writeHex(b, uint32(r), 2)
		case r < 0x80 || pyPrintable(r):
			b.WriteRune(r)
		case r < 0x100:
			b.WriteString(`\x`)
			writeHex(b, uint32(r), 2)
		case r < 0x10000:
			b.WriteString(`\u`)
			writeHex(b, uint32(r), 4)
		default:
			b.WriteString(`\U`)
			writeHex(b, uint32(r), 8)
		}
	}
	b.WriteByte(q)
}

// pyPrintable approximates Python's str.isprintable for one character:
// everything but separators (other than the ASCII space), controls, format,
// surrogate, private-use and unassigned characters.
func pyPrintable(r rune) bool {
	if r == ' ' {
		return true
	}
	return unicode.IsPrint(r)
}

func writeHex(b *strings.Builder, v uint32, width int) {
	const digits = "0123456789abcdef"
	for i := width - 1; i >= 0; i-- {
		b.WriteByte(digits[(v>>(4*uint(i)))&0xf])
	}
}

// formatFloatRepr is Python's repr(float): the shortest digits that round
// trip, in fixed notation when the decimal exponent is in [-4, 16), otherwise
// in scientific notation with at least two exponent digits.
func formatFloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	neg := false
	if e[0] == '-' {
		neg = true
		e = e[1:]
	}
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	var out strings.Builder
	if neg {
		out.WriteByte('-')
	}
	if exp >= -5+1 && exp < 16 {
		if exp >= 0 {
			if len(digits) <= exp+1 {
				out.WriteString(digits)
				out.WriteString(strings.Repeat("0", exp+1-len(digits)))
				out.WriteString(".0")
			} else {
				out.WriteString(digits[:exp+1])
				out.WriteByte('.')
				out.WriteString(digits[exp+1:])
			}
		} else {
			out.WriteString("0.")
			out.WriteString(strings.Repeat("0", -exp-1))
			out.WriteString(digits)
		}
		return out.String()
	}
	out.WriteString(digits[:1])
	if len(digits) > 1 {
		out.WriteByte('.')
		out.WriteString(digits[1:])
	}
	out.WriteByte('e')
	if exp < 0 {
		out.WriteByte('-')
		exp = -exp
	} else {
		out.WriteByte('+')
	}
	if exp < 10 {
		out.WriteByte('0')
	}
	out.WriteString(strconv.Itoa(exp))
	return out.String()
}
