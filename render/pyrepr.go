package render

import (
	"encoding/json"

	"github.com/vrender/vrender/internal/pylax"
)

// PyStr is Python's str() of the value json.loads makes of raw: strings
// as they are, everything else as its repr (pylax's, which the validation
// messages use too).
func PyStr(raw json.RawMessage) string { return pylax.StrOfJSON(raw) }
