package anthropic

import (
	"testing"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// pyValueCases pin Python 3.11's json.dumps(json.loads(in)) and
// str(json.loads(in)).
var pyValueCases = []struct{ in, dumps, str string }{
	{`{"a":1,"b":2,"a":3}`, `{"a": 3, "b": 2}`, `{'a': 3, 'b': 2}`},
	{`{"q":"\u00e9","n":[1,2.50,1e20,-0,true,null,{}]}`,
		`{"q": "\u00e9", "n": [1, 2.5, 1e+20, 0, true, null, {}]}`,
		`{'q': 'é', 'n': [1, 2.5, 1e+20, 0, True, None, {}]}`},
	{`["\ud83d\ude00","x\u2028","\"\n'"]`, `["\ud83d\ude00", "x\u2028", "\"\n'"]`, `['😀', 'x\u2028', '"\n\'']`},
}

func TestPyValue(t *testing.T) {
	for _, c := range pyValueCases {
		n, err := wire.Parse([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(pylax.AppendPyDumps(nil, n)); got != c.dumps {
			t.Errorf("json.dumps(%s) = %s, want %s", c.in, got, c.dumps)
		}
		if got := pyStr(n); got != c.str {
			t.Errorf("str(%s) = %s, want %s", c.in, got, c.str)
		}
	}
}

// withoutText is a copy of the tree n without its text: written again,
// a repeated key appears once, as in the dict json.loads makes.
func withoutText(n *wire.Node) *wire.Node {
	c := *n
	c.Raw = nil
	c.Arr = make([]*wire.Node, len(n.Arr))
	for i, v := range n.Arr {
		c.Arr[i] = withoutText(v)
	}
	c.Vals = make([]*wire.Node, len(n.Vals))
	for i, v := range n.Vals {
		c.Vals[i] = withoutText(v)
	}
	return &c
}

// pyValueDiff holds the tree writers to render's readers of a value's
// text, the reference they replace; render.PyJSONDumps reads a repeated
// key twice, so it is given the text of the dict json.loads makes.
func pyValueDiff(t *testing.T, data []byte) {
	n, err := wire.Parse(data)
	if err != nil {
		return
	}
	if got, want := pyStr(n), pylax.StrOfJSON(data); got != want {
		t.Fatalf("%s: str %s, reference %s", data, got, want)
	}
	want, err := refPyJSONDumps(wire.AppendNode(nil, withoutText(n)))
	if err != nil {
		t.Fatalf("%s: reference json.dumps: %v", data, err)
	}
	if got := string(pylax.AppendPyDumps(nil, n)); got != want {
		t.Fatalf("%s: json.dumps %s, reference %s", data, got, want)
	}
}

func FuzzPyValueMatchesRef(f *testing.F) {
	for _, c := range pyValueCases {
		f.Add([]byte(c.in))
	}
	for _, s := range []string{`1e400`, `-1e400`, `[1E400, 0.1, 1e-400, 123456789012345678901234567890]`, `"\ud800"`, `{"\u0000":"\u007f\u0085"}`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	for _, c := range loadAnthropicGolden(f) {
		f.Add([]byte(c.Anthropic))
	}
	f.Fuzz(pyValueDiff)
}
