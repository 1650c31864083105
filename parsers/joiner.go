package parsers

import "strings"

// joiner concatenates the pieces of one push's output. The first non-empty
// piece is kept as is, so a push that yields a single piece (nearly every
// push of a one-token stream) allocates nothing; more pieces go through a
// builder, so a push carrying many markers stays linear.
type joiner struct {
	first string
	b     strings.Builder
	multi bool
}

func (j *joiner) add(s string) {
	switch {
	case s == "":
	case j.multi:
		j.b.WriteString(s)
	case j.first == "":
		j.first = s
	default:
		j.b.Grow(len(j.first) + len(s))
		j.b.WriteString(j.first)
		j.b.WriteString(s)
		j.multi = true
	}
}

// addBytes adds a copy of b (a machine's held bytes are reused).
func (j *joiner) addBytes(b []byte) { j.add(string(b)) }

// Reset empties j for the next push.
func (j *joiner) Reset() { *j = joiner{} }

// String is the concatenation so far.
func (j *joiner) String() string {
	if j.multi {
		return j.b.String()
	}
	return j.first
}

// concat is a + b without the runtime call when one side is empty (a
// push's output is usually a single piece).
func concat(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + b
}
