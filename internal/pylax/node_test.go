package pylax

import (
	"testing"

	"github.com/vrender/vrender/internal/wire"
)

// TestTruthyNode holds TruthyNode to Python's bool() of what json.loads
// makes of each literal (checked against CPython 3.11).
func TestTruthyNode(t *testing.T) {
	for _, c := range []struct {
		json string
		want bool
	}{
		{`null`, false}, {`false`, false}, {`true`, true},
		{`0`, false}, {`-0`, false}, {`7`, true}, {`-3`, true}, {`100000000000000000000000000000`, true},
		{`0.0`, false}, {`-0.0`, false}, {`0e5`, false}, {`1e-400`, false}, {`1e400`, true}, {`0.5`, true},
		{`""`, false}, {`"0"`, true}, {`"false"`, true},
		{`[]`, false}, {`[0]`, true}, {`{}`, false}, {`{"a":null}`, true},
	} {
		n, err := wire.Parse([]byte(c.json))
		if err != nil {
			t.Fatalf("%s: %v", c.json, err)
		}
		if got := TruthyNode(n); got != c.want {
			t.Errorf("bool(json.loads(%s)) = %v, want %v", c.json, got, c.want)
		}
	}
}

var truthyCases = []string{
	`null`, `true`, `false`, `0`, `-0`, `1`, `0.0`, `-0.0`, `1e-999`, `1e999`, `0e5`, `100000000000000000000000`,
	`""`, `"a"`, `" "`, `[]`, `[0]`, `{}`, `{"a":null}`, `NaN`, `-Infinity`, ` 0 `, `"\u0000"`,
}

// truthyDiff holds TruthyNode to Truthy, which reads the text.
func truthyDiff(t *testing.T, data []byte) {
	n, err := wire.Parse(data)
	if err != nil {
		return
	}
	if got, want := TruthyNode(n), Truthy(data); got != want {
		t.Fatalf("%s: TruthyNode %v, Truthy %v", data, got, want)
	}
}

func TestTruthyNodeMatchesTruthy(t *testing.T) {
	for _, c := range truthyCases {
		truthyDiff(t, []byte(c))
	}
}

func FuzzTruthyNodeMatchesTruthy(f *testing.F) {
	for _, c := range truthyCases {
		f.Add([]byte(c))
	}
	f.Fuzz(truthyDiff)
}
