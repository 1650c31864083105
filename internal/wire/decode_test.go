package wire

import (
	"errors"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct {
		in, msg, py string
	}{
		{`{"a" 1}`, "Expecting ':' delimiter (char 5)", "Expecting ':' delimiter: line 1 column 6 (char 5)"},
		{"[1,\n 2,\n é", "Expecting value (char 9)", "Expecting value: line 3 column 2 (char 9)"},
		{`"abc`, "Unterminated string starting at (char 0)", "Unterminated string starting at: line 1 column 1 (char 0)"},
		{`[1] x`, "Extra data (char 4)", "Extra data: line 1 column 5 (char 4)"},
		{`NaN`, "Expecting value (char 0)", "Expecting value: line 1 column 1 (char 0)"},
	} {
		_, err := Parse([]byte(tt.in))
		var syn *SyntaxError
		if !errors.As(err, &syn) || syn.Error() != tt.msg || syn.PyString() != tt.py {
			t.Errorf("Parse(%q) = %v (%q), want %q / %q", tt.in, err, pyString(err), tt.msg, tt.py)
		}
		if verr := Valid([]byte(tt.in)); verr == nil || verr.Error() != tt.msg {
			t.Errorf("Valid(%q) = %v, want %q", tt.in, verr, tt.msg)
		}
	}
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	if _, err := Parse([]byte(deep)); !errors.Is(err, ErrTooDeep) {
		t.Errorf("too deep: %v", err)
	}
}

func pyString(err error) string {
	var syn *SyntaxError
	if errors.As(err, &syn) {
		return syn.PyString()
	}
	return ""
}

func TestParseStrings(t *testing.T) {
	in := "[\"plain\",\"a\\nb\\u00e9\\ud83d\\ude00\",\"\\ud800x\",\"\xff\xfe\",\"\\\"\\\\\\/\\b\\f\\r\\t\"]"
	n, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"plain", "a\nbé😀", "\uFFFDx", "\uFFFD\uFFFD", "\"\\/\b\f\r\t"}
	for i, w := range want {
		if n.Arr[i].S != w {
			t.Errorf("string %d = %q, want %q", i, n.Arr[i].S, w)
		}
	}
	if string(n.Arr[1].Raw) != `"a\nb\u00e9\ud83d\ude00"` {
		t.Errorf("Raw = %s", n.Arr[1].Raw)
	}
	// Many strings across arena chunks stay intact.
	var b strings.Builder
	b.WriteByte('[')
	for i := range 5000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"x\n` + strings.Repeat("y", i%97) + `"`)
	}
	b.WriteByte(']')
	n, err = Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range n.Arr {
		if c.S != "x\n"+strings.Repeat("y", i%97) {
			t.Fatalf("string %d = %q", i, c.S)
		}
	}
}

func TestParseTree(t *testing.T) {
	n, err := Parse([]byte(` {"b":[1,{"c":[]}],"a":true,"b":null} `))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(n.Keys, ",") != "b,a" || n.Vals[0].Kind != Null || !n.Vals[1].B {
		t.Fatalf("keys %q vals %v %v", n.Keys, n.Vals[0].Kind, n.Vals[1].B)
	}
	if string(n.Raw) != `{"b":[1,{"c":[]}],"a":true,"b":null}` || n.Depth != 3 {
		t.Fatalf("Raw %s Depth %d", n.Raw, n.Depth)
	}
	m, _ := Parse([]byte(`{"b":[1,{"c":[]}]}`))
	if m.Depth != 3 {
		t.Fatalf("Depth %d, want 3", m.Depth)
	}
	// Appending to a parsed list never writes into a neighbour's.
	l, _ := Parse([]byte(`[[1],[2]]`))
	l.Arr[0].Arr = append(l.Arr[0].Arr, NullNode)
	if l.Arr[1].Arr[0].S != "2" {
		t.Fatal("append to one list changed the next")
	}
}
