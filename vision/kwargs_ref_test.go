package vision

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/vrender/vrender/internal/wire"
)

// refParseKwargs is ParseKwargs as it was before it read the tree (encoding/json into member
// maps), the reference of FuzzKwargsMatchRef. It reads an mm_processor_kwargs JSON object. null and absent keys leave a setting unset;
// a value of the wrong type is an *Error of kind InvalidKwargs.
func refParseKwargs(raw []byte) (Kwargs, error) {
	var k Kwargs
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return k, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return k, &Error{Kind: InvalidKwargs, Message: "mm_processor_kwargs must be a JSON object"}
	}
	var err error
	if k.MinPixels, err = refPixelsKwarg(m, "min_pixels"); err != nil {
		return k, err
	}
	if k.MaxPixels, err = refPixelsKwarg(m, "max_pixels"); err != nil {
		return k, err
	}
	if v, ok := m["use_fast"]; ok && !refIsNull(v) {
		var b bool
		if json.Unmarshal(v, &b) != nil {
			return k, &Error{Kind: InvalidKwargs, Message: "mm_processor_kwargs.use_fast must be a boolean"}
		}
		k.UseFast = &b
	}
	if v, ok := m["size"]; ok && !refIsNull(v) {
		var s map[string]json.RawMessage
		if json.Unmarshal(v, &s) != nil {
			return k, &Error{Kind: InvalidKwargs, Message: "mm_processor_kwargs.size must be an object"}
		}
		lo, err := refPixelsKwarg(s, "shortest_edge")
		if err != nil {
			return k, err
		}
		hi, err := refPixelsKwarg(s, "longest_edge")
		if err != nil {
			return k, err
		}
		if lo == nil || hi == nil {
			return k, &Error{Kind: InvalidKwargs, Message: "mm_processor_kwargs.size must contain 'shortest_edge' and 'longest_edge' keys"}
		}
		k.Size = &SizeBounds{ShortestEdge: *lo, LongestEdge: *hi}
	}
	return k, nil
}

func refIsNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

// refPixelsKwarg reads a non-negative whole number of pixels; 1e6 is accepted as Python compares it the
// same as 1000000.
func refPixelsKwarg(m map[string]json.RawMessage, key string) (*int, error) {
	v, ok := m[key]
	if !ok || refIsNull(v) {
		return nil, nil
	}
	var f float64
	if json.Unmarshal(v, &f) != nil || f < 0 || f != math.Trunc(f) || f > 1<<53 {
		return nil, &Error{Kind: InvalidKwargs, Message: fmt.Sprintf("mm_processor_kwargs.%s must be a non-negative integer, got %s", key, truncateRaw(v))}
	}
	n := int(f)
	return &n, nil
}

var kwargsRefSeeds = []string{`{}`, `null`, ``, `{"min_pixels": 1e6, "max_pixels": 784.0}`, `{"use_fast": false, "use_fast": true}`,
	`{"size": {"shortest_edge": 3136, "longest_edge": 12845056}}`, `{"size": {"shortest_edge": 1}}`, `{"max_pixels": -1}`,
	`{"min_pixels": 1.5}`, `{"max_pixels": "big"}`, `{"use_fast": "yes"}`, `{"size": 5}`, `[1]`, `{"min_pixels": 1e400}`,
	`{"min_pixels": null, "size": null}`, `{"max_pixels": 9007199254740993}`}

// checkKwargsMatchRef: on every text encoding/json and the body parser both take as JSON, the same
// settings or the same error. (Only the body parser takes NaN and Infinity, as json.loads does;
// those were "not a JSON object" to encoding/json and are now read, and refused, by member.)
func checkKwargsMatchRef(t *testing.T, raw []byte) {
	t.Helper()
	if len(bytes.TrimSpace(raw)) > 0 && (!json.Valid(raw) || wire.Valid(raw) != nil) {
		return
	}
	got, err := ParseKwargs(raw)
	want, wantErr := refParseKwargs(raw)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) || !kwargsEqual(got, want) {
		t.Fatalf("%q: got %+v, %v; reference %+v, %v", raw, got, err, want, wantErr)
	}
	var e *Error
	if err != nil && !errors.As(err, &e) {
		t.Fatalf("%q: untyped error %v", raw, err)
	}
}

func TestKwargsMatchRef(t *testing.T) {
	for _, s := range kwargsRefSeeds {
		checkKwargsMatchRef(t, []byte(s))
	}
}

func FuzzKwargsMatchRef(f *testing.F) {
	for _, s := range kwargsRefSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkKwargsMatchRef)
}
