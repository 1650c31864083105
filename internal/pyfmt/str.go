package pyfmt

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// AppendStrRepr appends Python's repr(s): single quotes unless s contains a
// single quote and no double quote; backslash, that quote, \t, \n and \r
// escaped; every character str.isprintable rejects (controls, format,
// surrogate, private-use, unassigned, separators other than the ASCII
// space) written as \xXX, \uXXXX or \UXXXXXXXX. A Python str cannot hold
// bytes that are not UTF-8, so each such byte of s is written as badByte,
// a spelling the caller chooses.
func AppendStrRepr(dst []byte, s, badByte string) []byte {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	dst = append(dst, quote)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, badByte...)
			i++
			continue
		}
		i += size
		switch {
		case r == '\\':
			dst = append(dst, `\\`...)
		case r == rune(quote):
			dst = append(dst, '\\', quote)
		case r == '\t':
			dst = append(dst, `\t`...)
		case r == '\n':
			dst = append(dst, `\n`...)
		case r == '\r':
			dst = append(dst, `\r`...)
		case unicode.IsPrint(r): // Go's IsPrint is isprintable's definition
			dst = utf8.AppendRune(dst, r)
		case r < 0x100:
			dst = appendHex(append(dst, `\x`...), r, 2)
		case r < 0x10000:
			dst = appendHex(append(dst, `\u`...), r, 4)
		default:
			dst = appendHex(append(dst, `\U`...), r, 8)
		}
	}
	return append(dst, quote)
}

// appendHex writes r as width lowercase hex digits, as Python's escapes do.
func appendHex(dst []byte, r rune, width int) []byte {
	const digits = "0123456789abcdef"
	for i := width - 1; i >= 0; i-- {
		dst = append(dst, digits[(r>>(4*uint(i)))&0xf])
	}
	return dst
}

// AppendStrListRepr appends Python's repr of a list of str.
func AppendStrListRepr(dst []byte, items []string, badByte string) []byte {
	dst = append(dst, '[')
	for i, s := range items {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = AppendStrRepr(dst, s, badByte)
	}
	return append(dst, ']')
}
