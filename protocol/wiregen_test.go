package protocol

import (
	"encoding/json"
	"math/rand/v2"
)

// The random-value generators the differential tests of the append
// writers share.

// wireStrings are the strings that exercise every escaping rule: HTML,
// controls, quotes, U+2028/9, a literal backslash-u2028, astral, DEL.
var wireStrings = []string{"", "plain", "<|im_start|>a&b", "a\u2028b\u2029c", `x\u2028`, "\b\f\x01\n\r\t\"\\",
	"café 天气 😀", "\x7f", "\x00\x1f", "tab\there", "<think>\n</think>"}

// wireRaws are raw members as a client may send them: spaced, escaped,
// nested.
var wireRaws = []json.RawMessage{nil, json.RawMessage(`{}`), json.RawMessage(`{"a": 1, "b" : [1, 2 ,{"c":null}]}`),
	json.RawMessage("{\n\t\"k\": \"\\u2028 \\\\u2029 \\u003c\"\n}"), json.RawMessage(`{"x":"a b"}`), json.RawMessage(`"s"`)}

func randWireString(rng *rand.Rand) string {
	var b []byte
	for range rng.IntN(4) {
		b = append(b, wireStrings[rng.IntN(len(wireStrings))]...)
	}
	return string(b)
}

// wireGen draws the members of random response and request values.
type wireGen struct{ rng *rand.Rand }

func (g wireGen) maybe() bool { return g.rng.IntN(2) == 0 }

func (g wireGen) str() string { return randWireString(g.rng) }

func (g wireGen) strp() *string {
	if g.maybe() {
		return nil
	}
	return new(g.str())
}

func (g wireGen) boolp() *bool {
	if g.maybe() {
		return nil
	}
	return new(g.maybe())
}

func (g wireGen) intp() *int {
	if g.maybe() {
		return nil
	}
	return new(g.rng.IntN(40) - 2)
}

// ints is nil or up to max-1 ids, a few of them negative.
func (g wireGen) ints(max int) []int {
	if g.maybe() {
		return nil
	}
	out := make([]int, g.rng.IntN(max))
	for i := range out {
		out[i] = g.rng.IntN(300000) - 5
	}
	return out
}

func (g wireGen) strs() []string {
	if g.maybe() {
		return nil
	}
	out := make([]string, g.rng.IntN(4))
	for i := range out {
		out[i] = g.str()
	}
	return out
}

func (g wireGen) raw() json.RawMessage { return wireRaws[g.rng.IntN(len(wireRaws))] }

// logprobFloats are logprobs in both of encoding/json's float formats and
// at their edges.
var logprobFloats = []float64{0, -0.5, -1e-7, -123.456, -9.5367431640625e-07, -1e21, -3.4028234663852886e+38, -2.220446049250313e-16}

func (g wireGen) logprob() *float64 {
	if g.maybe() {
		return nil
	}
	return new(logprobFloats[g.rng.IntN(len(logprobFloats))])
}
