package protocol

import (
	"bytes"
	"errors"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// refToolDump is how render read a tool before tools were typed: from the
// request's tree of it, pydantic's model_dump of ChatCompletionToolsParam
// (declared fields first, defaults filled in, then extras in request
// order).
func refToolDump(t *wire.Node) *wire.Node {
	typ, ok := t.Get("type")
	if !ok {
		typ = &wire.Node{Kind: wire.String, S: "function"}
	}
	fn, _ := t.Get("function")
	name, _ := fn.Get("name")
	dfn := &wire.Node{Kind: wire.Object, Keys: []string{"name"}, Vals: []*wire.Node{name}}
	for _, k := range []string{"description", "parameters"} {
		v, ok := fn.Get(k)
		if !ok {
			v = wire.NullNode
		}
		dfn.Set(k, v)
	}
	for i, k := range fn.Keys {
		if k != "name" && k != "description" && k != "parameters" {
			dfn.Set(k, fn.Vals[i])
		}
	}
	out := &wire.Node{Kind: wire.Object, Keys: []string{"type", "function"}, Vals: []*wire.Node{typ, dfn}}
	for i, k := range t.Keys {
		if k != "type" && k != "function" {
			out.Set(k, t.Vals[i])
		}
	}
	return out
}

// canonical is n written from its values, whatever text it was parsed
// from.
func canonical(n *wire.Node) []byte {
	var strip func(*wire.Node) *wire.Node
	strip = func(n *wire.Node) *wire.Node {
		c := &wire.Node{Kind: n.Kind, B: n.B, S: n.S, Keys: n.Keys}
		for _, v := range n.Arr {
			c.Arr = append(c.Arr, strip(v))
		}
		for _, v := range n.Vals {
			c.Vals = append(c.Vals, strip(v))
		}
		return c
	}
	return wire.AppendNode(nil, strip(n))
}

// checkToolsDecode decodes list as a chat request's tools and, when it is
// valid, checks each typed tool against the tree it came from: the same
// dump (what the template gets), the schema the request's own text, and
// DecodeTools agreeing with the request's decode.
func checkToolsDecode(t *testing.T, list []byte) {
	body := append(append([]byte(`{"messages":[{"role":"user","content":"x"}],"tools":`), list...), '}')
	req, err := DecodeChatCompletionRequest(body)
	tools, terr := DecodeTools(list)
	if err != nil {
		var ve *pylax.ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("%s: error %T %v", list, err, err)
		}
		return
	}
	tree, perr := wire.Parse(list)
	if perr != nil || tree.Kind == wire.Null {
		if req.Tools != nil {
			t.Fatalf("%s: tools %v for a null list", list, req.Tools)
		}
		return
	}
	if terr != nil || len(tools) != len(req.Tools) {
		t.Fatalf("%s: DecodeTools %d tools, %v; request %d", list, len(tools), terr, len(req.Tools))
	}
	if req.Tools == nil || len(req.Tools) != len(tree.Arr) {
		t.Fatalf("%s: %d tools from %d items", list, len(req.Tools), len(tree.Arr))
	}
	for i := range req.Tools {
		tool := &req.Tools[i]
		written := tool.AppendJSON(nil)
		back, err := wire.Parse(written)
		if err != nil {
			t.Fatalf("%s: tool %d wrote %q: %v", list, i, written, err)
		}
		if got, want := canonical(back), canonical(refToolDump(tree.Arr[i])); !bytes.Equal(got, want) {
			t.Fatalf("%s: tool %d dumps\n%s\nwant\n%s", list, i, got, want)
		}
		if !bytes.Equal(written, tools[i].AppendJSON(nil)) {
			t.Fatalf("%s: DecodeTools' tool %d differs", list, i)
		}
		fn, _ := tree.Arr[i].Get("function")
		if p, _ := fn.Get("parameters"); !p.IsNull() && !bytes.Equal(tool.Function.Parameters.Raw, p.Raw) {
			t.Fatalf("%s: tool %d's parameters are %s, not the request's %s", list, i, tool.Function.Parameters.Raw, p.Raw)
		}
	}
}

func TestToolsDecode(t *testing.T) {
	for _, list := range toolSeeds {
		checkToolsDecode(t, []byte(list))
	}
	req, err := DecodeChatCompletionRequest([]byte(`{"messages":[{"role":"user","content":"x"}],"tools":[` +
		`{"function":{"strict":true,"name":"f","description":"d","parameters":{"type":"object"}},"x":[1]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := req.Tools[0].Function
	if req.Tools[0].Type != "function" || f.Name != "f" || *f.Description != "d" || string(f.Parameters.Raw) != `{"type":"object"}` ||
		!f.Get("strict").B || f.Get("nope") != nil || req.Tools[0].Extra[0].Key != "x" {
		t.Errorf("tool %+v", req.Tools[0])
	}
	if got := string(req.Tools[0].AppendJSON(nil)); got != `{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"},"strict":true},"x":[1]}` {
		t.Errorf("AppendJSON %s", got)
	}
	// DecodeTools' errors are the request's, for the same tools.
	_, err = DecodeTools([]byte(`[{"type":"function"}]`))
	_, want := DecodeChatCompletionRequest([]byte(`{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function"}]}`))
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Errorf("DecodeTools error %v, want %v", err, want)
	}
}

var toolSeeds = []string{
	`null`, `[]`,
	`[{"type":"function","function":{"name":"get_weather","description":"Weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`,
	`[{"function":{"name":"f"}},{"type":"function","function":{"name":"g","parameters":null,"description":null}}]`,
	`[{"function":{"x":1,"name":"f","strict":false},"y":2}]`,
	`[{"type":"function","function":{"name":"f","name":"g","parameters":{"a":1},"parameters":{"b":2}}}]`,
	`[ { "type" : "\u0066unction" , "function" : { "name" : "\u00e9" , "parameters" : { "a" : [ 1 , 2.50 ] } } } ]`,
	`[{"type":"other","function":{"name":"f"}}]`, `[{"function":{"name":1}}]`, `[{"function":{"name":"f","parameters":[]}}]`, `[1]`,
}

func FuzzToolsDecode(f *testing.F) {
	for _, s := range toolSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkToolsDecode)
}
