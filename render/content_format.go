package render

import (
	"strings"

	"github.com/vrender/vrender/render/jinja"
)

// detectContentFormat is vLLM's _detect_content_format(template,
// default="string") (vllm/renderers/hf.py): "openai" when the template
// loops over a message's content or over a variable named content, found
// by walking the template's own AST as vLLM walks Jinja2's; "string"
// otherwise, and when the walk gives up.
func detectContentFormat(src string) string {
	if format, ok := jinja.DetectContentFormat(src); ok && format == FormatOpenAI {
		return FormatOpenAI
	}
	return FormatString
}

// mentionsDeveloper reports whether a template handles the developer role
// itself; vLLM maps developer messages to system ones otherwise.
func mentionsDeveloper(src string) bool {
	return strings.Contains(src, `'developer'`) || strings.Contains(src, `"developer"`)
}
