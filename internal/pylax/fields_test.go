package pylax

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/vrender/vrender/internal/wire"
)

func TestFastTokenIDs(t *testing.T) {
	tests := []struct {
		raw  string
		want []int
		ok   bool
	}{
		{`[]`, []int{}, true},
		{` [ ] `, []int{}, true},
		{`[1,2,3]`, []int{1, 2, 3}, true},
		{"[ 0 ,\n151668\t]", []int{0, 151668}, true},
		{`[999999999999999999]`, []int{999999999999999999}, true},
		{`[9999999999999999999]`, nil, false}, // 19 digits: general path
		{`[-1]`, nil, false},
		{`[1.0]`, nil, false},
		{`[1e3]`, nil, false},
		{`["1"]`, nil, false},
		{`[true]`, nil, false},
		{`[null]`, nil, false},
		{`[[1]]`, nil, false},
		{`"1,2"`, nil, false},
		{``, nil, false},
		{`{"a":1}`, nil, false},
	}
	for _, tt := range tests {
		got, ok := FastTokenIDs(json.RawMessage(tt.raw))
		if ok != tt.ok || (ok && !slices.Equal(got, tt.want)) {
			t.Errorf("fastTokenIDs(%s) = %v, %v; want %v, %v", tt.raw, got, ok, tt.want, tt.ok)
		}
	}
}

// The fast path must agree with the general one wherever it applies.
func TestTokenIDsFastAndGeneralAgree(t *testing.T) {
	for _, raw := range []string{`[]`, `[0]`, `[5,6,7]`, `[151643,151644,151645]`, `[999999999999999999]`} {
		fast, ok := FastTokenIDs(json.RawMessage(raw))
		if !ok {
			t.Fatalf("%s did not take the fast path", raw)
		}
		root, err := wire.Parse([]byte(`{"tokens":` + raw + `}`))
		if err != nil {
			t.Fatal(err)
		}
		o := ObjectOf(root)
		items, _ := o.List("tokens", true)
		var general []int
		for _, it := range items {
			n, typ, _ := LaxInt(it)
			if typ != "" {
				t.Fatalf("%s: %s", raw, typ)
			}
			general = append(general, int(n.Int64()))
		}
		if !slices.Equal(fast, general) && !(len(fast) == 0 && len(general) == 0) {
			t.Errorf("%s: fast %v, general %v", raw, fast, general)
		}
	}
}
