package protocol

import (
	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// Tool is one entry of a chat request's tools: vLLM's
// ChatCompletionToolsParam, decoded from the body's tree once. The schema
// and the members vLLM keeps without a type (OpenAIBaseModel allows extra
// fields, and model_dump writes them after the declared ones, so a chat
// template sees them) stay JSON, as trees.
type Tool struct {
	Type     string // "function", the only type vLLM accepts (and its default)
	Function FunctionDefinition
	// Extra are the members other than type and function, in request order.
	Extra []Member
}

// FunctionDefinition is vLLM's FunctionDefinition.
type FunctionDefinition struct {
	Name        string
	Description *string    // nil: absent or null
	Parameters  *wire.Node // an object; nil: absent or null
	// Extra are the members other than name, description and parameters
	// (strict among them), in request order.
	Extra []Member
}

// Member is one member of a JSON object kept as JSON.
type Member struct {
	Key   string
	Value *wire.Node
}

// Get returns the extra member key (strict, for one), or nil.
func (f *FunctionDefinition) Get(key string) *wire.Node {
	for _, m := range f.Extra {
		if m.Key == key {
			return m.Value
		}
	}
	return nil
}

// tools reads `tools: list[ChatCompletionToolsParam] | None`: nil when
// absent, null or invalid (the errors recorded), else one Tool per item.
func (o *object) tools(name string) []Tool {
	if o.dictList(name) == nil {
		return nil
	}
	items := o.Trees(name)
	out := make([]Tool, len(items))
	for i, n := range items {
		out[i] = toolOf(n)
	}
	return out
}

// toolOf reads a tool dictList validated: an object with a "function"
// object whose name is a string, description a string or null, and
// parameters an object or null.
func toolOf(n *wire.Node) Tool {
	t := Tool{Type: "function"}
	for i, k := range n.Keys {
		v := n.Vals[i]
		switch k {
		case "type":
		case "function":
			t.Function = functionOf(v)
		default:
			t.Extra = append(t.Extra, Member{k, v})
		}
	}
	return t
}

func functionOf(n *wire.Node) FunctionDefinition {
	var f FunctionDefinition
	for i, k := range n.Keys {
		v := n.Vals[i]
		switch k {
		case "name":
			f.Name = v.S
		case "description":
			if v.Kind == wire.String {
				f.Description = &v.S
			}
		case "parameters":
			if v.Kind == wire.Object {
				f.Parameters = v
			}
		default:
			f.Extra = append(f.Extra, Member{k, v})
		}
	}
	return f
}

// DecodeTools decodes data, a JSON list, as a chat request's tools member
// is decoded (the errors' locations start at "tools"): for callers that
// hold tools apart from a request, such as benchmark and parity inputs.
func DecodeTools(data []byte) ([]Tool, error) {
	root, err := wire.Parse(data)
	if err != nil {
		return nil, err
	}
	o := &object{&pylax.Object{Nodes: map[string]*wire.Node{"tools": root}}}
	tools := o.tools("tools")
	if len(o.Errs) > 0 {
		return nil, &pylax.ValidationError{Errors: o.Errs}
	}
	return tools, nil
}

// AppendJSON appends the tool as vLLM's model_dump writes it, compactly:
// declared fields first (defaults filled in), then the extra members in
// request order, schemas as the request gave them.
func (t *Tool) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":`...)
	dst = wire.AppendString(dst, t.Type)
	dst = append(dst, `,"function":{"name":`...)
	dst = wire.AppendString(dst, t.Function.Name)
	dst = append(dst, `,"description":`...)
	if d := t.Function.Description; d != nil {
		dst = wire.AppendString(dst, *d)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"parameters":`...)
	if p := t.Function.Parameters; p != nil {
		dst = wire.AppendNode(dst, p)
	} else {
		dst = append(dst, "null"...)
	}
	dst = appendMembers(dst, t.Function.Extra)
	dst = append(dst, '}')
	return append(appendMembers(dst, t.Extra), '}')
}

func appendMembers(dst []byte, ms []Member) []byte {
	for _, m := range ms {
		dst = append(dst, ',')
		dst = wire.AppendString(dst, m.Key)
		dst = append(dst, ':')
		dst = wire.AppendNode(dst, m.Value)
	}
	return dst
}

// MarshalJSON is AppendJSON, for encoding/json at the edges (tests, the
// CLI).
func (t Tool) MarshalJSON() ([]byte, error) { return t.AppendJSON(nil), nil }
