package pylax

// The readers of scalar, list and nested-model fields. Each records its
// errors on the object and returns the field's typed value (or its
// default).

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/internal/wire"
)

// LaxFloat applies pydantic's lax float rules; typ is "" on success.
func LaxFloat(raw json.RawMessage) (f float64, typ, msg string) {
	const (
		typeMsg  = "Input should be a valid number"
		parseMsg = "Input should be a valid number, unable to parse string as a number"
	)
	switch k := Kind(raw); {
	case k == 't':
		return 1, "", ""
	case k == 'f':
		return 0, "", ""
	case k == '"':
		s, _ := LaxString(raw)
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, "float_parsing", parseMsg
		}
		return v, "", ""
	case k == '-' || IsDigit(k) || k == 'I' || k == 'N':
		v, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, "float_type", typeMsg
		}
		return v, "", ""
	}
	return 0, "float_type", typeMsg
}

// OptionalFloat is a `name: float | None = def` field.
func (o *Object) OptionalFloat(name string, def *float64) *float64 {
	raw, ok := o.Member(name)
	if !ok {
		return def
	}
	if IsNull(raw) {
		return nil
	}
	v, typ, msg := LaxFloat(raw)
	if typ != "" {
		o.Fail(o.At(name), typ, msg, raw)
		return def
	}
	return &v
}

// Float is a `name: float = def` field.
func (o *Object) Float(name string, def float64) float64 {
	raw, ok := o.Member(name)
	if !ok {
		return def
	}
	v, typ, msg := LaxFloat(raw)
	if typ != "" {
		o.Fail(o.At(name), typ, msg, raw)
		return def
	}
	return v
}

// CheckedInt validates one int value at loc with optional ge/le bounds.
func (o *Object) CheckedInt(loc []any, raw json.RawMessage, ge, le *big.Int) (*big.Int, bool) {
	n, typ, msg := LaxInt(raw)
	switch {
	case typ != "":
		o.Fail(loc, typ, msg, raw)
		return nil, false
	case ge != nil && n.Cmp(ge) < 0:
		o.Fail(loc, "greater_than_equal", "Input should be greater than or equal to "+ge.String(), raw,
			CtxEntry{Key: "ge", Value: ge})
		return nil, false
	case le != nil && n.Cmp(le) > 0:
		o.Fail(loc, "less_than_equal", "Input should be less than or equal to "+le.String(), raw,
			CtxEntry{Key: "le", Value: le})
		return nil, false
	}
	return n, true
}

var (
	minInt64 = big.NewInt(math.MinInt64)
	maxInt64 = big.NewInt(math.MaxInt64)
)

// ClampInt converts a Python int to a Go int, saturating: values beyond
// the machine range are far outside every limit vLLM applies later.
func ClampInt(n *big.Int) int {
	switch {
	case n.IsInt64():
		return int(n.Int64())
	case n.Sign() < 0:
		return math.MinInt
	}
	return math.MaxInt
}

// OptionalInt is a `name: int | None = def` field with optional bounds.
func (o *Object) OptionalInt(name string, def *int, ge, le *int) *int {
	raw, ok := o.Member(name)
	if !ok {
		return def
	}
	if IsNull(raw) {
		return nil
	}
	var geB, leB *big.Int
	if ge != nil {
		geB = big.NewInt(int64(*ge))
	}
	if le != nil {
		leB = big.NewInt(int64(*le))
	}
	n, ok := o.CheckedInt(o.At(name), raw, geB, leB)
	if !ok {
		return def
	}
	v := ClampInt(n)
	return &v
}

// Int is a `name: int = def` field.
func (o *Object) Int(name string, def int) int {
	raw, ok := o.Member(name)
	if !ok {
		return def
	}
	n, ok := o.CheckedInt(o.At(name), raw, nil, nil)
	if !ok {
		return def
	}
	return ClampInt(n)
}

var (
	int64Min = big.NewInt(math.MinInt64)
	int64Max = big.NewInt(math.MaxInt64)
)

// OptionalInt64 is a `name: int | None = Field(None, ge=-2**63, le=2**63-1)` field.
func (o *Object) OptionalInt64(name string) *int64 {
	raw, ok := o.Member(name)
	if !ok || IsNull(raw) {
		return nil
	}
	n, ok := o.CheckedInt(o.At(name), raw, int64Min, int64Max)
	if !ok {
		return nil
	}
	v := n.Int64()
	return &v
}

// Int64 is a `name: int = Field(def, ge=-2**63, le=2**63-1)` field.
func (o *Object) Int64(name string, def int64) int64 {
	raw, ok := o.Member(name)
	if !ok {
		return def
	}
	n, ok := o.CheckedInt(o.At(name), raw, int64Min, int64Max)
	if !ok {
		return def
	}
	return n.Int64()
}

// OptionalNullableBool is a `name: bool | None = None` field.
func (o *Object) OptionalNullableBool(name string) *bool {
	if _, ok := o.Member(name); !ok {
		return nil
	}
	return o.OptionalBool(name, false)
}

// OptionalIntList is a `name: list[int] | None = def` field.
func (o *Object) OptionalIntList(name string, def []int) []int {
	raw, ok := o.Member(name)
	if !ok {
		return def
	}
	if IsNull(raw) {
		return nil
	}
	items, ok := o.ListNodes(name, false)
	if !ok {
		return def
	}
	out := make([]int, 0, len(items))
	valid := true
	for i, item := range items {
		// pydantic keeps any Python int; a Go int cannot, and saturating
		// would silently change the id, so ids past int64 are refused.
		n, ok := o.CheckedInt(o.At(name, i), item.Raw, minInt64, maxInt64)
		if !ok {
			valid = false
			continue
		}
		out = append(out, int(n.Int64()))
	}
	if !valid {
		return def
	}
	return out
}

// StringList is a `name: list[str] = def` field (null is invalid).
func (o *Object) StringList(name string, def []string) []string {
	raw, ok := o.Member(name)
	if !ok {
		return def
	}
	if IsNull(raw) {
		o.Fail(o.At(name), "list_type", "Input should be a valid list", raw)
		return def
	}
	items, ok := o.ListNodes(name, false)
	if !ok {
		return def
	}
	out := make([]string, 0, len(items))
	valid := true
	for i, item := range items {
		s, ok := item.Text()
		if !ok {
			o.Fail(o.At(name, i), "string_type", "Input should be a valid string", item.Raw)
			valid = false
			continue
		}
		out = append(out, s)
	}
	if !valid {
		return def
	}
	return out
}

// StopField is `stop: str | list[str] | None = []`. A union failure lists
// one error per member, as pydantic does (vLLM drops the member names from
// the location).
func (o *Object) StopField(name string) []string {
	raw, ok := o.Member(name)
	if !ok {
		return []string{}
	}
	if IsNull(raw) {
		return nil
	}
	if s, ok := LaxString(raw); ok {
		return []string{s}
	}
	if Kind(raw) != '[' {
		o.Fail(o.At(name), "string_type", "Input should be a valid string", raw)
		o.Fail(o.At(name), "list_type", "Input should be a valid list", raw)
		return nil
	}
	items, _ := o.ListNodes(name, false)
	out := make([]string, 0, len(items))
	var bad []int
	for i, item := range items {
		s, ok := item.Text()
		if !ok {
			bad = append(bad, i)
			continue
		}
		out = append(out, s)
	}
	if len(bad) > 0 {
		o.Fail(o.At(name), "string_type", "Input should be a valid string", raw)
		for _, i := range bad {
			o.Fail(o.At(name, i), "string_type", "Input should be a valid string", items[i].Raw)
		}
		return nil
	}
	return out
}

// OptionalLiteral is a `name: Literal[values...] | None = None` field.
func (o *Object) OptionalLiteral(name string, values ...string) *string {
	raw, ok := o.Member(name)
	if !ok || IsNull(raw) {
		return nil
	}
	if s, ok := LaxString(raw); ok {
		for _, v := range values {
			if s == v {
				return &s
			}
		}
	}
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = StrRepr(v)
	}
	expected := quoted[len(quoted)-1]
	if len(quoted) > 1 {
		expected = strings.Join(quoted[:len(quoted)-1], ", ") + " or " + expected
	}
	o.Fail(o.At(name), "literal_error", "Input should be "+expected, raw, CtxEntry{Key: "expected", Value: expected})
	return nil
}

// RawNumber reads a JSON number as vLLM's model validators see it
// (data.get(x) compared with ints); ok is false for anything else.
func RawNumber(raw json.RawMessage) (float64, bool) {
	k := Kind(raw)
	if k != '-' && !IsDigit(k) {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
	return f, err == nil
}

// Nested validates a member typed as a nested pydantic model (or, with
// dataclass, a dataclass) named class: nil for an absent or null member,
// nil after recording pydantic's type error for a non-object, else the
// member as an object whose errors are located under name.
func (o *Object) Nested(name string, dataclass bool, class string) (sub *Object, raw json.RawMessage) {
	raw, ok := o.Member(name)
	if !ok || IsNull(raw) {
		return nil, raw
	}
	if Kind(raw) != '{' {
		if dataclass {
			o.Fail(o.At(name), "dataclass_type", "Input should be a dictionary or an instance of "+class, raw,
				CtxEntry{Key: "class_name", Value: class})
		} else {
			o.Fail(o.At(name), "model_type", "Input should be a valid dictionary or instance of "+class, raw,
				CtxEntry{Key: "class_name", Value: class})
		}
		return nil, raw
	}
	return o.Sub(name), raw
}

// Sub is the object member name of o as an object of its own, its errors
// located under name; nil when the member is not an object.
func (o *Object) Sub(name string) *Object {
	n := o.Nodes[name]
	if n == nil || n.Kind != wire.Object {
		return nil
	}
	return ObjectAt(n, o.At(name))
}

// StrOfJSON is Python's str() of the value json.loads makes of raw (None
// for an absent value): what an f-string shows.
func StrOfJSON(raw json.RawMessage) string {
	if s, ok := LaxString(raw); ok {
		return s
	}
	return reprOfJSON(raw)
}

// reprOfJSON is Python's repr() of the value json.loads makes of raw.
func reprOfJSON(raw json.RawMessage) string {
	if Kind(raw) == 0 {
		return "None"
	}
	n, err := wire.Parse(raw)
	if err != nil {
		return NumberStr(strings.TrimSpace(string(raw)))
	}
	return string(AppendRepr(nil, n))
}

// AppendRepr appends Python's repr() of the value json.loads makes of n
// (dicts in key order, as Python prints them).
func AppendRepr(dst []byte, n *wire.Node) []byte {
	switch n.Kind {
	case wire.Null:
		return append(dst, "None"...)
	case wire.Bool:
		if n.B {
			return append(dst, "True"...)
		}
		return append(dst, "False"...)
	case wire.String:
		return pyfmt.AppendStrRepr(dst, n.S, `\ufffd`)
	case wire.Array:
		dst = append(dst, '[')
		for i, it := range n.Arr {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = AppendRepr(dst, it)
		}
		return append(dst, ']')
	case wire.Object:
		dst = append(dst, '{')
		for i, k := range n.Keys {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = pyfmt.AppendStrRepr(dst, k, `\ufffd`)
			dst = append(dst, ": "...)
			dst = AppendRepr(dst, n.Vals[i])
		}
		return append(dst, '}')
	}
	return append(dst, NumberStr(n.S)...)
}
