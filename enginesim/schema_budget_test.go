package enginesim

import (
	"strings"
	"testing"
)

// nestedArrays is the issue-19 schema: levels arrays of minItems 64 around
// an integer (four levels took 2.5 GB before the byte budget).
func nestedArrays(levels int) string {
	s := `{"type":"integer"}`
	for range levels {
		s = `{"type":"array","minItems":64,"items":` + s + `}`
	}
	return s
}

func TestSchemaBudget(t *testing.T) {
	for _, levels := range []int{2, 4, 5, 8} {
		schema, err := parseJSONValue([]byte(nestedArrays(levels)))
		if err != nil {
			t.Fatal(err)
		}
		out := jsonForSchema(schema)
		// One element can overshoot the budget by at most its own size.
		if len(out) > maxSchemaBytes+1024 {
			t.Errorf("%d levels: %d bytes, budget %d", levels, len(out), maxSchemaBytes)
		}
		if levels == 2 {
			// Small documents are complete: 64 arrays of 64 values.
			if !strings.HasSuffix(out, "]]") || strings.Count(out, "[") != 65 {
				t.Errorf("2 levels: incomplete %q...", out[:min(len(out), 80)])
			}
		} else if len(out) < maxSchemaBytes {
			t.Errorf("%d levels: stopped early at %d bytes", levels, len(out))
		}
	}
}
