package render

import (
	"encoding/json"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// Python's json module, as far as vLLM's output depends on it: values that
// pass through a Python dict are re-serialised by json.dumps, which
// normalises numbers and escapes strings its own way.

// pyJSONCompact is how vLLM's JSONResponse writes a value json.loads read
// from raw: compact separators, non-ASCII kept, numbers as Python prints
// them (1e2 becomes 100.0). A repeated key keeps its first position and its
// last value, as a Python dict does.
func pyJSONCompact(raw json.RawMessage) (json.RawMessage, error) {
	n, err := wire.Parse(raw)
	if err != nil {
		return nil, err
	}
	return pylax.AppendPyCompact(nil, n), nil
}

// PyJSONCompact is how vLLM's JSONResponse writes the value json.loads
// makes of raw (compact, non-ASCII kept, numbers as Python prints them):
// for a client's or a parser's JSON that vLLM parses and re-serialises.
func PyJSONCompact(raw json.RawMessage) (json.RawMessage, error) { return pyJSONCompact(raw) }
