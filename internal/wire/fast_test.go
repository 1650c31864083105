package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/vrender/vrender/internal/benchdata"
)

// The fast paths of Parse, Valid, AppendString, AppendStringASCII and
// AppendInts against the reference copies in ref_test.go: the same bytes,
// the same tree, the same error text and position, for table cases and
// fuzzed input.

// sameParse reports how Parse and Valid differ from the reference on data.
func sameParse(data []byte) error {
	got, gerr := Parse(data)
	want, werr := refParse(data)
	if err := sameErr(gerr, werr); err != nil {
		return fmt.Errorf("Parse: %w", err)
	}
	if err := sameErr(Valid(data), refValid(data)); err != nil {
		return fmt.Errorf("Valid: %w", err)
	}
	if gerr != nil {
		if got != nil {
			return errors.New("Parse returned a tree with its error")
		}
		return nil
	}
	if err := sameNode(data, got, want); err != nil {
		return fmt.Errorf("$%w", err)
	}
	if utf8.Valid(data) {
		// ParseUTF8 skips the per-string check Parse makes: the same tree.
		fast, err := ParseUTF8(data)
		if err != nil {
			return fmt.Errorf("ParseUTF8: %v, Parse: no error", err)
		}
		if err := sameNode(data, fast, want); err != nil {
			return fmt.Errorf("ParseUTF8: $%w", err)
		}
	}
	return nil
}

func sameErr(got, want error) error {
	switch {
	case got == nil && want == nil:
		return nil
	case got == nil || want == nil:
		return fmt.Errorf("error %v, want %v", got, want)
	case errors.Is(want, ErrTooDeep):
		if got != ErrTooDeep {
			return fmt.Errorf("error %v, want ErrTooDeep", got)
		}
		return nil
	}
	var g, w *SyntaxError
	if !errors.As(got, &g) || !errors.As(want, &w) {
		return fmt.Errorf("error %T %v, want %T %v", got, got, want, want)
	}
	if *g != *w || g.PyString() != w.PyString() {
		return fmt.Errorf("error %q, want %q", g.PyString(), w.PyString())
	}
	return nil
}

// offset is where b starts within data, -1 if it is not part of it.
func offset(data, b []byte) int {
	if len(b) == 0 || len(data) == 0 {
		return -1
	}
	d := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if p < d || p >= d+uintptr(len(data)) {
		return -1
	}
	return int(p - d)
}

// sameNode reports the first difference, its path prefixed as the error
// returns up the tree.
func sameNode(data []byte, got, want *Node) error {
	switch {
	case got == nil && want == nil:
		return nil
	case got == nil || want == nil:
		return fmt.Errorf(": node %v, want %v", got, want)
	}
	if got.Kind != want.Kind || got.B != want.B || got.S != want.S || got.Depth != want.Depth {
		return fmt.Errorf(": node {%v %v %q %d}, want {%v %v %q %d}",
			got.Kind, got.B, got.S, got.Depth, want.Kind, want.B, want.S, want.Depth)
	}
	if !bytes.Equal(got.Raw, want.Raw) || offset(data, got.Raw) != offset(data, want.Raw) ||
		cap(got.Raw) != cap(want.Raw) {
		return fmt.Errorf(": Raw %q at %d, want %q at %d", got.Raw, offset(data, got.Raw), want.Raw, offset(data, want.Raw))
	}
	// A string aliases the input exactly when the reference's does.
	if offset(data, unsafe.Slice(unsafe.StringData(got.S), len(got.S))) !=
		offset(data, unsafe.Slice(unsafe.StringData(want.S), len(want.S))) {
		return fmt.Errorf(": string %q aliases the input differently", got.S)
	}
	if (got.Arr == nil) != (want.Arr == nil) || len(got.Arr) != len(want.Arr) || cap(got.Arr) != cap(want.Arr) {
		return fmt.Errorf(": Arr len %d cap %d nil %v, want %d %d %v",
			len(got.Arr), cap(got.Arr), got.Arr == nil, len(want.Arr), cap(want.Arr), want.Arr == nil)
	}
	if (got.Keys == nil) != (want.Keys == nil) || len(got.Keys) != len(want.Keys) || cap(got.Keys) != cap(want.Keys) ||
		(got.Vals == nil) != (want.Vals == nil) || len(got.Vals) != len(want.Vals) || cap(got.Vals) != cap(want.Vals) {
		return fmt.Errorf(": Keys/Vals %d/%d, want %d/%d", len(got.Keys), len(got.Vals), len(want.Keys), len(want.Vals))
	}
	for i := range got.Arr {
		if err := sameNode(data, got.Arr[i], want.Arr[i]); err != nil {
			return fmt.Errorf("[%d]%w", i, err)
		}
	}
	for i := range got.Keys {
		if got.Keys[i] != want.Keys[i] {
			return fmt.Errorf(": key %d %q, want %q", i, got.Keys[i], want.Keys[i])
		}
		if err := sameNode(data, got.Vals[i], want.Vals[i]); err != nil {
			return fmt.Errorf(".%s%w", want.Keys[i], err)
		}
	}
	return nil
}

// stringCases are string bodies that put each kind of byte the scanners
// stop at at every offset around an eight-byte word.
func stringCases() []string {
	stops := []string{`"`, `\`, `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\x`, `\u00e9`, `\u00E9`, `\u12`, `\u12g4`,
		`\ud83d\ude00`, `\ud83d`, `\ude00`, `\ud83dx`, `\ud83d\u0041`, `\ud83d\uzzzz`, `\udbff\udfff`, `\ud800\ud800`,
		"\x00", "\x01", "\x1f", " ", "\x7f", "\x80", "\xff", "\xc3", "\xc3\xa9", "\xe2\x80\xa8", "\xed\xa0\x80",
		"\xf0\x9f\x98\x80", "\xf0\x9f\x98", "é", "\t", "\n", "\u2028", "!", "#", "[", "\\u", "\\"}
	var out []string
	for _, stop := range stops {
		for pre := range 18 {
			for _, post := range []int{0, 1, 7, 8, 9} {
				out = append(out, strings.Repeat("a", pre)+stop+strings.Repeat("b", post))
			}
		}
	}
	return out
}

// parseCases are documents: each stop of stringCases in strings, keys and
// truncated strings, with the syntax cases around them.
func parseCases() []string {
	cases := syntaxCases()
	for _, s := range stringCases() {
		cases = append(cases, `"`+s+`"`, `["`+s+`"]`, `{"`+s+`":"`+s+`"}`, `"`+s)
	}
	return cases
}

func syntaxCases() []string {
	cases := []string{
		``, ` `, `null`, `nul`, `true`, `tru`, `false`, `fals`, `[]`, `{}`, `[`, `{`, `]`, `}`, `[1,]`, `{"a":1,}`,
		`0`, `-0`, `-`, `01`, `1.`, `1.5`, `.5`, `1e`, `1e5`, `1E+5`, `1e-`, `1.5e-10x`, `-1.e5`, `1ee5`,
		`123456789012345678901234567890123456789`, `-99999999999999999999999999.999999999e999999`,
		`NaN`, `Infinity`, `-Infinity`, `[1 2]`, `{"a" 1}`, `{"a":}`, `{1:2}`, `{"a":1 "b":2}`,
		" \t\n\r[ \t\n\r1 \t\n\r, \t\n\r{ \t\n\r\"k\" \t\n\r: \t\n\r\"v\" \t\n\r} \t\n\r] \t\n\r",
		`{"a":1,"a":2}`, `{"a":1,"b":2,"a":3}`, `{"a":{"x":1},"b":[],"a":{"y":[1,[2]]}}`,
		`[1] x`, `[1]]`, "\ufeff[]", `"\ud83d\ude00"`, `["a","b"]`, `{"":""}`, `{"\u0061":1,"a":2}`,
		strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth),
		strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
		strings.Repeat(`{"a":`, MaxDepth) + "1" + strings.Repeat("}", MaxDepth),
		strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1),
		strings.Repeat("[", 40) + "1" + strings.Repeat("]", 39),
	}
	var many strings.Builder
	many.WriteString("{")
	for i := range 40 {
		fmt.Fprintf(&many, `"k%d":%d,`, i%23, i)
	}
	many.WriteString(`"z":[` + strings.Repeat(`"x\n",`, 300) + `0]}`)
	return append(cases, many.String())
}

func TestParseMatchesReference(t *testing.T) {
	docs := parseCases()
	for _, s := range benchdata.Sizes {
		docs = append(docs, string(benchBody(t, s)))
	}
	for _, doc := range docs {
		// Every prefix too: each is an error at its end, or a shorter
		// document, at every offset around the words the scanners load.
		for n := len(doc); n >= 0 && n >= len(doc)-300; n-- {
			data := []byte(doc[:n])
			if err := sameParse(data); err != nil {
				t.Fatalf("%q: %v", data, err)
			}
		}
	}
}

func TestAppendStringMatchesReference(t *testing.T) {
	texts := append(stringCases(), benchTexts(t)...)
	for c := range 256 {
		texts = append(texts, string([]byte{byte(c)}), strings.Repeat(string([]byte{byte(c)}), 17))
	}
	for _, s := range texts {
		for _, pre := range []string{"", "x"} {
			if got, want := AppendString([]byte(pre), s), refAppendString([]byte(pre), s); !bytes.Equal(got, want) {
				t.Fatalf("AppendString(%q) = %q, want %q", s, got, want)
			}
			if got, want := AppendStringASCII([]byte(pre), s), refAppendStringASCII([]byte(pre), s); !bytes.Equal(got, want) {
				t.Fatalf("AppendStringASCII(%q) = %q, want %q", s, got, want)
			}
		}
	}
}

func intCases() []int {
	ids := []int{0, 1, -1, 9, 10, 11, 99, 100, 101, 999, 1000, 9999, 10000, 99999, 100000, 151643, 999999,
		1000000, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1}
	for p := 1; p > 0 && p <= math.MaxInt64/10; p *= 10 {
		ids = append(ids, p-1, p, p+1, -p+1, -p, -p-1)
	}
	return append(ids, benchIDs(5000)...)
}

func TestAppendIntsMatchesReference(t *testing.T) {
	ids := intCases()
	for n := 0; n <= len(ids); n += 1 + n/3 {
		for _, pre := range []string{"", "p"} {
			if got, want := AppendInts([]byte(pre), ids[:n]), refAppendInts([]byte(pre), ids[:n]); !bytes.Equal(got, want) {
				t.Fatalf("AppendInts(%v) = %s, want %s", ids[:n], got, want)
			}
		}
	}
	if got := string(AppendInts(nil, nil)); got != "[]" {
		t.Fatalf("AppendInts(nil) = %s", got)
	}
}

func FuzzParseMatchesReference(f *testing.F) {
	for _, c := range syntaxCases() {
		f.Add([]byte(c))
	}
	for i, s := range stringCases() {
		if i%7 == 0 {
			f.Add([]byte(`{"` + s + `":["` + s + `"]}`))
		}
	}
	f.Add(benchBody(f, benchdata.Sizes[0]))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := sameParse(data); err != nil {
			t.Fatalf("%q: %v", data, err)
		}
	})
}

func FuzzAppendStringMatchesReference(f *testing.F) {
	for i, c := range stringCases() {
		if i%7 == 0 {
			f.Add(c)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString([]byte("p"), s), refAppendString([]byte("p"), s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %q, want %q", s, got, want)
		}
		if got, want := AppendStringASCII([]byte("p"), s), refAppendStringASCII([]byte("p"), s); !bytes.Equal(got, want) {
			t.Fatalf("AppendStringASCII(%q) = %q, want %q", s, got, want)
		}
	})
}

// FuzzAppendIntsMatchesReference reads the ids as varints of the input
// (zigzag, so small and negative ids are as likely as huge ones) and as
// whole 64-bit words.
func FuzzAppendIntsMatchesReference(f *testing.F) {
	var seed []byte
	for _, id := range intCases()[:80] {
		seed = binary.AppendVarint(seed, int64(id))
	}
	f.Add(seed, false)
	f.Add(seed, true)
	f.Fuzz(func(t *testing.T, data []byte, words bool) {
		var ids []int
		for len(data) > 0 {
			if words {
				var w [8]byte
				n := copy(w[:], data)
				ids = append(ids, int(binary.LittleEndian.Uint64(w[:])))
				data = data[n:]
				continue
			}
			v, n := binary.Varint(data)
			if n <= 0 {
				ids = append(ids, int(data[0]))
				n = 1
			} else {
				ids = append(ids, int(v))
			}
			data = data[n:]
		}
		if got, want := AppendInts([]byte("p"), ids), refAppendInts([]byte("p"), ids); !bytes.Equal(got, want) {
			t.Fatalf("AppendInts(%v) = %s, want %s", ids, got, want)
		}
	})
}

// longString is a JSON document holding one string of n plain base64
// bytes (a data URL's alphabet) with mark at offset at, so that the
// string crosses skipLong's windows with its stop or odd byte anywhere.
func longString(n, at int, mark string) []byte {
	b := []byte(`{"url":"`)
	for i := range n {
		if i == at {
			b = append(b, mark...)
		}
		b = append(b, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="[i*7%65])
	}
	if at >= n {
		b = append(b, mark...)
	}
	return append(b, `"}`...)
}

// TestLongStringsMatchReference holds the windowed scan of long strings to
// the reference parser: every kind of byte that stops or marks a run
// (escape, quote, control character, DEL, UTF-8, invalid UTF-8), at and
// around each window's edges, in strings long enough to take every window
// size.
func TestLongStringsMatchReference(t *testing.T) {
	marks := []string{`\n`, `\u00e9`, `\"`, "\x01", "\x7f", "é", "\xff", `"`, "\t", ""}
	var ats []int
	for edge := swarBytes; edge < 3*maxWindow; edge *= 2 {
		for _, d := range []int{-9, -8, -1, 0, 1, 7, 8, 63} {
			ats = append(ats, edge+d, edge+edge/2+d, 8+edge+d)
		}
	}
	ats = append(ats, 0, 1, 7, 8, 9)
	for _, mark := range marks {
		for _, at := range ats {
			for _, n := range []int{at, at + 1, at + 9, at + 1000, 3 * maxWindow} {
				if err := sameParse(longString(n, at, mark)); err != nil {
					t.Fatalf("n=%d at=%d mark=%q: %v", n, at, mark, err)
				}
			}
		}
	}
}

// FuzzLongStringMatchesReference lets the fuzzer place its bytes inside a
// long run of plain ones, where skipLong scans.
func FuzzLongStringMatchesReference(f *testing.F) {
	f.Add(uint16(300), []byte(`\n`), []byte(`x"`))
	f.Add(uint16(5000), []byte("é\x7f"), []byte("\x01"))
	f.Fuzz(func(t *testing.T, n uint16, mid, tail []byte) {
		doc := longString(int(n), int(n)/2, string(mid))
		doc = append(doc[:len(doc)-2], tail...)
		doc = append(doc, `"}`...)
		if err := sameParse(doc); err != nil {
			t.Fatalf("n=%d mid=%q tail=%q: %v", n, mid, tail, err)
		}
	})
}
