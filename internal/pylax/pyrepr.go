package pylax

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/internal/wire"
)

// vLLM's validation messages are Python's str() of pydantic error dicts, so
// reproducing them byte for byte needs Python's repr of strings, ints and
// floats. These helpers implement exactly the subset those messages use.

// StrRepr returns Python's repr(s). Python strings cannot hold undecoded
// bytes; JSON decoding has already replaced them, so the \ufffd spelling
// only guards direct callers.
func StrRepr(s string) string {
	return string(pyfmt.AppendStrRepr(make([]byte, 0, len(s)+2), s, `\ufffd`))
}

// FloatStr returns Python's str(f).
func FloatStr(f float64) string {
	return string(pyfmt.AppendFloatRepr(nil, f))
}

// NumberStr returns Python's str() of the value json.loads makes of a JSON
// number literal, or lit itself when it does not parse.
func NumberStr(lit string) string {
	if b, ok := pyfmt.AppendNumberLiteral(nil, lit); ok {
		return string(b)
	}
	return lit
}

// Limits vLLM's validation handler puts on each reported error.
const (
	maxErrorInputChars = 200
	maxErrorChars      = 1000
	MaxReportedErrors  = 10
)

// summarizeInput is vLLM's _summarize_error_input applied to the JSON value
// raw (nil meaning Python None): strings are cut at 200 characters,
// containers are described by their size, scalars become their str().
func summarizeInput(raw json.RawMessage) string {
	v := strings.TrimSpace(string(raw))
	if v == "" || v == "null" {
		return "None"
	}
	switch v[0] {
	case '"':
		s, ok := stringOf([]byte(v))
		if !ok {
			return v
		}
		return truncateChars(s, maxErrorInputChars, "...[truncated]")
	case '[':
		n, err := wire.Parse([]byte(v))
		if err != nil || n.Kind != wire.Array {
			return "<list>"
		}
		return fmt.Sprintf("<list of %d items>", len(n.Arr))
	case '{':
		n, err := wire.Parse([]byte(v))
		if err != nil || n.Kind != wire.Object {
			return "<dict>"
		}
		return fmt.Sprintf("<dict of %d items>", len(n.Keys))
	case 't':
		return "True"
	case 'f':
		return "False"
	default:
		return truncateChars(NumberStr(v), maxErrorInputChars, "...[truncated]")
	}
}

// truncateChars cuts s to max code points (Python's len) and appends suffix
// when it had to cut.
func truncateChars(s string, max int, suffix string) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i] + suffix
		}
		n++
	}
	return s
}
