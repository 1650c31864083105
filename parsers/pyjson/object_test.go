package pyjson

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// recordSink rebuilds the canonical object from the fields an Object
// reports, as json.dumps writes it.
type recordSink struct {
	out    strings.Builder
	fields int
}

func (s *recordSink) Field(key string) {
	if s.fields > 0 {
		s.out.WriteString(", ")
	}
	s.fields++
	s.out.WriteString(Quote(key) + ": ")
}
func (s *recordSink) FieldBytes(_ string, canon []byte) { s.out.Write(canon) }
func (s *recordSink) FieldEnd(string)                   {}

// stringSink also takes verbatim input pieces as strings.
type stringSink struct{ recordSink }

func (s *stringSink) FieldString(_ string, canon string) { s.out.WriteString(canon) }

var objectCases = []struct{ in, want string }{
	{`{"a": "plain text with \"quotes\", \\ and \n\t\r\b\f escapes"}`, `{"a": "plain text with \"quotes\", \\ and \n\t\r\b\f escapes"}`},
	{`{"p": "x\/y \u00e9\u0041 \ud83d\ude00 end", "n": [1, 2.50, "s\u0001"]}`, "{\"p\": \"x/y \u00e9A \U0001F600 end\", \"n\": [1, 2.5, \"s\\u0001\"]}"},
	{`{"code":"x0 := f(0)\nx1 := f(1)\n","path":"main.go"}`, `{"code": "x0 := f(0)\nx1 := f(1)\n", "path": "main.go"}`},
	{`{"k\"ey": {"in\\ner": "v\\"}}`, `{"k\"ey": {"in\\ner": "v\\"}}`},
}

// TestObjectSinksAgree feeds objects whole and in random pieces to a sink
// that takes verbatim runs as strings and to one that does not: both must
// rebuild json.dumps's text, so the fast path hands out exactly what the
// byte machine would.
func TestObjectSinksAgree(t *testing.T) {
	cases := objectCases
	for _, tc := range pythonCanonical {
		if strings.HasPrefix(strings.TrimSpace(tc.in), "{") {
			cases = append(cases, tc)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range cases {
		for k := range 30 {
			for _, withString := range []bool{false, true} {
				var rec *recordSink
				var sink FieldSink
				if withString {
					s := &stringSink{}
					rec, sink = &s.recordSink, s
				} else {
					rec = &recordSink{}
					sink = rec
				}
				var o Object
				src := strings.TrimSpace(tc.in)
				for i := 0; i < len(src); {
					j := len(src)
					if k > 0 {
						j = min(i+1+r.IntN(6), len(src))
					}
					n, err := o.Feed(src[i:j], sink)
					if err != nil {
						t.Fatalf("%q: %v", tc.in, err)
					}
					if n != j-i {
						t.Fatalf("%q: consumed %d of %d", tc.in, n, j-i)
					}
					i = j
				}
				if err := o.End(); err != nil {
					t.Fatalf("%q: %v", tc.in, err)
				}
				if got := "{" + rec.out.String() + "}"; got != tc.want {
					t.Fatalf("%q (string sink %v, chunking %d):\n got %s\nwant %s", tc.in, withString, k, got, tc.want)
				}
			}
		}
	}
}

func TestPlainRun(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{`abc`, 3}, {`ab"c`, 2}, {`a\nb`, 4}, {`a\`, 1}, {`a\/`, 1}, {`a\u0041`, 1}, {"a\x01", 1},
		{`\"\\\b\f\r\t`, 12}, {"\u00e9\u6771", 5},
	} {
		v := Value{state: stString}
		if got := v.plainRun(tc.in); got != tc.want {
			t.Errorf("plainRun(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
	for _, v := range []Value{{state: stNumber}, {state: stEscape}, {state: stString, high: 0xD83D}} {
		if got := v.plainRun("abc"); got != 0 {
			t.Errorf("plainRun in %+v = %d, want 0", v, got)
		}
	}
}
