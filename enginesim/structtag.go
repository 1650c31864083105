package enginesim

import (
	"strings"

	"github.com/vrender/vrender/internal/wire"
)

// structuralTagText is output satisfying a structural tag that forces a
// tool call (tool_choice required or named, as vLLM builds the tag): the
// first allowed tool called in the tag's own begin/end format, arguments
// generated from its schema in the tag's style. An auto tag (triggered
// tags: the model may answer in text) and formats the simulator does not
// model give ok=false, leaving the default answer.
func structuralTagText(tag string) (string, bool) {
	v, err := parseJSONValue([]byte(tag))
	if err != nil {
		return "", false
	}
	format := member(v, "format")
	if format == nil {
		return "", false
	}
	var b strings.Builder
	if !writeFormat(&b, format, 0) {
		return "", false
	}
	return b.String(), true
}

func writeFormat(b *strings.Builder, f *wire.Node, depth int) bool {
	if f == nil || depth > 32 {
		return false
	}
	kind := member(f, "type")
	if kind == nil || kind.Kind != wire.String {
		return false
	}
	switch kind.S {
	case "const_string":
		return writeStr(b, member(f, "value"))
	case "any_text":
		return true
	case "regex":
		// The only regex vLLM's tags use is Kimi's call index, \d+.
		if p := member(f, "pattern"); p != nil && p.S == `\d+` {
			b.WriteString("0")
			return true
		}
		return false
	case "sequence":
		els := member(f, "elements")
		if els == nil {
			return false
		}
		for _, e := range els.Arr {
			if !writeFormat(b, e, depth+1) {
				return false
			}
		}
		return true
	case "tag":
		return writeStr(b, member(f, "begin")) && writeFormat(b, member(f, "content"), depth+1) && writeStr(b, member(f, "end"))
	case "tags_with_separator":
		tags := member(f, "tags")
		if tags == nil || len(tags.Arr) == 0 {
			return false
		}
		return writeFormat(b, tags.Arr[0], depth+1)
	case "json_schema":
		style := "json"
		if s := member(f, "style"); s != nil && s.Kind == wire.String {
			style = s.S
		}
		return writeArguments(b, member(f, "json_schema"), style)
	}
	return false
}

func writeStr(b *strings.Builder, v *wire.Node) bool {
	if v == nil || v.Kind != wire.String {
		return false
	}
	b.WriteString(v.S)
	return true
}

// writeArguments writes arguments satisfying schema in one of xgrammar's
// styles: JSON, or the XML parameter forms of Qwen, MiniMax, DeepSeek DSML
// and GLM.
func writeArguments(b *strings.Builder, schema *wire.Node, style string) bool {
	args := "{}"
	if schema != nil && schema.Kind == wire.Object && schemaType(schema) == "object" {
		args = jsonForSchema(schema)
	}
	if style == "json" {
		b.WriteString(args)
		return true
	}
	v, err := parseJSONValue([]byte(args))
	if err != nil || v.Kind != wire.Object {
		return false
	}
	for i, k := range v.Keys {
		val := v.Vals[i]
		text := val.S
		if val.Kind != wire.String {
			var vb strings.Builder
			writePy(&vb, val)
			text = vb.String()
		}
		switch style {
		case "qwen_xml":
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString("<parameter=" + k + ">\n" + text + "\n</parameter>")
		case "minimax_xml":
			b.WriteString(`<parameter name="` + k + `">` + text + "</parameter>\n")
		case "deepseek_xml":
			isString := "false"
			if val.Kind == wire.String {
				isString = "true"
			}
			b.WriteString(`<｜DSML｜parameter name="` + k + `" string="` + isString + `">` + text + "</｜DSML｜parameter>\n")
		case "glm_xml":
			b.WriteString("<arg_key>" + k + "</arg_key><arg_value>" + text + "</arg_value>")
		default:
			return false
		}
	}
	return true
}
