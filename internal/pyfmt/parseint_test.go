package pyfmt

import (
	"errors"
	"math"
	"strconv"
	"testing"
)

func TestParseInt(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		err  error
	}{
		{"178956970", 178956970, nil},
		{"178_956_970", 178956970, nil},
		{" \t+42\n", 42, nil},
		{"-7", -7, nil},
		{"007", 7, nil},
		{"0", 0, nil},
		{"\x1c1\x1f", 1, nil},
		{"", 0, strconv.ErrSyntax},
		{" ", 0, strconv.ErrSyntax},
		{"abc", 0, strconv.ErrSyntax},
		{"1.5", 0, strconv.ErrSyntax},
		{"1e6", 0, strconv.ErrSyntax},
		{"_1", 0, strconv.ErrSyntax},
		{"1_", 0, strconv.ErrSyntax},
		{"1__0", 0, strconv.ErrSyntax},
		{"+-1", 0, strconv.ErrSyntax},
		{"--1", 0, strconv.ErrSyntax},
		{"+", 0, strconv.ErrSyntax},
		{"+_1", 0, strconv.ErrSyntax},
		{"0x10", 0, strconv.ErrSyntax},
		{"99999999999999999999", math.MaxInt64, strconv.ErrRange},
		{"-99999999999999999999", math.MinInt64, strconv.ErrRange},
	} {
		got, err := ParseInt(tt.in)
		if got != tt.want || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("ParseInt(%q) = %d, %v; want %d, %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}
