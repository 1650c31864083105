package enginesim

import (
	"strings"
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
	format := v.get("format")
	if format == nil {
		return "", false
	}
	var b strings.Builder
	if !writeFormat(&b, format, 0) {
		return "", false
	}
	return b.String(), true
}

func writeFormat(b *strings.Builder, f *jsonValue, depth int) bool {
	if f == nil || depth > 32 {
		return false
	}
	kind := f.get("type")
	if kind == nil || kind.kind != 's' {
		return false
	}
	switch kind.str {
	case "const_string":
		return writeStr(b, f.get("value"))
	case "any_text":
		return true
	case "regex":
		// The only regex vLLM's tags use is Kimi's call index, \d+.
		if p := f.get("pattern"); p != nil && p.str == `\d+` {
			b.WriteString("0")
			return true
		}
		return false
	case "sequence":
		els := f.get("elements")
		if els == nil {
			return false
		}
		for _, e := range els.items {
			if !writeFormat(b, e, depth+1) {
				return false
			}
		}
		return true
	case "tag":
		return writeStr(b, f.get("begin")) && writeFormat(b, f.get("content"), depth+1) && writeStr(b, f.get("end"))
	case "tags_with_separator":
		tags := f.get("tags")
		if tags == nil || len(tags.items) == 0 {
			return false
		}
		return writeFormat(b, tags.items[0], depth+1)
	case "json_schema":
		style := "json"
		if s := f.get("style"); s != nil && s.kind == 's' {
			style = s.str
		}
		return writeArguments(b, f.get("json_schema"), style)
	}
	return false
}

func writeStr(b *strings.Builder, v *jsonValue) bool {
	if v == nil || v.kind != 's' {
		return false
	}
	b.WriteString(v.str)
	return true
}

// writeArguments writes arguments satisfying schema in one of xgrammar's
// styles: JSON, or the XML parameter forms of Qwen, MiniMax, DeepSeek DSML
// and GLM.
func writeArguments(b *strings.Builder, schema *jsonValue, style string) bool {
	args := "{}"
	if schema != nil && schema.kind == 'o' && schemaType(schema) == "object" {
		args = jsonForSchema(schema)
	}
	if style == "json" {
		b.WriteString(args)
		return true
	}
	v, err := parseJSONValue([]byte(args))
	if err != nil || v.kind != 'o' {
		return false
	}
	for i, k := range v.keys {
		val := v.vals[i]
		text := val.str
		if val.kind != 's' {
			var vb strings.Builder
			val.writePy(&vb)
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
			if val.kind == 's' {
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
