package protocol

// pydantic's lax ("python") mode, the readers of the request fields that
// chat and completion requests share: vLLM validates the result of
// json.loads with these rules, so true, 1 and "yes" are bools and 7, 7.0
// and "7" ints. Each reader records its errors on the object and returns
// the field's typed value (or its default); the wire types are in
// chat.go, completion.go and sampling.go.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/vrender/vrender/internal/wire"
)

// laxFloat applies pydantic's lax float rules; typ is "" on success.
func laxFloat(raw json.RawMessage) (f float64, typ, msg string) {
	const (
		typeMsg  = "Input should be a valid number"
		parseMsg = "Input should be a valid number, unable to parse string as a number"
	)
	switch k := jsonKind(raw); {
	case k == 't':
		return 1, "", ""
	case k == 'f':
		return 0, "", ""
	case k == '"':
		s, _ := laxString(raw)
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, "float_parsing", parseMsg
		}
		return v, "", ""
	case k == '-' || isDigit(k) || k == 'I' || k == 'N':
		v, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, "float_type", typeMsg
		}
		return v, "", ""
	}
	return 0, "float_type", typeMsg
}

// optionalFloat is a `name: float | None = def` field.
func (o *object) optionalFloat(name string, def *float64) *float64 {
	raw, ok := o.members[name]
	if !ok {
		return def
	}
	if isNull(raw) {
		return nil
	}
	v, typ, msg := laxFloat(raw)
	if typ != "" {
		o.fail(o.at(name), typ, msg, raw)
		return def
	}
	return &v
}

// float is a `name: float = def` field.
func (o *object) float(name string, def float64) float64 {
	raw, ok := o.members[name]
	if !ok {
		return def
	}
	v, typ, msg := laxFloat(raw)
	if typ != "" {
		o.fail(o.at(name), typ, msg, raw)
		return def
	}
	return v
}

// checkedInt validates one int value at loc with optional ge/le bounds.
func (o *object) checkedInt(loc []any, raw json.RawMessage, ge, le *big.Int) (*big.Int, bool) {
	n, typ, msg := laxInt(raw)
	switch {
	case typ != "":
		o.fail(loc, typ, msg, raw)
		return nil, false
	case ge != nil && n.Cmp(ge) < 0:
		o.fail(loc, "greater_than_equal", "Input should be greater than or equal to "+ge.String(), raw,
			CtxEntry{Key: "ge", Value: ge})
		return nil, false
	case le != nil && n.Cmp(le) > 0:
		o.fail(loc, "less_than_equal", "Input should be less than or equal to "+le.String(), raw,
			CtxEntry{Key: "le", Value: le})
		return nil, false
	}
	return n, true
}

var (
	minInt64 = big.NewInt(math.MinInt64)
	maxInt64 = big.NewInt(math.MaxInt64)
)

// clampInt converts a Python int to a Go int, saturating: values beyond
// the machine range are far outside every limit vLLM applies later.
func clampInt(n *big.Int) int {
	switch {
	case n.IsInt64():
		return int(n.Int64())
	case n.Sign() < 0:
		return math.MinInt
	}
	return math.MaxInt
}

// optionalInt is a `name: int | None = def` field with optional bounds.
func (o *object) optionalInt(name string, def *int, ge, le *int) *int {
	raw, ok := o.members[name]
	if !ok {
		return def
	}
	if isNull(raw) {
		return nil
	}
	var geB, leB *big.Int
	if ge != nil {
		geB = big.NewInt(int64(*ge))
	}
	if le != nil {
		leB = big.NewInt(int64(*le))
	}
	n, ok := o.checkedInt(o.at(name), raw, geB, leB)
	if !ok {
		return def
	}
	v := clampInt(n)
	return &v
}

// integer is a `name: int = def` field.
func (o *object) integer(name string, def int) int {
	raw, ok := o.members[name]
	if !ok {
		return def
	}
	n, ok := o.checkedInt(o.at(name), raw, nil, nil)
	if !ok {
		return def
	}
	return clampInt(n)
}

var (
	int64Min = big.NewInt(math.MinInt64)
	int64Max = big.NewInt(math.MaxInt64)
)

// optionalInt64 is a `name: int | None = Field(None, ge=-2**63, le=2**63-1)` field.
func (o *object) optionalInt64(name string) *int64 {
	raw, ok := o.members[name]
	if !ok || isNull(raw) {
		return nil
	}
	n, ok := o.checkedInt(o.at(name), raw, int64Min, int64Max)
	if !ok {
		return nil
	}
	v := n.Int64()
	return &v
}

// int64Field is a `name: int = Field(def, ge=-2**63, le=2**63-1)` field.
func (o *object) int64Field(name string, def int64) int64 {
	raw, ok := o.members[name]
	if !ok {
		return def
	}
	n, ok := o.checkedInt(o.at(name), raw, int64Min, int64Max)
	if !ok {
		return def
	}
	return n.Int64()
}

// optionalNullableBool is a `name: bool | None = None` field.
func (o *object) optionalNullableBool(name string) *bool {
	if _, ok := o.members[name]; !ok {
		return nil
	}
	return o.optionalBool(name, false)
}

// optionalIntList is a `name: list[int] | None = def` field.
func (o *object) optionalIntList(name string, def []int) []int {
	raw, ok := o.members[name]
	if !ok {
		return def
	}
	if isNull(raw) {
		return nil
	}
	items, ok := o.list(name, false)
	if !ok {
		return def
	}
	out := make([]int, 0, len(items))
	valid := true
	for i, item := range items {
		// pydantic keeps any Python int; a Go int cannot, and saturating
		// would silently change the id, so ids past int64 are refused.
		n, ok := o.checkedInt(o.at(name, i), item, minInt64, maxInt64)
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

// stringList is a `name: list[str] = def` field (null is invalid).
func (o *object) stringList(name string, def []string) []string {
	raw, ok := o.members[name]
	if !ok {
		return def
	}
	if isNull(raw) {
		o.fail(o.at(name), "list_type", "Input should be a valid list", raw)
		return def
	}
	items, ok := o.list(name, false)
	if !ok {
		return def
	}
	out := make([]string, 0, len(items))
	valid := true
	for i, item := range items {
		s, ok := laxString(item)
		if !ok {
			o.fail(o.at(name, i), "string_type", "Input should be a valid string", item)
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

// stopField is `stop: str | list[str] | None = []`. A union failure lists
// one error per member, as pydantic does (vLLM drops the member names from
// the location).
func (o *object) stopField(name string) []string {
	raw, ok := o.members[name]
	if !ok {
		return []string{}
	}
	if isNull(raw) {
		return nil
	}
	if s, ok := laxString(raw); ok {
		return []string{s}
	}
	if jsonKind(raw) != '[' {
		o.fail(o.at(name), "string_type", "Input should be a valid string", raw)
		o.fail(o.at(name), "list_type", "Input should be a valid list", raw)
		return nil
	}
	var items []json.RawMessage
	_ = json.Unmarshal(raw, &items)
	out := make([]string, 0, len(items))
	var bad []int
	for i, item := range items {
		s, ok := laxString(item)
		if !ok {
			bad = append(bad, i)
			continue
		}
		out = append(out, s)
	}
	if len(bad) > 0 {
		o.fail(o.at(name), "string_type", "Input should be a valid string", raw)
		for _, i := range bad {
			o.fail(o.at(name, i), "string_type", "Input should be a valid string", items[i])
		}
		return nil
	}
	return out
}

// optionalLiteral is a `name: Literal[values...] | None = None` field.
func (o *object) optionalLiteral(name string, values ...string) *string {
	raw, ok := o.members[name]
	if !ok || isNull(raw) {
		return nil
	}
	if s, ok := laxString(raw); ok {
		for _, v := range values {
			if s == v {
				return &s
			}
		}
	}
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = pyStrRepr(v)
	}
	expected := quoted[len(quoted)-1]
	if len(quoted) > 1 {
		expected = strings.Join(quoted[:len(quoted)-1], ", ") + " or " + expected
	}
	o.fail(o.at(name), "literal_error", "Input should be "+expected, raw, CtxEntry{Key: "expected", Value: expected})
	return nil
}

// logitBias is `logit_bias: dict[str, float] | None`, kept in key order.
func (o *object) logitBias(name string) []LogitBiasEntry {
	raw := o.optionalDict(name)
	if raw == nil {
		return nil
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return nil
	}
	out := make([]LogitBiasEntry, 0, len(members))
	valid := true
	for _, key := range keysInOrder(raw, members) {
		v, typ, msg := laxFloat(members[key])
		if typ != "" {
			o.fail(o.at(name, key), typ, msg, members[key])
			valid = false
			continue
		}
		out = append(out, LogitBiasEntry{Key: key, Bias: v})
	}
	if !valid {
		return nil
	}
	return out
}

// thinkingTokenBudget is vLLM's ThinkingTokenBudget: a non-negative int, or
// -1 (unlimited, stored as None); bools and floats are refused by its
// before-validator.
func (o *object) thinkingTokenBudget(name string) *int {
	raw, ok := o.members[name]
	if !ok || isNull(raw) {
		return nil
	}
	const msg = "`thinking_token_budget` must be a non-negative integer or -1 for unlimited."
	k := jsonKind(raw)
	text := strings.TrimSpace(string(raw))
	fail := func() *int {
		o.fail(o.at(name), "value_error", "Value error, "+msg+" (parameter=thinking_token_budget, value="+pyStrOfJSON(raw)+")", raw,
			CtxEntry{Key: "error", Value: PyException{Class: "VLLMValidationError", Message: msg, Parameter: new(name)}})
		return nil
	}
	if k != '-' && !isDigit(k) || strings.ContainsAny(text, ".eE") {
		return fail()
	}
	n, ok := new(big.Int).SetString(text, 10)
	if !ok || n.Cmp(big.NewInt(-1)) < 0 {
		return fail()
	}
	if n.Sign() < 0 {
		return nil
	}
	v := clampInt(n)
	return &v
}

// rawNumber reads a JSON number as vLLM's model validators see it
// (data.get(x) compared with ints); ok is false for anything else.
func rawNumber(raw json.RawMessage) (float64, bool) {
	k := jsonKind(raw)
	if k != '-' && !isDigit(k) {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
	return f, err == nil
}

// nested validates a member typed as a nested pydantic model (or, with
// dataclass, a dataclass) named class: nil for an absent or null member,
// nil after recording pydantic's type error for a non-object, else the
// member as an object whose errors are located under name.
func (o *object) nested(name string, dataclass bool, class string) (sub *object, raw json.RawMessage) {
	raw, ok := o.members[name]
	if !ok || isNull(raw) {
		return nil, raw
	}
	if jsonKind(raw) != '{' {
		if dataclass {
			o.fail(o.at(name), "dataclass_type", "Input should be a dictionary or an instance of "+class, raw,
				CtxEntry{Key: "class_name", Value: class})
		} else {
			o.fail(o.at(name), "model_type", "Input should be a valid dictionary or instance of "+class, raw,
				CtxEntry{Key: "class_name", Value: class})
		}
		return nil, raw
	}
	return o.sub(name, raw), raw
}

// sub is the JSON object raw, the member name of o, as an object of its own.
func (o *object) sub(name string, raw json.RawMessage) *object {
	var members map[string]json.RawMessage
	_ = json.Unmarshal(raw, &members)
	return &object{raw: raw, members: members, loc: o.at(name)}
}

// streamOptions is `stream_options: StreamOptions | None`.
func (o *object) streamOptions(name string) *StreamOptions {
	sub, _ := o.nested(name, false, "StreamOptions")
	if sub == nil {
		return nil
	}
	so := &StreamOptions{
		IncludeUsage:         sub.optionalBool("include_usage", false),
		ContinuousUsageStats: sub.optionalBool("continuous_usage_stats", false),
	}
	o.errs = append(o.errs, sub.errs...)
	return so
}

// dictList is a `name: list[dict] | None` field whose items are objects
// carrying a "function" object with a string "name" (OpenAI tools).
func (o *object) dictList(name string) []json.RawMessage {
	items, ok := o.list(name, false)
	if !ok {
		return nil
	}
	valid := true
	for i, item := range items {
		if jsonKind(item) != '{' {
			o.fail(o.at(name, i), "model_type", "Input should be a valid dictionary or instance of ChatCompletionToolsParam", item,
				CtxEntry{Key: "class_name", Value: "ChatCompletionToolsParam"})
			valid = false
			continue
		}
		toolNode := o.item(name, i)
		tool := membersOfTree(item, toolNode)
		if t, ok := tool["type"]; ok {
			if s, _ := laxString(t); s != "function" {
				o.fail(o.at(name, i, "type"), "literal_error", "Input should be 'function'", t,
					CtxEntry{Key: "expected", Value: "'function'"})
				valid = false
			}
		}
		fn, ok := tool["function"]
		switch {
		case !ok:
			o.fail(o.at(name, i, "function"), "missing", "Field required", item)
			valid = false
			continue
		case jsonKind(fn) != '{':
			o.fail(o.at(name, i, "function"), "model_type", "Input should be a valid dictionary or instance of FunctionDefinition", fn,
				CtxEntry{Key: "class_name", Value: "FunctionDefinition"})
			valid = false
			continue
		}
		var fnNode *wire.Node
		if toolNode != nil {
			fnNode, _ = toolNode.Get("function")
		}
		def := membersOfTree(fn, fnNode)
		if n, ok := def["name"]; !ok {
			o.fail(o.at(name, i, "function", "name"), "missing", "Field required", fn)
			valid = false
		} else if _, isStr := laxString(n); !isStr {
			o.fail(o.at(name, i, "function", "name"), "string_type", "Input should be a valid string", n)
			valid = false
		}
		// FunctionDefinition's optional fields: description: str | None,
		// parameters: dict[str, Any] | None.
		if d, ok := def["description"]; ok && !isNull(d) {
			if _, isStr := laxString(d); !isStr {
				o.fail(o.at(name, i, "function", "description"), "string_type", "Input should be a valid string", d)
				valid = false
			}
		}
		if p, ok := def["parameters"]; ok && !isNull(p) && jsonKind(p) != '{' {
			o.fail(o.at(name, i, "function", "parameters"), "dict_type", "Input should be a valid dictionary", p)
			valid = false
		}
	}
	if !valid {
		return nil
	}
	return items
}

// toolChoice reads tool_choice, defaulting an absent one to "none", or
// "auto" when tools are given (check_tool_usage). The model validator has
// already refused every other invalid form.
func (o *object) toolChoice(name string, haveTools bool) ToolChoice {
	n, ok := o.nodes[name]
	switch {
	case !ok && haveTools:
		return ToolChoice{Kind: ToolChoiceAuto}
	case !ok:
		return ToolChoice{Kind: ToolChoiceNone}
	}
	o.namedToolChoiceType(name, n)
	return toolChoiceOf(n)
}

// documents is `documents: list[dict[str, str]] | None`.
func (o *object) documents(name string) json.RawMessage {
	items, ok := o.list(name, false)
	if !ok {
		return nil
	}
	valid := true
	for i, item := range items {
		if jsonKind(item) != '{' {
			o.fail(o.at(name, i), "dict_type", "Input should be a valid dictionary", item)
			valid = false
			continue
		}
		var doc map[string]json.RawMessage
		_ = json.Unmarshal(item, &doc)
		for _, key := range keysInOrder(item, doc) {
			if _, ok := laxString(doc[key]); !ok {
				o.fail(o.at(name, i, key), "string_type", "Input should be a valid string", doc[key])
				valid = false
			}
		}
	}
	if !valid {
		return nil
	}
	return o.members[name]
}

// structuredOutputs is `structured_outputs: StructuredOutputsParams | None`.
func (o *object) structuredOutputs(name string) *StructuredOutputsParams {
	sub, raw := o.nested(name, true, "StructuredOutputsParams")
	if sub == nil {
		return nil
	}
	so := &StructuredOutputsParams{}
	if j, ok := sub.members["json"]; ok && !isNull(j) {
		if k := jsonKind(j); k != '"' && k != '{' {
			sub.fail(sub.at("json", "str"), "string_type", "Input should be a valid string", j)
			sub.fail(sub.at("json", "dict[any,any]"), "dict_type", "Input should be a valid dictionary", j)
		} else {
			so.JSON = j
		}
	}
	so.Regex = sub.optionalString("regex")
	if items, ok := sub.list("choice", false); ok {
		so.Choice = make([]string, 0, len(items))
		for i, item := range items {
			s, ok := laxString(item)
			if !ok {
				sub.fail(sub.at("choice", i), "string_type", "Input should be a valid string", item)
			}
			so.Choice = append(so.Choice, s)
		}
	}
	so.Grammar = sub.optionalString("grammar")
	if _, ok := sub.members["json_object"]; ok {
		so.JSONObject = sub.optionalBool("json_object", false)
	}
	so.DisableAnyWhitespace = sub.boolean("disable_any_whitespace", false)
	so.DisableAdditionalProperties = sub.boolean("disable_additional_properties", false)
	so.WhitespacePattern = sub.optionalString("whitespace_pattern")
	so.StructuralTag = sub.optionalString("structural_tag")
	if len(sub.errs) > 0 {
		o.errs = append(o.errs, sub.errs...)
		return nil
	}
	if n := so.constraintCount(); n != 1 {
		msg := "You must use one kind of structured outputs constraint but none are specified: " + so.dictRepr()
		if n > 1 {
			msg = "You can only use one kind of structured outputs constraint but multiple are specified: " + so.dictRepr()
		}
		o.fail(o.at(name), "value_error", "Value error, "+msg, raw,
			CtxEntry{Key: "error", Value: PyException{Class: "ValueError", Message: msg}})
		return nil
	}
	return so
}

// vllmXargs is `vllm_xargs: dict[str, str | int | float | list[str | int |
// float]] | None`, kept raw.
func (o *object) vllmXargs(name string) json.RawMessage {
	raw := o.optionalDict(name)
	if raw == nil {
		return nil
	}
	var members map[string]json.RawMessage
	_ = json.Unmarshal(raw, &members)
	scalar := func(v json.RawMessage) bool {
		k := jsonKind(v)
		return k == '"' || k == '-' || isDigit(k)
	}
	valid := true
	for _, key := range keysInOrder(raw, members) {
		v := members[key]
		if scalar(v) {
			continue
		}
		if jsonKind(v) == '[' {
			var items []json.RawMessage
			_ = json.Unmarshal(v, &items)
			ok := true
			for _, it := range items {
				ok = ok && scalar(it)
			}
			if ok {
				continue
			}
		}
		o.fail(o.at(name, key), "union_type", "Input should be a valid string, integer, number or list", v)
		valid = false
	}
	if !valid {
		return nil
	}
	return raw
}

// repetitionDetection is `repetition_detection: RepetitionDetectionParams |
// None`, returned as the dataclass serialises: all three fields.
func (o *object) repetitionDetection(name string) json.RawMessage {
	sub, raw := o.nested(name, true, "RepetitionDetectionParams")
	if sub == nil {
		return nil
	}
	maxSize := sub.integer("max_pattern_size", 0)
	minSize := sub.integer("min_pattern_size", 0)
	minCount := sub.integer("min_count", 0)
	if len(sub.errs) > 0 {
		o.errs = append(o.errs, sub.errs...)
		return nil
	}
	var msg string
	switch {
	case maxSize < 0 || minSize < 0 || minSize > maxSize:
		msg = "max_pattern_size, min_pattern_size must be >=0, with min_pattern_size <= max_pattern_size. " +
			"Set both to 0 to disable repetitive pattern detection."
	case maxSize > 0 && minCount < 2:
		msg = "min_count must be >= 2 to detect repetitive patterns in engine output. " +
			"If you do not wish to detect repetitive patterns, set max_pattern_size to 0."
	}
	if msg != "" {
		o.fail(o.at(name), "value_error", "Value error, "+msg, raw,
			CtxEntry{Key: "error", Value: PyException{Class: "ValueError", Message: msg}})
		return nil
	}
	return json.RawMessage(fmt.Sprintf(`{"max_pattern_size":%d,"min_pattern_size":%d,"min_count":%d}`, maxSize, minSize, minCount))
}

// pyStrOfJSON is Python's str() of the value json.loads makes of raw (None
// for an absent value): what an f-string shows.
func pyStrOfJSON(raw json.RawMessage) string {
	if s, ok := laxString(raw); ok {
		return s
	}
	return pyReprOfJSON(raw)
}

// pyReprOfJSON is Python's repr() of the value json.loads makes of raw.
func pyReprOfJSON(raw json.RawMessage) string {
	switch jsonKind(raw) {
	case 0, 'n':
		return "None"
	case 't':
		return "True"
	case 'f':
		return "False"
	case '"':
		s, _ := laxString(raw)
		return pyStrRepr(s)
	case '[':
		var items []json.RawMessage
		_ = json.Unmarshal(raw, &items)
		var b strings.Builder
		b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyReprOfJSON(it))
		}
		b.WriteByte(']')
		return b.String()
	case '{':
		var members map[string]json.RawMessage
		_ = json.Unmarshal(raw, &members)
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range keysInOrder(raw, members) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyStrRepr(k))
			b.WriteString(": ")
			b.WriteString(pyReprOfJSON(members[k]))
		}
		b.WriteByte('}')
		return b.String()
	}
	return pyNumberStr(strings.TrimSpace(string(raw)))
}
