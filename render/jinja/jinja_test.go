package jinja

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func renderString(t *testing.T, src string, vars any) (string, error) {
	t.Helper()
	tmpl, err := Compile(src, Options{})
	if err != nil {
		return "", err
	}
	return tmpl.Render(context.Background(), vars, func() time.Time { return parityClock })
}

func TestLexTokens(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want string // token kinds and values, space separated
	}{
		{"data only", "hello", "data:hello eof"},
		{"variable", "{{ a.b }}", "{{ name:a op:. name:b }} eof"},
		{"numbers", "{{ 1 2.5 1e3 0x1F 1_000 }}", "{{ int:1 float:2.5 float:1e3 int:0x1F int:1_000 }} eof"},
		{"operators", "{{ a//b**c != d }}", "{{ name:a op:// name:b op:** name:c op:!= name:d }} eof"},
		{"string escapes", `{{ 'a\nb' }}`, "{{ str:a\nb }} eof"},
		{"block trims newline", "{% if x %}\nA", "{% name:if name:x %} data:A eof"},
		{"lstrip before block", "A\n   {% x %}", "data:A\n {% name:x %} eof"},
		{"minus strips", "A \n {%- x -%} \n B", "data:A {% name:x %} data:B eof"},
		{"comment dropped", "A{# c #}B", "data:A data:B eof"},
		{"raw", "{% raw %}{{ x }}{% endraw %}", "data:{{ x }} eof"},
		{"brace inside expression", "{{ {'a': 1} }}", "{{ op:{ str:a op:: int:1 op:} }} eof"},
		{"trailing newline dropped", "A\n", "data:A eof"},
	}
	describe := func(toks []token) string {
		var parts []string
		for _, tk := range toks {
			switch tk.typ {
			case tData:
				parts = append(parts, "data:"+tk.val)
			case tVarBegin:
				parts = append(parts, "{{")
			case tVarEnd:
				parts = append(parts, "}}")
			case tBlockBegin:
				parts = append(parts, "{%")
			case tBlockEnd:
				parts = append(parts, "%}")
			case tName:
				parts = append(parts, "name:"+tk.val)
			case tString:
				parts = append(parts, "str:"+tk.val)
			case tInt:
				parts = append(parts, "int:"+tk.val)
			case tFloat:
				parts = append(parts, "float:"+tk.val)
			case tOp:
				parts = append(parts, "op:"+tk.val)
			case tEOF:
				parts = append(parts, "eof")
			}
		}
		return strings.Join(parts, " ")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			toks, err := lex(c.src)
			if err != nil {
				t.Fatal(err)
			}
			if got := describe(toks); got != c.want {
				t.Errorf("lex(%q)\n got: %q\nwant: %q", c.src, got, c.want)
			}
		})
	}
}

func TestFormatFloatRepr(t *testing.T) {
	cases := map[float64]string{
		0: "0.0", 1: "1.0", -1.5: "-1.5", 0.1: "0.1", 1e16: "1e+16", 1e15: "1000000000000000.0",
		1e-5: "1e-05", 1e-4: "0.0001", 123456789.125: "123456789.125", 1.5e300: "1.5e+300",
		2.5e-320: "2.5e-320", 0.30000000000000004: "0.30000000000000004",
	}
	for f, want := range cases {
		if got := formatFloatRepr(f); got != want {
			t.Errorf("formatFloatRepr(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestPyJSONDumps(t *testing.T) {
	v, err := FromJSON([]byte(`{"b":[1,2.0,{"x":null}],"a":"é\"\n","c":{},"d":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	indent := "  "
	cases := []struct {
		name string
		o    jsonOpts
		want string
	}{
		{"default", jsonOpts{itemSep: ", ", keySep: ": "}, `{"b": [1, 2.0, {"x": null}], "a": "é\"\n", "c": {}, "d": []}`},
		{"ascii", jsonOpts{itemSep: ", ", keySep: ": ", ensureASCII: true}, `{"b": [1, 2.0, {"x": null}], "a": "\u00e9\"\n", "c": {}, "d": []}`},
		{"sorted compact", jsonOpts{itemSep: ",", keySep: ":", sortKeys: true}, `{"a":"é\"\n","b":[1,2.0,{"x":null}],"c":{},"d":[]}`},
		{"indent", jsonOpts{itemSep: ",", keySep: ": ", indent: &indent}, "{\n  \"b\": [\n    1,\n    2.0,\n    {\n      \"x\": null\n    }\n  ],\n  \"a\": \"é\\\"\\n\",\n  \"c\": {},\n  \"d\": []\n}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := pyJSONDumps(v, c.o)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestFromJSONKeepsOrderAndTypes(t *testing.T) {
	out, err := renderString(t, "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{{ d|tojson }}",
		mustJSON(t, `{"d":{"z":1,"a":2.0,"m":[1e2],"z":3,"big":123456789012345678901234}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `z=3;a=2.0;m=[100.0];big=123456789012345678901234;{"z": 3, "a": 2.0, "m": [100.0], "big": 123456789012345678901234}`
	if out != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

func mustJSON(t *testing.T, s string) Value {
	t.Helper()
	v, err := FromJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRenderAcceptsGoValues(t *testing.T) {
	d := NewDict(2)
	d.SetStr("name", Str("x"))
	cases := []struct {
		name string
		vars any
		want string
	}{
		{"map", map[string]any{"name": "go", "n": 3, "l": []any{1.5, true, nil}}, "go 3 [1.5, True, None]"},
		{"dict", d, "x  []"},
		{"nil", nil, "  []"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := renderString(t, "{{ name }} {{ n }} {{ l|default([]) }}", c.vars)
			if err != nil {
				t.Fatal(err)
			}
			if out != c.want {
				t.Errorf("got %q want %q", out, c.want)
			}
		})
	}
	if _, err := renderString(t, "x", []any{1}); err == nil {
		t.Error("a list context was accepted")
	}
}

func TestErrorKinds(t *testing.T) {
	cases := []struct {
		src    string
		kind   ErrorKind
		pyType string
	}{
		{"{% if %}", KindSyntax, "TemplateSyntaxError"},
		{"{{ x|nofilter }}", KindSyntax, "TemplateAssertionError"},
		{"{{ x.y }}", KindUndefined, "UndefinedError"},
		{"{{ 1 + 'a' }}", KindType, "TypeError"},
		{"{{ {}.update({}) }}", KindSecurity, "SecurityError"},
		{"{{ raise_exception('boom') }}", KindRaised, "TemplateError"},
		{"{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", KindLimit, "LimitExceeded"},
	}
	for _, c := range cases {
		tmpl, err := Compile(c.src, Options{Limits: Limits{MaxSteps: 100000}})
		if err == nil {
			_, err = tmpl.Render(context.Background(), nil, nil)
		}
		var te *TemplateError
		if !errors.As(err, &te) {
			t.Errorf("%s: error %v is not a *TemplateError", c.src, err)
			continue
		}
		if te.Kind != c.kind || te.PyType != c.pyType {
			t.Errorf("%s: got %v/%s, want %v/%s (%v)", c.src, te.Kind, te.PyType, c.kind, c.pyType, err)
		}
	}
}

func TestLimits(t *testing.T) {
	small := Limits{MaxOutputBytes: 1000, MaxSteps: 500, MaxDepth: 20}
	cases := []struct {
		name string
		src  string
	}{
		{"steps", "{% for i in range(1000) %}{% endfor %}"},
		{"output", "{% for i in range(100) %}{{ '0123456789abcdef' }}{% endfor %}"},
		{"string doubling", "{% set ns = namespace(s='ab') %}{% for i in range(30) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"},
		{"string repeat", "{{ 'x' * 100000000 }}"},
		{"list repeat", "{{ ([1] * 100000000)|length }}"},
		{"format width", "{{ '%*d' % (1000000000, 1) }}"},
		{"recursion", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"},
		{"replace growth", "{{ ('x' * 900).replace('', 'yyyy') }}"},
		{"power", "{{ 2 ** 100000000 }}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmpl, err := Compile(c.src, Options{Limits: small})
			if err != nil {
				t.Fatal(err)
			}
			_, err = tmpl.Render(context.Background(), nil, nil)
			var te *TemplateError
			if !errors.As(err, &te) || (te.Kind != KindLimit && te.PyType != "RecursionError") {
				t.Fatalf("got %v, want a limit error", err)
			}
		})
	}
	t.Run("deep nesting", func(t *testing.T) {
		_, err := Compile("{{ "+strings.Repeat("(", 5000)+"1"+strings.Repeat(")", 5000)+" }}", Options{})
		var te *TemplateError
		if !errors.As(err, &te) || te.Kind != KindSyntax {
			t.Fatalf("got %v, want a syntax error", err)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		tmpl, err := Compile("{% for i in range(100000) %}{% endfor %}", Options{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = tmpl.Render(ctx, nil, nil)
		var te *TemplateError
		if !errors.As(err, &te) || te.Kind != KindLimit {
			t.Fatalf("got %v, want a cancellation error", err)
		}
	})
}

func TestConcurrentRender(t *testing.T) {
	tmpl, err := Compile("{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{{ m.content }}{% endfor %}{{ ns.n }}", Options{})
	if err != nil {
		t.Fatal(err)
	}
	vars := mustJSON(t, `{"messages":[{"content":"a"},{"content":"b"}]}`)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				out, err := tmpl.Render(context.Background(), vars, nil)
				if err != nil || out != "ab2" {
					t.Errorf("got %q, %v", out, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestPyJSONDumpsStrings pins string escaping to CPython's json.dumps
// (outputs taken from python3): DEL is escaped only with ensure_ascii,
// U+2028 stays raw without it, astral characters become surrogate pairs
// with it. A byte that is not UTF-8 cannot be in a Python str; it is
// written as U+FFFD, as a lossy decode would have made it.
func TestPyJSONDumpsStrings(t *testing.T) {
	cases := []struct {
		s, ascii, utf8 string
	}{
		{"\x7f", `"\u007f"`, "\"\x7f\""},
		{"a\u2028b\U0001F600\x01\b\f\t", `"a\u2028b\ud83d\ude00\u0001\b\f\t"`, "\"a\u2028b\U0001F600\\u0001\\b\\f\\t\""},
		{"\"\\</>&", `"\"\\</>&"`, `"\"\\</>&"`},
		{"x\xffy", `"x\ufffdy"`, "\"x\uFFFDy\""},
	}
	for _, c := range cases {
		for _, ascii := range []bool{true, false} {
			got, err := pyJSONDumps(Value{kind: KindStr, s: c.s}, jsonOpts{itemSep: ", ", keySep: ": ", ensureASCII: ascii})
			want := c.utf8
			if ascii {
				want = c.ascii
			}
			if err != nil || got != want {
				t.Errorf("json.dumps(%q, ensure_ascii=%v) = %s, %v; want %s", c.s, ascii, got, err, want)
			}
		}
	}
}

// FuzzFromJSONMatchesReference: FromJSON (internal/wire) gives the value
// the encoding/json walk it replaced gave, or fails where it failed; the
// one difference is a fix: the old walk accepted a value followed by bytes
// that are not JSON ("{} x"), which json.loads rejects.
func FuzzFromJSONMatchesReference(f *testing.F) {
	for _, s := range []string{`{"b":[1,2.0,{"x":null}],"a":"é\"\n","c":{},"d":[]}`, `[1e400,-0.0,12345678901234567890123]`,
		`{"a":1,"a":2}`, `"\ud800"`, "\"\xff\"", `[1,]`, `01`, `tru`, ` {} `, `{"a":1} x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := refFromJSON(data)
		got, err := FromJSON(data)
		if err != nil && wantErr == nil && !json.Valid(data) {
			return
		}
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: FromJSON err = %v, reference err = %v", data, err, wantErr)
		}
		if err == nil && pyRepr(got) != pyRepr(want) {
			t.Fatalf("%q: FromJSON %s, reference %s", data, pyRepr(got), pyRepr(want))
		}
	})
}
