package wire

import (
	"bytes"
	"fmt"
	"testing"
)

// stripRaw copies n without its text, as a tree built by code has none.
func stripRaw(n *Node) *Node {
	c := &Node{Kind: n.Kind, B: n.B, S: n.S, Keys: n.Keys}
	for _, v := range n.Arr {
		c.Arr = append(c.Arr, stripRaw(v))
	}
	for _, v := range n.Vals {
		c.Vals = append(c.Vals, stripRaw(v))
	}
	return c
}

// sameValue reports the first difference between two trees' values.
func sameValue(got, want *Node) error {
	if got.Kind != want.Kind || got.B != want.B || got.S != want.S || len(got.Arr) != len(want.Arr) ||
		fmt.Sprint(got.Keys) != fmt.Sprint(want.Keys) {
		return fmt.Errorf("{%v %v %q %d %q}, want {%v %v %q %d %q}", got.Kind, got.B, got.S, len(got.Arr), got.Keys,
			want.Kind, want.B, want.S, len(want.Arr), want.Keys)
	}
	for i := range got.Arr {
		if err := sameValue(got.Arr[i], want.Arr[i]); err != nil {
			return err
		}
	}
	for i := range got.Vals {
		if err := sameValue(got.Vals[i], want.Vals[i]); err != nil {
			return err
		}
	}
	return nil
}

// checkAppendNode: a parsed tree writes its own text; the same tree
// without text writes JSON that parses back to the same values.
func checkAppendNode(t *testing.T, data []byte) {
	n, err := Parse(data)
	if err != nil {
		return
	}
	if got := AppendNode(nil, n); !bytes.Equal(got, n.Raw) {
		t.Fatalf("%q: parsed node wrote %q", data, got)
	}
	out := AppendNode([]byte("x"), stripRaw(n))
	if out[0] != 'x' {
		t.Fatalf("%q: AppendNode dropped dst", data)
	}
	back, err := Parse(out[1:])
	if err != nil {
		t.Fatalf("%q: wrote %q, which does not parse: %v", data, out[1:], err)
	}
	if err := sameValue(back, n); err != nil {
		t.Fatalf("%q: wrote %q, which reads back as %v", data, out[1:], err)
	}
}

func TestAppendNode(t *testing.T) {
	for _, s := range []string{`null`, `true`, `false`, `-1.5e3`, `"a\"\\\n\u0001\u2028é"`, `[]`, `{}`,
		` { "a" : [1, {"b": null}], "a": 2, "c\u0000": "x" } `, `[[[[]]], {"": {}}]`, `"\ud800"`} {
		checkAppendNode(t, []byte(s))
	}
	if got := string(AppendNode(nil, NullNode)); got != "null" {
		t.Errorf("NullNode wrote %s", got)
	}
	built := &Node{Kind: Object, Keys: []string{"k", "n"}, Vals: []*Node{{Kind: String, S: "v"}, {Kind: Number, S: "1"}}}
	if got := string(AppendNode(nil, built)); got != `{"k":"v","n":1}` {
		t.Errorf("built object wrote %s", got)
	}
}

func FuzzAppendNode(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.5,"x",true,null,{}],"b":{"c":"\u00e9"}}`))
	f.Add([]byte(`"\ud83d\ude00 \u007f"`))
	f.Fuzz(checkAppendNode)
}
