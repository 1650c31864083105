package pyjson

import (
	"errors"
	"github.com/vrender/vrender/internal/statecodec"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// intDigitCases are checked against Python 3.11's
// json.dumps(json.loads(in)): integer literals over 4300 digits raise
// ValueError; the sign is not a digit; floats have no such limit.
var intDigitCases = []struct {
	in, want string
	digits   int // > 0: refused, with this digit count in the message
}{
	{in: strings.Repeat("1", 4300), want: strings.Repeat("1", 4300)},
	{in: "-" + strings.Repeat("1", 4300), want: "-" + strings.Repeat("1", 4300)},
	{in: strings.Repeat("1", 4301), digits: 4301},
	{in: "-" + strings.Repeat("1", 4301), digits: 4301},
	{in: "[" + strings.Repeat("9", 5000) + "]", digits: 5000},
	{in: `{"a": ` + strings.Repeat("7", 4301) + `}`, digits: 4301},
	{in: strings.Repeat("1", 4301) + ".0", want: "Infinity"},
	{in: "1e" + strings.Repeat("1", 5000), want: "Infinity"},
	{in: "0." + strings.Repeat("1", 5000), want: "0.1111111111111111"},
	{in: strings.Repeat("1", 5000) + "e-5000", want: "0.1111111111111111"},
}

func TestIntDigitLimit(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 5))
	for _, tc := range intDigitCases {
		got, err := Canonical(tc.in)
		chunked, errChunked := feedChunks(tc.in, r)
		if tc.digits == 0 {
			if err != nil || got != tc.want || errChunked != nil || chunked != tc.want {
				t.Errorf("Canonical(%.20q...) = %.20q, %v (chunked %.20q, %v); want %.20q",
					tc.in, got, err, chunked, errChunked, tc.want)
			}
			continue
		}
		want := "Exceeds the limit (4300 digits) for integer string conversion: value has " +
			strconv.Itoa(tc.digits) + " digits; use sys.set_int_max_str_digits() to increase the limit"
		for _, e := range []error{err, errChunked} {
			if !errors.Is(e, ErrSyntax) || !errors.Is(e, ErrIntDigits) || !strings.HasSuffix(e.Error(), ": "+want) {
				t.Errorf("Canonical(%.20q...) error = %v; want ErrSyntax, ErrIntDigits and %q", tc.in, e, want)
			}
		}
	}
}

// A million-digit literal must be refused (or, as a float, parsed) in
// linear time; before, the byte-wise build of the number's text took
// seconds at 100,000 digits. No clock here: a regression shows as a test
// that runs for minutes.
func TestHugeNumberLiterals(t *testing.T) {
	digits := strings.Repeat("3", 1_000_000)
	if _, err := Canonical(digits); !errors.Is(err, ErrIntDigits) {
		t.Errorf("million-digit integer: err = %v, want ErrIntDigits", err)
	}
	if _, err := Canonical(`{"n": [-` + digits + `]}`); !errors.Is(err, ErrIntDigits) {
		t.Errorf("million-digit integer in an object: err = %v, want ErrIntDigits", err)
	}
	for in, want := range map[string]string{
		"0." + digits:        "0.3333333333333333",
		digits + ".5":        "Infinity",
		"1e-" + digits:       "0.0",
		digits + "e-1000000": "0.3333333333333333",
	} {
		if got, err := Canonical(in); err != nil || got != want {
			t.Errorf("Canonical(%.20q...) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// The long-literal float path agrees bit for bit with strconv.ParseFloat
// wherever the latter's exponent does not saturate.
func TestParseLongFloatMatchesParseFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 7))
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + r.IntN(10))
		}
		return string(b)
	}
	for k := 0; k < 20000; k++ {
		s := digits(1 + r.IntN(25))
		if r.IntN(2) == 0 {
			s = strings.TrimLeft(s, "0")
			if s == "" {
				s = "0"
			}
		}
		if r.IntN(2) == 0 {
			s += "." + digits(1+r.IntN(900))
		}
		if r.IntN(2) == 0 {
			s += []string{"e", "E", "e+", "e-"}[r.IntN(4)] + digits(1+r.IntN(3))
		}
		if r.IntN(3) == 0 {
			s = "-" + s
		}
		want, _ := strconv.ParseFloat(s, 64)
		if got := parseLongFloat(s); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("parseLongFloat(%q) = %v, want %v", s, got, want)
		}
	}
}

// A long number fed a few bytes per push, as a model streams it, costs
// linear time; copies of a machine mid-number (a parser's saved state)
// grow apart without writing into each other's text; a checkpoint taken
// mid-number resumes to the same output.
func TestNumberFedInPieces(t *testing.T) {
	digits := strings.Repeat("3", 300_000)
	var v Value
	var out []byte
	src := "[0." + digits + ", 1]"
	for i := 0; i < len(src); i += 3 {
		var err error
		if out, _, err = v.Feed(out, src[i:min(i+3, len(src))]); err != nil {
			t.Fatal(err)
		}
	}
	if got := string(out); got != "[0.3333333333333333, 1]" {
		t.Fatalf("pieces: %q", got)
	}

	var a Value
	if _, _, err := a.Feed(nil, "[12"); err != nil {
		t.Fatal(err)
	}
	b := a
	outA, _, _ := a.Feed(nil, "34]")
	outB, _, _ := b.Feed(nil, "56]")
	if string(outA) != "1234]" || string(outB) != "1256]" {
		t.Fatalf("copies: %q and %q, want 1234] and 1256]", outA, outB)
	}

	var c Value
	if _, _, err := c.Feed(nil, `{"n": -12`); err != nil {
		t.Fatal(err)
	}
	enc := statecodec.NewEncoder(nil)
	c.Codec(enc)
	var d Value
	dec := statecodec.NewDecoder(enc.Bytes())
	d.Codec(dec)
	if err := dec.Err(); err != nil {
		t.Fatal(err)
	}
	outC, _, _ := c.Feed(nil, "5.0}")
	outD, _, _ := d.Feed(nil, "5.0}")
	if string(outC) != "-125.0}" || string(outD) != string(outC) {
		t.Fatalf("checkpoint: %q resumed as %q", outC, outD)
	}
}
