package jinja

import (
	"context"
	"fmt"
	"testing"
)

// renderBoth renders fast and slow, two templates that must agree, with
// ctx and limits, and fails unless they give the same bytes or the same
// error.
func renderBoth(t *testing.T, fast, slow string, ctx Value, limits Limits) {
	t.Helper()
	var outs [2]string
	var errs [2]error
	for i, src := range []string{fast, slow} {
		tmpl, err := Compile(src, Options{Limits: limits})
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		outs[i], errs[i] = tmpl.Render(context.Background(), ctx, nil)
	}
	if outs[0] != outs[1] || fmt.Sprint(errs[0]) != fmt.Sprint(errs[1]) {
		t.Fatalf("fast %s\n gives %q, %v\nslow %s\n gives %q, %v", fast, outs[0], errs[0], slow, outs[1], errs[1])
	}
}

// TestToJSONInPlaceMatchesValue: {{ x|tojson }} writes the JSON into the
// output; it must give what building the string first gives, errors and
// limits included.
func TestToJSONInPlaceMatchesValue(t *testing.T) {
	exprs := []string{"messages", "tools", "messages[0]", "messages | last", "undefined_name",
		"add_generation_prompt", "1.5", "none", "{'a': (1, 2)}", "ns", "loop"}
	var ctxs []Value
	for _, pc := range parityContexts {
		v, err := FromJSON([]byte(pc.json))
		if err != nil {
			t.Fatal(err)
		}
		ctxs = append(ctxs, v)
	}
	for _, limits := range []Limits{{}, {MaxOutputBytes: 60}, {MaxOutputBytes: 300}} {
		for _, x := range exprs {
			for _, prefix := range []string{"", "some text before "} {
				fast := prefix + "{% set ns = namespace(a=1) %}{{ " + x + "|tojson }}"
				slow := prefix + "{% set ns = namespace(a=1) %}{% set j = " + x + "|tojson %}{{ j }}"
				for _, ctx := range ctxs {
					renderBoth(t, fast, slow, ctx, limits)
					// Inside a captured block the output builder is another.
					renderBoth(t, "{% set c %}"+fast+"{% endset %}{{ c }}", "{% set c %}"+slow+"{% endset %}{{ c }}", ctx, limits)
				}
			}
		}
	}
}

// TestStrMethodFastPaths: strip() and startswith/endswith with one str
// skip argument binding; they must answer as the bound calls do.
func TestStrMethodFastPaths(t *testing.T) {
	strs := []string{"", " ", "\n\t x y \u3000\n", "<tool_response>abc</tool_response>", "héllo wörld", "\x1c\x1dz\x1f"}
	affixes := []string{"", "<tool_response>", "</tool_response>", "h", "héllo", "d", "z\x1f", " "}
	ctx := NewDict(2)
	ctx.SetStr("strs", List(strsValues(strs)))
	ctx.SetStr("affixes", List(strsValues(affixes)))
	loop := func(body string) string {
		return "{% for s in strs %}{% for a in affixes %}" + body + "|{% endfor %}{% endfor %}"
	}
	cases := [][2]string{
		{"{{ s.strip() }}", "{{ s.strip(none) }}"},
		{"{{ s.lstrip() }}", "{{ s.lstrip(none) }}"},
		{"{{ s.rstrip() }}", "{{ s.rstrip(none) }}"},
		{"{{ s.startswith(a) }}", "{{ s.startswith(a, none) }}"},
		{"{{ s.endswith(a) }}", "{{ s.endswith(a, none, none) }}"},
		{"{{ s.startswith(1) }}", "{{ s.startswith(1, none) }}"},
		{"{{ s.endswith((a, 'x')) }}", "{{ s.endswith((a, 'x'), none) }}"},
	}
	for _, c := range cases {
		renderBoth(t, loop(c[0]), loop(c[1]), DictValue(ctx), Limits{})
	}
}

func strsValues(ss []string) []Value {
	out := make([]Value, len(ss))
	for i, s := range ss {
		out[i] = Str(s)
	}
	return out
}

// TestCompareConstStrFastPath: x == 'str' and x != 'str' compare strings
// directly; they must answer as the operator does with the constant on
// the left (the general path).
func TestCompareConstStrFastPath(t *testing.T) {
	vals := `["user", "", "us", 1, 1.0, true, none, undefined_name, ["user"], {"user": 1}, ("user",), "user"|safe, "USER"|lower, ns, range(2)]`
	for _, op := range []string{"==", "!="} {
		for _, want := range []string{"user", "", "1", "True", "None"} {
			q := "'" + want + "'"
			fast := "{% set ns = namespace(a=1) %}{% for x in " + vals + " %}{{ x " + op + " " + q + " }},{% endfor %}"
			slow := "{% set ns = namespace(a=1) %}{% for x in " + vals + " %}{{ " + q + " " + op + " x }},{% endfor %}"
			renderBoth(t, fast, slow, DictValue(NewDict(0)), Limits{})
		}
	}
}
