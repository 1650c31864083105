package render

import "testing"

func TestDetectContentFormat(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"plain string use", `{% for m in messages %}{{ m['content'] }}{% endfor %}`, FormatString},
		{"loop over content", `{% for m in messages %}{% for c in m['content'] %}{{ c.text }}{% endfor %}{% endfor %}`, FormatOpenAI},
		{"attribute access", `{%- for message in messages -%}{%- for part in message.content -%}x{%- endfor -%}{%- endfor -%}`, FormatOpenAI},
		{"filtered content", `{% for m in messages %}{% for c in m.content | selectattr('type', 'equalto', 'text') %}{% endfor %}{% endfor %}`, FormatOpenAI},
		{"sliced messages var", `{% set loop_messages = messages[1:] %}{% for m in loop_messages %}{% for c in m["content"] %}{% endfor %}{% endfor %}`, FormatOpenAI},
		{"chained assignment", `{% set a = messages %}{% set b = a[1:] %}{% for m in b %}{% for c in m.content %}{% endfor %}{% endfor %}`, FormatOpenAI},
		{"content loop over another variable", `{% for m in messages %}{% endfor %}{% for c in other.content %}{% endfor %}`, FormatString},
		{"loop in a comment", `{# {% for m in messages %}{% for c in m.content %}{% endfor %}{% endfor %} #}`, FormatString},
		{"conditional loop", `{% for m in messages if m.role != 'system' %}{% for c in m['content'] if c.type == 'text' %}{% endfor %}{% endfor %}`, FormatOpenAI},
		{"tuple target falls back", `{% for i, m in messages %}{% endfor %}`, FormatString},
		// vLLM also answers openai for a loop over a variable named content,
		// as in Qwen3-VL/Qwen3.5's render_content(content) macro.
		{"loop over a content variable", `{% macro render_content(content) %}{% for item in content %}{{ item.text }}{% endfor %}{% endmacro %}` +
			`{% for m in messages %}{{ render_content(m.content) }}{% endfor %}`, FormatOpenAI},
		{"raw block is text", `{% raw %}{% for m in messages %}{% for c in m.content %}{% endfor %}{% endfor %}{% endraw %}`, FormatString},
		{"parenthesised content", `{% for m in messages %}{% for c in (m.content) %}{% endfor %}{% endfor %}`, FormatOpenAI},
		{"tested content", `{% for m in messages %}{% for c in m.content is string %}{% endfor %}{% endfor %}`, FormatOpenAI},
		{"assignment cycle ends", `{% set a = messages %}{% set messages = a %}{% for m in a %}{% for c in m.content %}{% endfor %}{% endfor %}`, FormatOpenAI},
		{"content under a non-message loop", `{% for m in tools %}{% for c in m.content %}{% endfor %}{% endfor %}`, FormatString},
		{"tuple content target falls back", `{% for m in messages %}{% for k, v in m.content %}{% endfor %}{% endfor %}`, FormatString},
		{"unparsable template", `{% for m in messages %}`, FormatString},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := detectContentFormat(tt.src); got != tt.want {
				t.Errorf("detectContentFormat = %s, want %s", got, tt.want)
			}
		})
	}
}
