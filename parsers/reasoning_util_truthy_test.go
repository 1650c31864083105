package parsers

import (
	"testing"

	"github.com/vrender/vrender/internal/wire"
)

// TestPyTruthy holds pyTruthy to Python's bool() of what json.loads makes of
// each literal (checked against CPython 3.11).
func TestPyTruthy(t *testing.T) {
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
		if got := pyTruthy(n); got != c.want {
			t.Errorf("bool(json.loads(%s)) = %v, want %v", c.json, got, c.want)
		}
	}
}
