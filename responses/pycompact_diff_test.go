package responses

import (
	"bytes"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// pyCompactDiff holds pylax.AppendPyCompact, which writes a tree, to
// render.PyJSONCompact, which reads the text again, on any JSON value.
func pyCompactDiff(t *testing.T, data []byte) {
	n, err := wire.Parse(data)
	if err != nil {
		return
	}
	want, err := refPyCompactOrNil(n.Raw)
	if err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	if got := pylax.AppendPyCompact(nil, n); !bytes.Equal(got, want) {
		t.Fatalf("%s: %s, want %s", data, got, want)
	}
}

var pyCompactCases = []string{
	`null`, `true`, `1e2`, `-0`, `-0.0`, `1E400`, `-1e400`, `1e-400`, `123456789012345678901234567890`, `0.1`,
	`"\u00e9\u2028\n\"\\"`, `[]`, `{}`, ` [ 1 , { "a" : [ ] , "b":null } ] `, `{"a":1,"b":2,"a":3}`,
	`{"k":[1.50,"x",{"y":{"z":false}}]}`, `"\ud800"`, `"\udc00\ud800x"`, `"\ud83d\ude00"`,
}

func TestPyCompactMatchesRender(t *testing.T) {
	for _, c := range pyCompactCases {
		pyCompactDiff(t, []byte(c))
	}
}

func FuzzPyCompactMatchesRender(f *testing.F) {
	for _, c := range pyCompactCases {
		f.Add([]byte(c))
	}
	f.Fuzz(pyCompactDiff)
}
