package pylax

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"

	"github.com/vrender/vrender/internal/wire"
)

// Request bodies are checked field by field with pydantic's lax ("python")
// mode rules, because vLLM validates the result of json.loads with them:
// true, 1, "yes" and 1.0 are all valid bools; 7, 7.0 and "7" valid ints.
// Members are read from the body's one tree (internal/wire), which keeps
// key order, so pass-through values (kwargs, schemas) reach chat templates
// as the client wrote them; a node's Raw is its JSON text, the input of
// error reports.

// Object is one JSON object under validation. Errors accumulate in errs in
// the order pydantic reports them: fields in declaration order.
type Object struct {
	Raw json.RawMessage // the whole object: the input of "missing" errors
	// Nodes are the members' trees (a node's Raw is its text).
	Nodes map[string]*wire.Node
	Loc   []any
	Errs  []FieldError
	// omitted counts the errors an errSink counted without building them
	// (see ValidationError.Omitted).
	Omitted int
}

// DecodeBody reads a request body as the JSON object for model className.
// It returns the error FastAPI gives for an absent body (empty or JSON
// null: "missing") or pydantic for one that is not an object. The object
// decodes a copy of data, so the request never aliases the caller's
// buffer.
func DecodeBody(data []byte, className string) (*Object, *FieldError) {
	if bodyAbsent(data) {
		return nil, &FieldError{Type: "missing", Msg: "Field required"}
	}
	var root *wire.Node
	if Kind(data) == '{' {
		root, _ = wire.Parse(bytes.Clone(data))
	}
	if root == nil {
		fe := ModelTypeError(data, className)
		return nil, &fe
	}
	o := ObjectOf(root)
	o.Raw = data
	return o, nil
}

// DecodeTree is DecodeBody for a body already decoded by ParseJSONTree
// from data (root nil for an empty body). The object aliases data.
func DecodeTree(root *wire.Node, data []byte, className string) (*Object, *FieldError) {
	if root == nil || root.Kind == wire.Null {
		return nil, &FieldError{Type: "missing", Msg: "Field required"}
	}
	if root.Kind != wire.Object {
		fe := ModelTypeError(data, className)
		return nil, &fe
	}
	o := ObjectOf(root)
	o.Raw = data
	return o, nil
}

// ObjectOf is the object of the decoded JSON object root, its members
// root's members.
func ObjectOf(root *wire.Node) *Object {
	nodes := make(map[string]*wire.Node, len(root.Keys))
	for i, k := range root.Keys {
		nodes[k] = root.Vals[i]
	}
	return &Object{Raw: root.Raw, Nodes: nodes}
}

// ModelTypeError is pydantic's error for a model given something other
// than an object.
func ModelTypeError(data []byte, className string) FieldError {
	return FieldError{
		Type:  "model_type",
		Msg:   "Input should be a valid dictionary or instance of " + className,
		Input: json.RawMessage(data),
		Ctx:   []CtxEntry{{Key: "class_name", Value: className}},
	}
}

// Fresh returns the object with no errors recorded, for validating the
// same members against another model (a union member).
func (o *Object) Fresh() *Object {
	c := *o
	c.Errs = nil
	return &c
}

// Node is member name's tree, nil when absent.
func (o *Object) Node(name string) *wire.Node { return o.Nodes[name] }

// Member is member name's JSON text; ok reports whether it is present.
func (o *Object) Member(name string) (raw json.RawMessage, ok bool) {
	n, ok := o.Nodes[name]
	if !ok {
		return nil, false
	}
	return n.Raw, true
}

// bodyAbsent reports whether FastAPI treats data as no body at all.
func bodyAbsent(data []byte) bool {
	k := Kind(data)
	return k == 0 || k == 'n'
}

// Kind is the first byte of a JSON value: one of { [ " t f n, or a digit
// or '-' for numbers; 0 for empty input.
func Kind(raw []byte) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// IsNull reports whether raw is JSON null.
func IsNull(raw json.RawMessage) bool { return Kind(raw) == 'n' }

// At is the location of member name of o (then rest), for an error.
func (o *Object) At(name string, rest ...any) []any {
	loc := make([]any, 0, len(o.Loc)+1+len(rest))
	loc = append(loc, o.Loc...)
	loc = append(loc, name)
	return append(loc, rest...)
}

// Fail records an error at loc.
func (o *Object) Fail(loc []any, typ, msg string, input json.RawMessage, ctx ...CtxEntry) {
	o.Errs = append(o.Errs, FieldError{Type: typ, Loc: loc, Msg: msg, Input: input, Ctx: ctx})
}

// Missing records pydantic's error for the absent required member name.
func (o *Object) Missing(name string) {
	o.Fail(o.At(name), "missing", "Field required", o.Raw)
}

// RequiredString is a `name: str` field.
func (o *Object) RequiredString(name string) string {
	raw, ok := o.Member(name)
	if !ok {
		o.Missing(name)
		return ""
	}
	s, ok := o.MemberString(name, raw)
	if !ok {
		o.Fail(o.At(name), "string_type", "Input should be a valid string", raw)
	}
	return s
}

// OptionalString is a `name: str | None = None` field: absent and null are nil.
func (o *Object) OptionalString(name string) *string {
	raw, ok := o.Member(name)
	if !ok || IsNull(raw) {
		return nil
	}
	s, ok := o.MemberString(name, raw)
	if !ok {
		o.Fail(o.At(name), "string_type", "Input should be a valid string", raw)
		return nil
	}
	return &s
}

// Bool is a `name: bool = def` field; null is invalid.
func (o *Object) Bool(name string, def bool) bool {
	raw, ok := o.Member(name)
	if !ok {
		return def
	}
	v, typ, msg := LaxBool(raw)
	if typ != "" {
		o.Fail(o.At(name), typ, msg, raw)
	}
	return v
}

// OptionalBool is a `name: bool | None = def` field: absent gives def, null
// gives nil.
func (o *Object) OptionalBool(name string, def bool) *bool {
	raw, ok := o.Member(name)
	if !ok {
		return &def
	}
	if IsNull(raw) {
		return nil
	}
	v, typ, msg := LaxBool(raw)
	if typ != "" {
		o.Fail(o.At(name), typ, msg, raw)
		return nil
	}
	return &v
}

// List returns the items' text of a list field; present reports whether
// the key was there and not null. A wrong type is recorded as list_type.
func (o *Object) List(name string, required bool) (items []json.RawMessage, present bool) {
	nodes, present := o.ListNodes(name, required)
	if !present {
		return nil, false
	}
	items = make([]json.RawMessage, len(nodes))
	for i, n := range nodes {
		items[i] = n.Raw
	}
	return items, true
}

// OptionalDict is a `name: dict[str, Any] | None = None` field, returned as
// raw JSON (nil when absent or null).
func (o *Object) OptionalDict(name string) json.RawMessage {
	raw, ok := o.Member(name)
	if !ok || IsNull(raw) {
		return nil
	}
	if Kind(raw) != '{' {
		o.Fail(o.At(name), "dict_type", "Input should be a valid dictionary", raw)
		return nil
	}
	return raw
}

// OptionalDictNode is OptionalDict returning the member's decoded tree
// (an object), nil when absent, null or invalid.
func (o *Object) OptionalDictNode(name string) *wire.Node {
	raw := o.OptionalDict(name)
	if raw == nil {
		return nil
	}
	return o.Nodes[name]
}

// OptionalDictOfDicts is a `name: dict[str, dict[str, Any]] | None` field,
// nil when absent, null or invalid.
func (o *Object) OptionalDictOfDicts(name string) *wire.Node {
	n := o.OptionalDictNode(name)
	if n == nil {
		return nil
	}
	valid := true
	for i, key := range n.Keys {
		if v := n.Vals[i]; v.Kind != wire.Object {
			o.Fail(o.At(name, key), "dict_type", "Input should be a valid dictionary", v.Raw)
			valid = false
		}
	}
	if !valid {
		return nil
	}
	return n
}

// MemberString is LaxString(raw) for member name, read from its tree when
// the object has one.
func (o *Object) MemberString(name string, raw json.RawMessage) (string, bool) {
	if n := o.Nodes[name]; n != nil {
		return n.S, n.Kind == wire.String
	}
	return LaxString(raw)
}

// LaxString reads a JSON string; ok is false for any other value (pydantic
// refuses other types for str in lax mode).
func LaxString(raw json.RawMessage) (string, bool) {
	if Kind(raw) != '"' {
		return "", false
	}
	if s, ok := PlainString(raw); ok {
		return s, true
	}
	return stringOf(raw)
}

// stringOf reads a JSON string as json.Unmarshal into a string does; ok is
// false for anything that is not one valid JSON string.
func stringOf(raw []byte) (string, bool) {
	r := wire.NewReader(raw)
	s, err := r.String()
	if err != nil || r.End() != nil {
		return "", false
	}
	return strings.Clone(s), true
}

// PlainString reads a JSON string literal of printable ASCII without
// escapes (surrounding whitespace allowed), which decodes to its own bytes;
// anything else is for encoding/json.
func PlainString(raw []byte) (string, bool) {
	raw = bytes.Trim(raw, " \t\r\n")
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(body), true
}

// IsEmptyArray reports whether valid JSON raw is [] (with any whitespace).
func IsEmptyArray(raw []byte) bool {
	raw = bytes.Trim(raw, " \t\r\n")
	if len(raw) < 2 || raw[0] != '[' {
		return false
	}
	rest := bytes.TrimLeft(raw[1:], " \t\r\n")
	return len(rest) == 1 && rest[0] == ']'
}

// LaxBool applies pydantic's lax bool rules; typ is "" on success.
func LaxBool(raw json.RawMessage) (v bool, typ, msg string) {
	const (
		typeMsg  = "Input should be a valid boolean"
		parseMsg = "Input should be a valid boolean, unable to interpret input"
	)
	text := strings.TrimSpace(string(raw))
	switch k := Kind(raw); {
	case k == 't':
		return true, "", ""
	case k == 'f':
		return false, "", ""
	case k == '"':
		s, _ := LaxString(raw)
		switch strings.ToLower(s) {
		case "0", "off", "f", "false", "n", "no":
			return false, "", ""
		case "1", "on", "t", "true", "y", "yes":
			return true, "", ""
		}
		return false, "bool_parsing", parseMsg
	case k == '-' || IsDigit(k):
		f, err := strconv.ParseFloat(text, 64)
		if err == nil && (f == 0 || f == 1) {
			return f == 1, "", ""
		}
		if strings.ContainsAny(text, ".eE") {
			return false, "bool_type", typeMsg // floats other than 0.0 and 1.0
		}
		return false, "bool_parsing", parseMsg
	default:
		return false, "bool_type", typeMsg
	}
}

// LaxInt applies pydantic's lax int rules; typ is "" on success. Values
// are arbitrary precision, as Python's ints are, so that range checks see
// the real number.
func LaxInt(raw json.RawMessage) (n *big.Int, typ, msg string) {
	const (
		typeMsg     = "Input should be a valid integer"
		parseMsg    = "Input should be a valid integer, unable to parse string as an integer"
		fractionMsg = "Input should be a valid integer, got a number with a fractional part"
	)
	text := strings.TrimSpace(string(raw))
	switch k := Kind(raw); {
	case k == 't':
		return big.NewInt(1), "", ""
	case k == 'f':
		return big.NewInt(0), "", ""
	case k == '"':
		s, _ := LaxString(raw)
		if n, ok := parseIntString(s); ok {
			return n, "", ""
		}
		return nil, "int_parsing", parseMsg
	case k == '-' || IsDigit(k):
		if !strings.ContainsAny(text, ".eE") {
			if n, ok := new(big.Int).SetString(text, 10); ok {
				return n, "", ""
			}
			return nil, "int_type", typeMsg
		}
		f, err := strconv.ParseFloat(text, 64)
		if math.IsInf(f, 0) {
			return nil, "finite_number", "Input should be a finite number"
		}
		if err != nil {
			return nil, "int_type", typeMsg
		}
		if f != math.Trunc(f) {
			return nil, "int_from_float", fractionMsg
		}
		// pydantic converts floats through a 64-bit integer.
		if math.Abs(f) >= 1<<63 {
			return nil, "int_parsing_size", "Unable to parse input string as an integer, exceeded maximum size"
		}
		return big.NewInt(int64(f)), "", ""
	default:
		return nil, "int_type", typeMsg
	}
}

// parseIntString is pydantic's str-to-int: surrounding whitespace, a sign,
// single underscores between digits and a fractional part of zeros
// ("7.00") are allowed.
func parseIntString(s string) (*big.Int, bool) {
	s = strings.TrimFunc(s, unicode.IsSpace)
	if whole, frac, ok := strings.Cut(s, "."); ok {
		if frac == "" || strings.Trim(frac, "0") != "" {
			return nil, false
		}
		s = whole
	}
	sign := ""
	if s != "" && (s[0] == '+' || s[0] == '-') {
		sign, s = s[:1], s[1:]
	}
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return nil, false
	}
	digits := strings.ReplaceAll(s, "_", "")
	if strings.Trim(digits, "0123456789") != "" {
		return nil, false
	}
	return new(big.Int).SetString(sign+digits, 10)
}

// Truthy is Python's truth value of the JSON value raw, for validators
// that test raw request data (`data.get(x) and data.get(y)`).
func Truthy(raw json.RawMessage) bool {
	text := strings.TrimSpace(string(raw))
	switch Kind(raw) {
	case 0, 'n', 'f':
		return false
	case 't':
		return true
	case '"':
		return text != `""`
	case '[', '{':
		n, err := wire.Parse(raw)
		return err == nil && (len(n.Arr) > 0 || len(n.Keys) > 0)
	default:
		f, err := strconv.ParseFloat(text, 64)
		return err != nil || f != 0
	}
}

// TruthyMember is Truthy of member name (false when absent: data.get
// returning None).
func (o *Object) TruthyMember(name string) bool {
	n := o.Nodes[name]
	return n != nil && TruthyNode(n)
}

// Range limits of a token id, as pydantic's ge/le constraints report them.
var (
	tokenIDMin = big.NewInt(0)
	tokenIDMax = big.NewInt(math.MaxInt64)
)

// TokenIDs is a `name: list[Annotated[int, Field(ge=0, le=2**63-1)]]` field.
func (o *Object) TokenIDs(name string) []int {
	raw, _ := o.Member(name)
	if ids, ok := FastTokenIDs(raw); ok {
		return ids
	}
	nodes, ok := o.ListNodes(name, true)
	if !ok {
		return nil
	}
	ids := make([]int, 0, len(nodes))
	valid := true
	for i, node := range nodes {
		item := node.Raw
		n, typ, msg := LaxInt(item)
		switch {
		case typ != "":
			o.Fail(o.At(name, i), typ, msg, item)
		case n.Cmp(tokenIDMin) < 0:
			o.Fail(o.At(name, i), "greater_than_equal", "Input should be greater than or equal to 0", item,
				CtxEntry{Key: "ge", Value: 0})
		case n.Cmp(tokenIDMax) > 0:
			o.Fail(o.At(name, i), "less_than_equal", "Input should be less than or equal to 9223372036854775807", item,
				CtxEntry{Key: "le", Value: tokenIDMax})
		default:
			ids = append(ids, int(n.Int64()))
			continue
		}
		valid = false
	}
	if !valid {
		return nil
	}
	return ids
}

// FastTokenIDs parses raw when it is an array of plain non-negative integer
// literals of at most 18 digits, the form every real client sends, without
// an allocation per item. Anything else (absent, other types, signs,
// fractions, exponents, huge numbers) reports ok=false and takes the
// general path, which applies pydantic's rules. raw is valid JSON.
func FastTokenIDs(raw json.RawMessage) (ids []int, ok bool) {
	i, n := 0, len(raw)
	skip := func() {
		for i < n && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
			i++
		}
	}
	skip()
	if i >= n || raw[i] != '[' {
		return nil, false
	}
	i++
	ids = make([]int, 0, len(raw)/7)
	for {
		skip()
		if i < n && raw[i] == ']' && len(ids) == 0 {
			return ids, true
		}
		start, v := i, 0
		for i < n && IsDigit(raw[i]) {
			v = v*10 + int(raw[i]-'0')
			i++
		}
		if i == start || i-start > 18 || (i < n && (raw[i] == '.' || raw[i] == 'e' || raw[i] == 'E')) {
			return nil, false
		}
		ids = append(ids, v)
		skip()
		switch {
		case i < n && raw[i] == ',':
			i++
		case i < n && raw[i] == ']':
			return ids, true
		default:
			return nil, false
		}
	}
}

// IsDigit reports whether c is an ASCII digit.
func IsDigit(c byte) bool { return c >= '0' && c <= '9' }

// Item is the tree of item i of list member name, when the object came
// from a tree.
func (o *Object) Item(name string, i int) *wire.Node {
	if n := o.Nodes[name]; n != nil && n.Kind == wire.Array && i < len(n.Arr) {
		return n.Arr[i]
	}
	return nil
}

// Trees is the trees of list member name's items, when the object came
// from a tree.
func (o *Object) Trees(name string) []*wire.Node {
	if n := o.Nodes[name]; n != nil && n.Kind == wire.Array {
		return n.Arr
	}
	return nil
}
