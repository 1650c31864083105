package render

import (
	"fmt"
	"strings"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// Structural tags as vLLM builds them for tool calling
// (vllm/tool_parsers/structural_tag_registry.py get_model_structural_tag):
// vLLM's own hermes and minimax builders and xgrammar 0.2.3's builtin
// templates (python/xgrammar/builtin_structural_tag.py), always with
// reasoning=False, any_order=False and exclude_special_tokens=True, as
// ToolParser.get_structural_tag calls them. The result is
// json.dumps(StructuralTag.model_dump()): every pydantic field, defaults
// included, in declaration order (xgrammar/structural_tag.py).

// stTool is one function tool as xgrammar's FunctionToolParam sees it.
type stTool struct {
	name   string
	params *wire.Node // nil: absent or null
	strict *bool
}

// schema is _get_function_parameters: true for strict false or no
// parameters, else the parameters.
func (t stTool) schema() *node {
	if (t.strict != nil && !*t.strict) || t.params == nil {
		return boolean(true)
	}
	return t.params
}

// stTools are the function tools as xgrammar reads them, and whether one
// is strict.
func stTools(tools []protocol.Tool) ([]stTool, bool, error) {
	out := make([]stTool, 0, len(tools))
	anyStrict := false
	for i := range tools {
		t := &tools[i]
		strict, err := toolStrict(t)
		if err != nil {
			return nil, false, err
		}
		out = append(out, stTool{name: t.Function.Name, params: t.Function.Parameters, strict: strict})
		anyStrict = anyStrict || (strict != nil && *strict)
	}
	return out, anyStrict, nil
}

// toolStrict is the tool's strict member: nil when absent or null.
func toolStrict(t *protocol.Tool) (*bool, error) {
	switch n := t.Function.Get("strict"); {
	case n.IsNull():
		return nil, nil
	case n.Kind == wire.Bool:
		return &n.B, nil
	}
	return nil, &BadRequestError{Message: "invalid tool: function.strict must be a boolean", Param: "tools"}
}

// structuralTagFor returns the structural_tag string vLLM's
// _apply_structural_tag puts into structured_outputs, or ok false when it
// leaves the request alone (tool_choice none, or auto without a strict
// tool).
func structuralTagFor(model string, req *protocol.ChatCompletionRequest) (string, bool, error) {
	if len(req.Tools) == 0 {
		return "", false, nil
	}
	tc := req.ToolChoice
	mode := tc.Kind // normalize_tool_choice: a named choice is "forced"
	if mode != protocol.ToolChoiceAuto && mode != protocol.ToolChoiceRequired && mode != protocol.ToolChoiceNamed {
		return "", false, nil
	}
	tools, anyStrict, err := stTools(req.Tools)
	if err != nil {
		return "", false, err
	}
	if mode == protocol.ToolChoiceAuto && !anyStrict {
		return "", false, nil
	}
	if mode == protocol.ToolChoiceNamed {
		var kept []stTool
		for _, t := range tools {
			if t.name == tc.Name {
				kept = append(kept, t)
			}
		}
		if len(kept) == 0 {
			return "", false, &BadRequestError{Message: fmt.Sprintf("The tool with name '%s' is not found in the tools list.", tc.Name)}
		}
		if len(kept) != 1 {
			return "", false, &BadRequestError{Message: "Forced tool choice must resolve to exactly one tool."}
		}
		tools = kept
	}
	if mode == protocol.ToolChoiceRequired && len(tools) == 0 {
		return "", false, &BadRequestError{Message: "The 'tools' list is empty, which is not allowed when 'tool_choice' is 'required'."}
	}
	build, ok := structuralTagBuilders[model]
	if !ok {
		return "", false, fmt.Errorf("unknown structural tag model %q", model)
	}
	format := build(tools, mode)
	return string(pylax.AppendPyDumps(nil, obj("type", str("structural_tag"), "format", format))), true, nil
}

// The format models of xgrammar/structural_tag.py, each built as a tree
// with its fields in declaration order, the tools' parameters as the
// request's own trees; pylax.AppendPyDumps writes the whole once at the end.

func obj(kv ...any) *node {
	n := &node{Kind: jObj, Keys: make([]string, 0, len(kv)/2), Vals: make([]*node, 0, len(kv)/2)}
	for i := 0; i < len(kv); i += 2 {
		n.Keys, n.Vals = append(n.Keys, kv[i].(string)), append(n.Vals, kv[i+1].(*node))
	}
	return n
}

func str(s string) *node { return strNode(s) }

func boolean(v bool) *node { return &node{Kind: jBool, B: v} }

func list(items ...*node) *node { return &node{Kind: jArr, Arr: items} }

func strs(ss ...string) *node {
	items := make([]*node, len(ss))
	for i, s := range ss {
		items[i] = str(s)
	}
	return list(items...)
}

func constString(v string) *node {
	return obj("type", str("const_string"), "value", str(v))
}

func jsonSchema(schema *node, style string) *node {
	return obj("type", str("json_schema"), "json_schema", schema, "style", str(style), "any_order", boolean(false))
}

func anyText(excludes ...string) *node {
	return obj("type", str("any_text"), "excludes", strs(excludes...))
}

func regexFormat(pattern string) *node {
	return obj("type", str("regex"), "pattern", str(pattern))
}

func sequence(elements ...*node) *node {
	return obj("type", str("sequence"), "elements", list(elements...))
}

func tagFormat(begin string, content *node, end string) *node {
	return obj("type", str("tag"), "begin", str(begin), "content", content, "end", str(end))
}

func triggeredTags(triggers []string, tags []*node, excludes ...string) *node {
	return obj("type", str("triggered_tags"), "triggers", strs(triggers...), "tags", list(tags...),
		"at_least_one", boolean(false), "stop_after_first", boolean(false), "excludes", strs(excludes...))
}

func tagsWithSeparator(tags []*node, separator string, stopAfterFirst bool) *node {
	return obj("type", str("tags_with_separator"), "tags", list(tags...), "separator", str(separator),
		"at_least_one", boolean(true), "stop_after_first", boolean(stopAfterFirst))
}

// structuralTagBuilders are keyed by structural_tag_model. Each gets the
// tools normalize_tool_choice kept and the simplified choice: auto,
// required or named ("forced", with exactly one tool).
var structuralTagBuilders = map[string]func(tools []stTool, mode protocol.ToolChoiceKind) *node{
	"hermes":        hermesTag,
	"minimax":       minimaxTag,
	"llama":         llamaTag,
	"kimi":          kimiTag,
	"deepseek_r1":   deepseekR1Tag,
	"deepseek_v3_1": deepseekV31Tag,
	"deepseek_v3_2": dsmlTag("<｜DSML｜function_calls>"),
	"deepseek_v4":   dsmlTag("<｜DSML｜tool_calls>"),
	"qwen_3_coder":  qwen3CoderTag,
	"glm_4_7":       glm47Tag,
}

var thinkExcludes = []string{"<think>", "</think>"}

func eachTool(tools []stTool, tag func(stTool) *node) []*node {
	out := make([]*node, len(tools))
	for i, t := range tools {
		out[i] = tag(t)
	}
	return out
}

// hermesTag is vLLM's get_hermes_structural_tag: each tool in both the
// multi-line and the one-line <tool_call> form.
func hermesTag(tools []stTool, mode protocol.ToolChoiceKind) *node {
	var tags []*node
	for _, t := range tools {
		for _, f := range [][2]string{{"<tool_call>\n{\"name\": \"", "}\n</tool_call>"}, {"<tool_call>{\"name\": \"", "}</tool_call>"}} {
			tags = append(tags, tagFormat(f[0]+t.name+`", "arguments": `, jsonSchema(t.schema(), "json"), f[1]))
		}
	}
	switch mode {
	case protocol.ToolChoiceAuto:
		if len(tags) == 0 {
			return anyText()
		}
		return triggeredTags([]string{"<tool_call>"}, tags)
	case protocol.ToolChoiceNamed:
		return tagsWithSeparator(tags, "", true)
	default:
		return tagsWithSeparator(tags, "", false)
	}
}

// minimaxTag is vLLM's get_minimax_structural_tag (which vLLM's registry
// uses instead of xgrammar's).
func minimaxTag(tools []stTool, mode protocol.ToolChoiceKind) *node {
	const begin, end = "<minimax:tool_call>\n", "</minimax:tool_call>"
	tags := eachTool(tools, func(t stTool) *node {
		return tagFormat(`<invoke name="`+t.name+"\">\n", jsonSchema(t.schema(), "minimax_xml"), "</invoke>\n")
	})
	switch mode {
	case protocol.ToolChoiceAuto:
		if len(tags) == 0 {
			return anyText(thinkExcludes...)
		}
		return triggeredTags([]string{"<minimax:tool_call>"},
			[]*node{tagFormat(begin, tagsWithSeparator(tags, "", false), end)}, thinkExcludes...)
	case protocol.ToolChoiceNamed:
		return sequence(constString("\n"+begin), tagsWithSeparator(tags, "", true), constString(end))
	default:
		return sequence(constString("\n"+begin), tagsWithSeparator(tags, "", false), constString(end))
	}
}

func llamaTag(tools []stTool, mode protocol.ToolChoiceKind) *node {
	tags := eachTool(tools, func(t stTool) *node {
		return tagFormat(`{"name": "`+t.name+`", "parameters": `, jsonSchema(t.schema(), "json"), "}")
	})
	switch mode {
	case protocol.ToolChoiceAuto:
		if len(tags) == 0 {
			return anyText(thinkExcludes...)
		}
		return triggeredTags([]string{`{"name": `}, tags, thinkExcludes...)
	case protocol.ToolChoiceNamed:
		return tags[0]
	default:
		return tagsWithSeparator(tags, "", false)
	}
}

func kimiTag(tools []stTool, mode protocol.ToolChoiceKind) *node {
	const (
		callBegin    = "<|tool_call_begin|>"
		sectionBegin = "<|tool_calls_section_begin|>"
		sectionEnd   = "<|tool_calls_section_end|>"
	)
	tags := eachTool(tools, func(t stTool) *node {
		return tagFormat(callBegin+"functions."+t.name+":", sequence(regexFormat(`\d+`),
			constString("<|tool_call_argument_begin|>"), jsonSchema(t.schema(), "json")), "<|tool_call_end|>")
	})
	switch mode {
	case protocol.ToolChoiceAuto:
		if len(tags) == 0 {
			return anyText(thinkExcludes...)
		}
		return triggeredTags([]string{sectionBegin},
			[]*node{tagFormat(sectionBegin, tagsWithSeparator(tags, "", false), sectionEnd)},
			"<think>", "</think>", callBegin)
	case protocol.ToolChoiceNamed:
		return sequence(constString(sectionBegin), tags[0], constString(sectionEnd))
	default:
		return sequence(constString(sectionBegin), tagsWithSeparator(tags, "", false), constString(sectionEnd))
	}
}

const (
	dsCallsBegin = "<｜tool▁calls▁begin｜>"
	dsCallsEnd   = "<｜tool▁calls▁end｜>"
	dsCallBegin  = "<｜tool▁call▁begin｜>"
	dsCallEnd    = "<｜tool▁call▁end｜>"
	dsSep        = "<｜tool▁sep｜>"
)

func deepseekR1Tag(tools []stTool, mode protocol.ToolChoiceKind) *node {
	const jsonBegin, jsonEnd = "\n```json\n", "\n```"
	if mode == protocol.ToolChoiceNamed {
		t := tools[0]
		return tagFormat(dsCallsBegin+dsCallBegin+"function"+dsSep+t.name+jsonBegin, jsonSchema(t.schema(), "json"),
			jsonEnd+dsCallEnd+dsCallsEnd)
	}
	tags := eachTool(tools, func(t stTool) *node {
		return tagFormat(dsCallBegin+"function"+dsSep+t.name+jsonBegin, jsonSchema(t.schema(), "json"), jsonEnd+dsCallEnd)
	})
	return deepseekCalls(tags, "\n", mode)
}

func deepseekV31Tag(tools []stTool, mode protocol.ToolChoiceKind) *node {
	if mode == protocol.ToolChoiceNamed {
		t := tools[0]
		return tagFormat(dsCallsBegin+dsCallBegin+t.name+dsSep, jsonSchema(t.schema(), "json"), dsCallEnd+dsCallsEnd)
	}
	tags := eachTool(tools, func(t stTool) *node {
		return tagFormat(dsCallBegin+t.name+dsSep, jsonSchema(t.schema(), "json"), dsCallEnd)
	})
	return deepseekCalls(tags, "", mode)
}

// deepseekCalls wraps DeepSeek R1/V3.1 call tags in the calls section, for
// auto behind its trigger.
func deepseekCalls(tags []*node, separator string, mode protocol.ToolChoiceKind) *node {
	if mode == protocol.ToolChoiceAuto {
		if len(tags) == 0 {
			return anyText(thinkExcludes...)
		}
		return triggeredTags([]string{dsCallsBegin},
			[]*node{tagFormat(dsCallsBegin, tagsWithSeparator(tags, separator, false), dsCallsEnd)}, thinkExcludes...)
	}
	return tagFormat(dsCallsBegin, tagsWithSeparator(tags, separator, false), dsCallsEnd)
}

// dsmlTag is DeepSeek V3.2's and V4's DSML template; they differ in the
// calls block's name only.
func dsmlTag(trigger string) func([]stTool, protocol.ToolChoiceKind) *node {
	begin := trigger + "\n"
	end := "</" + strings.TrimPrefix(trigger, "<")
	return func(tools []stTool, mode protocol.ToolChoiceKind) *node {
		tags := eachTool(tools, func(t stTool) *node {
			return tagFormat(`<｜DSML｜invoke name="`+t.name+"\">\n", jsonSchema(t.schema(), "deepseek_xml"), "</｜DSML｜invoke>\n")
		})
		switch mode {
		case protocol.ToolChoiceAuto:
			if len(tags) == 0 {
				return anyText(thinkExcludes...)
			}
			return triggeredTags([]string{trigger},
				[]*node{tagFormat(begin, tagsWithSeparator(tags, "", false), end)}, thinkExcludes...)
		case protocol.ToolChoiceNamed:
			return sequence(constString("\n\n"+begin), tags[0], constString(end))
		default:
			return sequence(constString("\n\n"+begin), tagsWithSeparator(tags, "", false), constString(end))
		}
	}
}

func qwen3CoderTag(tools []stTool, mode protocol.ToolChoiceKind) *node {
	tags := eachTool(tools, func(t stTool) *node {
		return tagFormat("<tool_call>\n<function="+t.name+">\n", jsonSchema(t.schema(), "qwen_xml"), "\n</function>\n</tool_call>")
	})
	switch mode {
	case protocol.ToolChoiceAuto:
		if len(tags) == 0 {
			return anyText(thinkExcludes...)
		}
		return triggeredTags([]string{"<tool_call>\n<function="}, tags, thinkExcludes...)
	case protocol.ToolChoiceNamed:
		return tags[0]
	default:
		return tagsWithSeparator(tags, "\n", false)
	}
}

func glm47Tag(tools []stTool, mode protocol.ToolChoiceKind) *node {
	argTokens := []string{"<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"}
	tags := eachTool(tools, func(t stTool) *node {
		return tagFormat("<tool_call>"+t.name, jsonSchema(t.schema(), "glm_xml"), "</tool_call>")
	})
	switch mode {
	case protocol.ToolChoiceAuto:
		if len(tags) == 0 {
			return anyText(append([]string{"<think>", "</think>", "<tool_call>", "</tool_call>"}, argTokens...)...)
		}
		return triggeredTags([]string{"<tool_call>"}, tags, append([]string{"<think>", "</think>", "</tool_call>"}, argTokens...)...)
	case protocol.ToolChoiceNamed:
		return tags[0]
	default:
		return tagsWithSeparator(tags, "", false)
	}
}
