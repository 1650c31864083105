package hostile

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Placeholder marks where a generated fragment goes in a case's body; a
// case with a generator and no body is the fragment alone.
const Placeholder = "@@"

// A Generator makes a body fragment from its argument (the text after the
// first ':' of a case's gen). Fragments are streamed, so a 100 MB body
// never sits in memory.
type Generator func(arg string) (io.Reader, error)

// Generators are the fragment makers that need no server:
//
//	deep_array:N    N nested JSON arrays: [[[...]]]
//	deep_object:N   N nested JSON objects: {"a":{"a":...1}}
//	big_string:N    a JSON string of N ASCII letters
//	int_list:N:V    a JSON array of N copies of the integer literal V
//	str_list:N:S    a JSON array of N copies of the JSON string "S"
//	hex:H           the raw bytes H (hex; spaces ignored), e.g. invalid UTF-8
func Generators() map[string]Generator {
	return map[string]Generator{
		"deep_array":  deepArray,
		"deep_object": deepObject,
		"big_string":  bigString,
		"int_list":    intList,
		"str_list":    strList,
		"hex":         rawHex,
	}
}

// Expand streams c's body: its Body with the placeholder replaced by the
// fragment of its generator, looked up in gens.
func Expand(c *Case, gens map[string]Generator) (io.Reader, error) {
	if c.Gen == "" {
		return strings.NewReader(c.Body), nil
	}
	name, arg, _ := strings.Cut(c.Gen, ":")
	g, ok := gens[name]
	if !ok {
		return nil, fmt.Errorf("unknown generator %q", name)
	}
	frag, err := g(arg)
	if err != nil {
		return nil, fmt.Errorf("generator %s: %w", c.Gen, err)
	}
	if c.Body == "" {
		return frag, nil
	}
	before, after, ok := strings.Cut(c.Body, Placeholder)
	if !ok || strings.Contains(after, Placeholder) {
		return nil, fmt.Errorf("body must hold the placeholder %s exactly once", Placeholder)
	}
	return io.MultiReader(strings.NewReader(before), frag, strings.NewReader(after)), nil
}

// maxRepeat bounds generated sizes: enough for 100 MB bodies, small
// enough that a typo cannot ask for terabytes.
const maxRepeat = 1 << 28

func count(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > maxRepeat {
		return 0, fmt.Errorf("count %q must be an integer in [0, %d]", s, maxRepeat)
	}
	return n, nil
}

func deepArray(arg string) (io.Reader, error) {
	n, err := count(arg)
	if err != nil {
		return nil, err
	}
	return io.MultiReader(repeat("[", n), repeat("]", n)), nil
}

func deepObject(arg string) (io.Reader, error) {
	n, err := count(arg)
	if err != nil {
		return nil, err
	}
	return io.MultiReader(repeat(`{"a":`, n), strings.NewReader("1"), repeat("}", n)), nil
}

func bigString(arg string) (io.Reader, error) {
	n, err := count(arg)
	if err != nil {
		return nil, err
	}
	return io.MultiReader(strings.NewReader(`"`), repeat("a", n), strings.NewReader(`"`)), nil
}

func intList(arg string) (io.Reader, error) {
	ns, v, ok := strings.Cut(arg, ":")
	if !ok || v == "" {
		return nil, fmt.Errorf("want N:V")
	}
	n, err := count(ns)
	if err != nil {
		return nil, err
	}
	return list(n, v), nil
}

func strList(arg string) (io.Reader, error) {
	ns, s, ok := strings.Cut(arg, ":")
	if !ok {
		return nil, fmt.Errorf("want N:S")
	}
	n, err := count(ns)
	if err != nil {
		return nil, err
	}
	return list(n, strconv.Quote(s)), nil
}

// list is "[v,v,...,v]" with n elements.
func list(n int, v string) io.Reader {
	if n == 0 {
		return strings.NewReader("[]")
	}
	return io.MultiReader(strings.NewReader("["+v), repeat(","+v, n-1), strings.NewReader("]"))
}

func rawHex(arg string) (io.Reader, error) {
	b, err := hex.DecodeString(strings.ReplaceAll(arg, " ", ""))
	if err != nil {
		return nil, err
	}
	return bytes.NewReader(b), nil
}

// repeat streams s n times without materialising the result.
func repeat(s string, n int) io.Reader {
	return &repeater{unit: s, left: n}
}

type repeater struct {
	unit string
	left int
	off  int // bytes of the current unit already read
}

func (r *repeater) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && r.left > 0 {
		c := copy(p[n:], r.unit[r.off:])
		n += c
		r.off += c
		if r.off == len(r.unit) {
			r.off = 0
			r.left--
		}
	}
	if n == 0 && r.left == 0 {
		return 0, io.EOF
	}
	return n, nil
}
