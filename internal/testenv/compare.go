package testenv

import (
	"encoding/json"
	"testing"
)

// FirstDiff returns the index of the first element where a and b differ,
// or the shorter length when one is a prefix of the other (so equal
// slices give their length).
func FirstDiff[T comparable](a, b []T) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// MustJSON is v marshalled with encoding/json; a value that cannot be
// marshalled fails the test.
func MustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
