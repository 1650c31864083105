package pyjson

// Inside a string most input re-serialises to itself: ordinary bytes pass
// through (ensure_ascii=False), and so do the two-byte escapes json.dumps
// writes the same way. Copying such a run whole, rather than stepping the
// machine a byte at a time, makes the common case of a long string
// argument cost a scan and a copy; a caller that can take a piece of the
// input as is (FieldStringSink) avoids even the copy.

// verbatimEscape marks the escaped bytes whose two-byte escape json.dumps
// writes back unchanged: \" \\ \b \f \n \r \t (not \/ or \u).
var verbatimEscape = [256]bool{'"': true, '\\': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true}

// plainRun returns the length of the longest prefix of src that the
// machine, now inside a string, would copy to its output unchanged, and
// moves the machine past it (the machine's state does not change: it is
// still inside the same string). It is 0 outside a string, with a pending
// escape or surrogate, or when src starts with a byte that needs the
// machine.
func (v *Value) plainRun(src string) int {
	if v.state != stString || v.high != 0 {
		return 0
	}
	return plainLen(src)
}

// plainLen is the length of src's plain run inside a string (see
// plainRun).
func plainLen(src string) int {
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '"' || c < 0x20:
			return i
		case c == '\\':
			// An escape split across pushes, or one that changes form,
			// goes through the machine.
			if i+1 >= len(src) || !verbatimEscape[src[i+1]] {
				return i
			}
			i += 2
		default:
			i++
		}
	}
	return i
}

// PlainLen is the length of src's plain run inside a string: the bytes
// that re-serialise to themselves and leave the machine where it was. A
// run that stops one byte short at a backslash stopped at an escape split
// across pushes.
func PlainLen(src string) int { return plainLen(src) }

// VerbatimEscape reports whether the escape backslash+c re-serialises to
// itself.
func VerbatimEscape(c byte) bool { return verbatimEscape[c] }

// InPlainValue reports whether all of src, fed now, would go to the
// current field's value as the same text (it lies inside a string and
// re-serialises to itself), so a caller may route it without Feed. The
// machine's state would not change: it is still inside that string.
func (o *Object) InPlainValue(src string) bool {
	return o.state == obValue && len(src) > 0 && o.val.plainRun(src) == len(src)
}
