package render

import (
	"encoding/json"
	"fmt"
	"testing"
)

// The string arguments of a request's tool calls are parsed one after
// another into one parser's slabs: each must come out as parsing it alone
// gives, and the first bad one must fail as it alone would.
func TestToolArgumentsMatchParseJSON(t *testing.T) {
	args := []string{`{"city": "Paris"}`, `{"x": [1, 2.5, "\u00e9"], "x": {}}`, `null`, `{}`, ``,
		`{"deep": {"er": {"est": ["a", "b\n"]}}}`, `[1, 2]`, `{"bad": }`, `{"after": "bad"}`}
	for _, stop := range []int{len(args) - 2, len(args)} {
		var msgs []*node
		for _, a := range args[:stop] {
			call, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]any{"name": "f", "arguments": a}})
			raw := fmt.Sprintf(`{"role":"assistant","content":"","tool_calls":[%s, %s]}`, call, call)
			m, err := parseJSON([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, m)
		}
		err := postprocessToolCalls(msgs)
		var wantErr error
		for i, a := range args[:stop] {
			want, perr := toolArgumentsAlone(a)
			if perr != nil {
				wantErr = perr
				break
			}
			tc, _ := msgs[i].Get("tool_calls")
			for _, call := range tc.Arr {
				fn, _ := call.Get("function")
				got, _ := fn.Get("arguments")
				if nodeJSON(got) != nodeJSON(want) {
					t.Fatalf("%q: arguments %s, alone %s", a, nodeJSON(got), nodeJSON(want))
				}
			}
		}
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("error %v, alone %v", err, wantErr)
		}
	}
}

// toolArgumentsAlone is toolArguments for one string through parseJSON.
func toolArgumentsAlone(s string) (*node, error) {
	if s == "" {
		return &node{Kind: jObj}, nil
	}
	n, err := parseJSON([]byte(s))
	if err != nil {
		return nil, badParam("tool_calls", "Invalid JSON in tool call arguments: %v", err)
	}
	if n.IsNull() {
		return &node{Kind: jObj}, nil
	}
	return n, nil
}
