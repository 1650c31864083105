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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := detectContentFormat(tt.src); got != tt.want {
				t.Errorf("detectContentFormat = %s, want %s", got, tt.want)
			}
		})
	}
}
