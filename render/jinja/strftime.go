package jinja

import (
	"fmt"
	"strings"
	"time"
)

// strftime formats t like Python's datetime.strftime in the C locale.
func strftime(t time.Time, f string) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		c := f[i]
		pad := true
		if c == '-' && i+1 < len(f) {
			pad = false
			i++
			c = f[i]
		}
		strftimeDirective(&b, t, c, pad)
	}
	return b.String()
}

// strftimeDirective writes one %-directive (c, with "%-" when !pad).
func strftimeDirective(b *strings.Builder, t time.Time, c byte, pad bool) {
	num := func(n, width int) {
		if pad {
			fmt.Fprintf(b, "%0*d", width, n)
		} else {
			fmt.Fprintf(b, "%d", n)
		}
	}
	switch c {
	case 'Y':
		fmt.Fprintf(b, "%d", t.Year())
	case 'y':
		num(t.Year()%100, 2)
	case 'm':
		num(int(t.Month()), 2)
	case 'd':
		num(t.Day(), 2)
	case 'e':
		fmt.Fprintf(b, "%2d", t.Day())
	case 'H':
		num(t.Hour(), 2)
	case 'I':
		h := t.Hour() % 12
		if h == 0 {
			h = 12
		}
		num(h, 2)
	case 'M':
		num(t.Minute(), 2)
	case 'S':
		num(t.Second(), 2)
	case 'f':
		fmt.Fprintf(b, "%06d", t.Nanosecond()/1000)
	case 'p':
		if t.Hour() < 12 {
			b.WriteString("AM")
		} else {
			b.WriteString("PM")
		}
	case 'B':
		b.WriteString(t.Month().String())
	case 'b', 'h':
		b.WriteString(t.Month().String()[:3])
	case 'A':
		b.WriteString(t.Weekday().String())
	case 'a':
		b.WriteString(t.Weekday().String()[:3])
	case 'j':
		num(t.YearDay(), 3)
	case 'w':
		fmt.Fprintf(b, "%d", int(t.Weekday()))
	case 'u':
		wd := int(t.Weekday())
		if wd == 0 {
			wd = 7
		}
		fmt.Fprintf(b, "%d", wd)
	case 'U':
		num((t.YearDay()+6-int(t.Weekday()))/7, 2)
	case 'W':
		num((t.YearDay()+6-(int(t.Weekday())+6)%7)/7, 2)
	case 'V':
		_, w := t.ISOWeek()
		num(w, 2)
	case 'G':
		y, _ := t.ISOWeek()
		fmt.Fprintf(b, "%d", y)
	case 'Z':
		name, _ := t.Zone()
		b.WriteString(name)
	case 'z':
		b.WriteString(t.Format("-0700"))
	case 'c':
		b.WriteString(t.Format("Mon Jan _2 15:04:05 2006"))
	case 'x':
		b.WriteString(t.Format("01/02/06"))
	case 'X':
		b.WriteString(t.Format("15:04:05"))
	case 'D':
		b.WriteString(t.Format("01/02/06"))
	case 'F':
		b.WriteString(t.Format("2006-01-02"))
	case 'T':
		b.WriteString(t.Format("15:04:05"))
	case 'R':
		b.WriteString(t.Format("15:04"))
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case '%':
		b.WriteByte('%')
	default:
		b.WriteByte('%')
		b.WriteByte(c)
	}
}
