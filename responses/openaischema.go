package responses

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// The OpenAI types vLLM's ResponsesRequest declares members with (Tool,
// ToolChoice, ResponseTextConfig, Reasoning, the input item union, Metadata)
// are hundreds of pydantic models and TypedDicts. Rather than a hand copy of
// each, openai_types.json holds their pydantic-core schemas, exported by
// testdata/gen_openai_types.py from openai-python 3.3.1, and validate walks
// them with pydantic's lax rules: a smart union reports every choice's
// errors when none fits, each under the choice's class name.
//
//go:embed openai_types.json
var openaiTypesJSON []byte

// schemaNode is one pydantic-core schema, reduced to what validation reads.
type schemaNode struct {
	K       string         `json:"k"` // model, typed-dict, union, literal, str, int, float, bool, any, nullable, list, sequence, iterable, dict, ref
	Name    string         `json:"name"`
	Fields  []schemaField  `json:"fields"`
	Choices []schemaChoice `json:"choices"`
	Values  []string       `json:"values"`
	S       *schemaNode    `json:"s"`
	Items   *schemaNode    `json:"items"`
	Keys    *schemaNode    `json:"keys"`
	Vals    *schemaNode    `json:"values_schema"`
	Ref     string         `json:"ref"`
	// expected is a literal's "'a', 'b' or 'c'", as pydantic words it, and
	// literalMsg its error message.
	expected, literalMsg string
}

type schemaField struct {
	Name     string      `json:"name"`
	Required bool        `json:"required"`
	S        *schemaNode `json:"s"`
}

type schemaChoice struct {
	// Label is the choice's location segment in errors: a model's or
	// TypedDict's class name; "" for the segments vLLM drops (literal[...],
	// str, list[...]).
	Label string      `json:"label"`
	S     *schemaNode `json:"s"`
}

// openaiTypes is the decoded schema file, refs resolved: read-only once built.
var openaiTypes = sync.OnceValue(func() map[string]*schemaNode {
	// "values" names both a literal's values and a dict's value schema in
	// the file; the dict's is renamed before decoding.
	var file struct {
		Defs  map[string]*schemaNode `json:"defs"`
		Roots map[string]*schemaNode `json:"roots"`
	}
	if err := json.Unmarshal(dictValuesRenamed(openaiTypesJSON), &file); err != nil {
		panic(fmt.Sprintf("responses: openai_types.json: %v", err))
	}
	var resolve func(n *schemaNode) *schemaNode
	seen := map[*schemaNode]bool{}
	resolve = func(n *schemaNode) *schemaNode {
		if n == nil {
			return nil
		}
		if n.K == "ref" {
			d, ok := file.Defs[n.Ref]
			if !ok {
				panic("responses: openai_types.json: unknown ref " + n.Ref)
			}
			return resolve(d)
		}
		if seen[n] {
			return n
		}
		seen[n] = true
		n.S, n.Items, n.Keys, n.Vals = resolve(n.S), resolve(n.Items), resolve(n.Keys), resolve(n.Vals)
		for i := range n.Fields {
			n.Fields[i].S = resolve(n.Fields[i].S)
		}
		for i := range n.Choices {
			n.Choices[i].S = resolve(n.Choices[i].S)
		}
		if n.K == "literal" {
			*n = *literal(n.Values...)
		}
		return n
	}
	for k, n := range file.Roots {
		file.Roots[k] = resolve(n)
	}
	return file.Roots
})

// dictValuesRenamed rewrites a dict schema's "values" member to
// "values_schema" (its value is an object; a literal's is an array).
func dictValuesRenamed(data []byte) []byte {
	return []byte(strings.ReplaceAll(string(data), `"values":{`, `"values_schema":{`))
}

// literalExpected is pydantic's wording of a literal's choices.
func literalExpected(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = pylax.StrRepr(v)
	}
	if len(quoted) == 1 {
		return quoted[0]
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
}

// openaiType is the schema of root type name (see gen_openai_types.py).
func openaiType(name string) *schemaNode {
	n := openaiTypes()[name]
	if n == nil {
		panic("protocol: no OpenAI type " + name)
	}
	return n
}

// errSink collects a validation's errors: the first keep built in full,
// the rest only counted. vLLM's message shows ten errors and the total, and
// a list of unfitting union members can have hundreds of errors per item.
type errSink struct {
	errs    []pylax.FieldError
	keep    int
	omitted int
}

func (s *errSink) add(typ, msg string, loc *locPath, input json.RawMessage, ctx ...pylax.CtxEntry) {
	if len(s.errs) >= s.keep {
		s.omitted++
		return
	}
	// ctx is copied so that the callers' variadic slices stay on the stack.
	s.errs = append(s.errs, pylax.FieldError{Type: typ, Loc: loc.slice(), Msg: msg, Input: input, Ctx: slices.Clone(ctx)})
}

// locPath is an error location built only for the errors kept: each
// segment points at its parent.
type locPath struct {
	parent *locPath
	seg    any
	// base is the root's location (the member's, inside the body).
	base []any
}

// atName and atIndex are loc with a member name or list index appended,
// or loc itself once s only counts (no location is built, nor a segment
// boxed, for an error that is not kept).
func (s *errSink) atName(loc *locPath, name string) *locPath {
	if len(s.errs) >= s.keep {
		return loc
	}
	return &locPath{parent: loc, seg: name}
}

func (s *errSink) atIndex(loc *locPath, i int) *locPath {
	if len(s.errs) >= s.keep {
		return loc
	}
	return &locPath{parent: loc, seg: i}
}

func (l *locPath) slice() []any {
	n := 0
	root := l
	for ; root.parent != nil; root = root.parent {
		n++
	}
	out := make([]any, len(root.base)+n)
	copy(out, root.base)
	for p := l; p.parent != nil; p = p.parent {
		n--
		out[len(root.base)+n] = p.seg
	}
	return out
}

// validate checks the JSON value v against schema n as pydantic's lax mode
// does, adding each failure at loc to s.
func (n *schemaNode) validate(v *wire.Node, loc *locPath, s *errSink) {
	fail := func(typ, msg string, ctx ...pylax.CtxEntry) { s.add(typ, msg, loc, v.Raw, ctx...) }
	switch n.K {
	case "any":
	case "nullable":
		if v.Kind != wire.Null {
			n.S.validate(v, loc, s)
		}
	case "str":
		if v.Kind != wire.String {
			fail("string_type", "Input should be a valid string")
		}
	case "int", "float", "bool":
		if typ, msg := laxScalar(n.K, v.Raw); typ != "" {
			fail(typ, msg)
		}
	case "literal":
		if v.Kind != wire.String || !slices.Contains(n.Values, v.S) {
			fail("literal_error", n.literalMsg, pylax.CtxEntry{Key: "expected", Value: n.expected})
		}
	case "list":
		if v.Kind != wire.Array {
			fail("list_type", "Input should be a valid list")
			return
		}
		n.validateItems(v, loc, s)
	case "sequence":
		// Sequence[X]: an isinstance check, then every item; a string is a
		// Sequence that sequence_validator refuses.
		switch v.Kind {
		case wire.String:
			fail("sequence_str", "'str' instances are not allowed as a Sequence value",
				pylax.CtxEntry{Key: "type_name", Value: "str"})
		case wire.Array:
			n.validateItems(v, loc, s)
		default:
			fail("is_instance_of", "Input should be an instance of Sequence", pylax.CtxEntry{Key: "class", Value: "Sequence"})
		}
	case "iterable":
		// Iterable[X] validates its items lazily, when iterated: only
		// iterability is checked here.
		if v.Kind != wire.String && v.Kind != wire.Array && v.Kind != wire.Object {
			fail("iterable_type", "Input should be iterable")
		}
	case "dict":
		if v.Kind != wire.Object {
			fail("dict_type", "Input should be a valid dictionary")
			return
		}
		for i, k := range v.Keys {
			// Keys come from JSON, so always strings: only the values can fail.
			n.Vals.validate(v.Vals[i], s.atName(loc, k), s)
		}
	case "model", "typed-dict":
		if v.Kind != wire.Object {
			if n.K == "typed-dict" {
				fail("dict_type", "Input should be a valid dictionary")
			} else {
				fail("model_type", "Input should be a valid dictionary or instance of "+n.Name,
					pylax.CtxEntry{Key: "class_name", Value: n.Name})
			}
			return
		}
		for _, f := range n.Fields {
			fv, ok := v.Get(f.Name)
			switch {
			case ok:
				f.S.validate(fv, s.atName(loc, f.Name), s)
			case f.Required:
				s.add("missing", "Field required", s.atName(loc, f.Name), v.Raw)
			}
		}
	case "union":
		// Most values fit a choice: find it without building the other
		// choices' errors, which are only reported when none fits.
		for _, c := range n.Choices {
			if c.S.valid(v) {
				return
			}
		}
		for _, c := range n.Choices {
			at := loc
			if c.Label != "" {
				at = s.atName(loc, c.Label)
			}
			c.S.validate(v, at, s)
		}
	default:
		panic("protocol: unknown schema kind " + n.K)
	}
}

// valid reports whether v passes n: validate without the errors, which
// FuzzOpenAISchema holds it to.
func (n *schemaNode) valid(v *wire.Node) bool {
	switch n.K {
	case "any":
		return true
	case "nullable":
		return v.Kind == wire.Null || n.S.valid(v)
	case "str":
		return v.Kind == wire.String
	case "int", "float", "bool":
		typ, _ := laxScalar(n.K, v.Raw)
		return typ == ""
	case "literal":
		return v.Kind == wire.String && slices.Contains(n.Values, v.S)
	case "list", "sequence":
		if v.Kind != wire.Array {
			return false
		}
		for _, item := range v.Arr {
			if !n.Items.valid(item) {
				return false
			}
		}
		return true
	case "iterable":
		return v.Kind == wire.String || v.Kind == wire.Array || v.Kind == wire.Object
	case "dict":
		if v.Kind != wire.Object {
			return false
		}
		for _, val := range v.Vals {
			if !n.Vals.valid(val) {
				return false
			}
		}
		return true
	case "model", "typed-dict":
		if v.Kind != wire.Object {
			return false
		}
		for _, f := range n.Fields {
			fv, ok := v.Get(f.Name)
			if ok && !f.S.valid(fv) || !ok && f.Required {
				return false
			}
		}
		return true
	case "union":
		for _, c := range n.Choices {
			if c.S.valid(v) {
				return true
			}
		}
		return false
	}
	panic("protocol: unknown schema kind " + n.K)
}

// laxScalar is pydantic's lax check of an int, float or bool; typ is ""
// when raw is valid.
func laxScalar(kind string, raw json.RawMessage) (typ, msg string) {
	switch kind {
	case "int":
		_, typ, msg = pylax.LaxInt(raw)
	case "float":
		_, typ, msg = pylax.LaxFloat(raw)
	default:
		_, typ, msg = pylax.LaxBool(raw)
	}
	return typ, msg
}

// validateItems validates each item of array v against n.Items.
func (n *schemaNode) validateItems(v *wire.Node, loc *locPath, s *errSink) {
	for i, item := range v.Arr {
		n.Items.validate(item, s.atIndex(loc, i), s)
	}
}
