package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/vrender/vrender/internal/pyfmt"
	"strings"
	"testing"
)

// longIntBodies were checked against Python 3.11's json.loads: an integer
// literal over 4300 digits raises ValueError (not JSONDecodeError), which
// FastAPI answers with "There was an error parsing the body"; the sign is
// not a digit, floats and strings have no limit.
var longIntBodies = []struct {
	body    string
	refused bool
}{
	{`{"max_tokens": ` + strings.Repeat("9", 4300) + `}`, false},
	{`{"max_tokens": -` + strings.Repeat("9", 4300) + `}`, false},
	{`{"max_tokens": ` + strings.Repeat("9", 4301) + `}`, true},
	{`{"seed": -` + strings.Repeat("9", 4301) + `}`, true},
	{`[1, ` + strings.Repeat("5", 5000) + `]`, true},
	{strings.Repeat("1", 4301), true},
	{`{"t": ` + strings.Repeat("9", 5000) + `.5}`, false},
	{`{"t": ` + strings.Repeat("9", 5000) + `e-5000}`, false},
	{`{"t": 0.` + strings.Repeat("9", 5000) + `}`, false},
	{`{"t": 1e` + strings.Repeat("9", 5000) + `}`, false},
	{`{"prompt": "` + strings.Repeat("9", 5000) + `"}`, false},
	{`{"prompt": "\\\"` + strings.Repeat("9", 5000) + `\\\\"}`, false},
	{`{"prompt": "\\\\", "n": ` + strings.Repeat("9", 5000) + `}`, true},
}

func TestLongIntegerBody(t *testing.T) {
	for _, tc := range longIntBodies {
		_, err := ParseJSONBody([]byte(tc.body))
		_, _, errTree := ParseJSONTree([]byte(tc.body))
		for _, e := range []error{err, errTree} {
			if tc.refused && !errors.Is(e, ErrBodyNotParsable) || !tc.refused && e != nil {
				t.Errorf("%.40q…: err = %v, want refused %v", tc.body, e, tc.refused)
			}
		}
		if got := refLongInt([]byte(tc.body)); got != tc.refused {
			t.Errorf("%.40q…: reference says %v", tc.body, got)
		}
	}
}

// A million-digit integer is refused without being converted (the
// conversion costs seconds); no clock here, a regression shows as a slow
// test.
func TestMillionDigitBody(t *testing.T) {
	body := []byte(`{"max_tokens": ` + strings.Repeat("7", 1_000_000) + `}`)
	if _, err := ParseJSONBody(body); !errors.Is(err, ErrBodyNotParsable) {
		t.Fatalf("err = %v", err)
	}
}

// refLongInt is hasLongInt the slow way: decode every number and look.
func refLongInt(b []byte) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		if n, ok := tok.(json.Number); ok {
			s := strings.TrimPrefix(string(n), "-")
			if !strings.ContainsAny(s, ".eE") && len(s) > pyfmt.MaxIntDigits {
				return true
			}
		}
	}
}

// Sampling every pyfmt.MaxIntDigits-th byte finds every run longer than that,
// wherever it starts.
func TestHasLongDigitRunAnyOffset(t *testing.T) {
	naive := func(b []byte) bool {
		n := 0
		for _, c := range b {
			if c >= '0' && c <= '9' {
				n++
				if n > pyfmt.MaxIntDigits {
					return true
				}
			} else {
				n = 0
			}
		}
		return false
	}
	for _, run := range []int{pyfmt.MaxIntDigits, pyfmt.MaxIntDigits + 1, 2*pyfmt.MaxIntDigits + 3} {
		for off := 0; off < pyfmt.MaxIntDigits+20; off += 7 {
			b := []byte(strings.Repeat("x", off) + strings.Repeat("7", run) + "]")
			if got, want := hasLongDigitRun(b), naive(b); got != want {
				t.Fatalf("run %d at %d: %v, want %v", run, off, got, want)
			}
		}
	}
}
