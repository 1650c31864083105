package jinja

import (
	"strconv"
	"strings"

	"github.com/vrender/vrender/internal/pyfmt"
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

// writeStrRepr writes Python's repr of a str. A byte that is not UTF-8 is
// shown as the lone surrogate \udcff, since a Python str cannot hold it.
func writeStrRepr(b *strings.Builder, s string) {
	b.Write(pyfmt.AppendStrRepr(make([]byte, 0, len(s)+2), s, `\udcff`))
}

func writeHex(b *strings.Builder, v uint32, width int) {
	const digits = "0123456789abcdef"
	for i := width - 1; i >= 0; i-- {
		b.WriteByte(digits[(v>>(4*uint(i)))&0xf])
	}
}

// formatFloatRepr is Python's repr(float).
func formatFloatRepr(f float64) string {
	return string(pyfmt.AppendFloatRepr(nil, f))
}
