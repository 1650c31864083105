package parsers

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/vrender/vrender/parsers/pyjson"
)

const (
	jcTools    = `"tools":[{"type":"function","function":{"name":"get_weather"}},{"type":"function","function":{"name":"search"}}]`
	jcRequired = `{"tool_choice":"required",` + jcTools + `}`
	jcNamed    = `{"tool_choice":{"type":"function","function":{"name":"get_weather"}},` + jcTools + `}`
	jcSerial   = `{"tool_choice":"required","parallel_tool_calls":false,` + jcTools + `}`
)

// Parsers vLLM marks supports_required_and_named, with and without auto
// tool choice and a reasoning parser: the generic path ignores all three.
var (
	jcPythonic = Config{ToolParser: "pythonic", EnableAutoToolChoice: true}
	jcXLAM     = Config{ToolParser: "xlam"}
	jcQwen3    = Config{ReasoningParser: "qwen3", ToolParser: "mistral", EnableAutoToolChoice: true}
)

// none is the answer to required or named output that yields no call.
func none(finish string) Result { return Result{Content: new(""), FinishReason: finish} }

func calls(finish string, cs ...ToolCall) Result {
	return Result{Content: new(""), ToolCalls: cs, FinishReason: finish}
}

var jsonChoiceCases = []toolCase{
	{"required/single", jcRequired, `[{"name": "get_weather", "parameters": {"city": "Paris"}}]`,
		calls("tool_calls", call("get_weather", `{"city": "Paris"}`))},
	{"required/compact, re-serialised as json.dumps", jcRequired,
		`[{"name":"search","parameters":{"q":"\u00e9 東京\n","n":1.50,"e":1e-7,"big":123456789012345678901234567890,"l":[true,null]}}]`,
		calls("tool_calls", call("search", `{"q": "é 東京\n", "n": 1.5, "e": 1e-07, "big": 123456789012345678901234567890, "l": [true, null]}`))},
	{"required/two calls, pretty", jcRequired,
		"[\n  {\n    \"name\": \"get_weather\",\n    \"parameters\": {\"city\": \"Paris\"}\n  },\n  {\"name\": \"search\", \"parameters\": {}}\n]\n",
		calls("tool_calls", call("get_weather", `{"city": "Paris"}`), call("search", `{}`))},
	{"required/surrounding whitespace", jcRequired, " \n[ {\"name\":\"f\",\"parameters\":{}} ] \t\n",
		calls("tool_calls", call("f", `{}`))},
	{"required/parameters before name", jcRequired, `[{"parameters": {"a": [1, 2]}, "name": "f"}]`,
		calls("tool_calls", call("f", `{"a": [1, 2]}`))},
	{"required/repeated parameters before name, last wins", jcRequired, `[{"parameters": {"a": 1}, "parameters": {"b": 2}, "name": "f"}]`,
		calls("tool_calls", call("f", `{"b": 2}`))},
	{"required/no parameters", jcRequired, `[{"name": "f"}]`, calls("tool_calls", call("f", "null"))},
	{"required/null parameters", jcRequired, `[{"name": "f", "parameters": null}]`, calls("tool_calls", call("f", "null"))},
	{"required/other FunctionDefinition fields", jcRequired,
		`[{"name": "f", "description": "d", "strict": true, "defer_loading": null, "extra": [1, {"x": 2}], "parameters": {}}]`,
		calls("tool_calls", call("f", `{}`))},
	{"required/lax bool strings", jcRequired, `[{"name": "f", "strict": "Yes", "defer_loading": 0, "parameters": {}}]`,
		calls("tool_calls", call("f", `{}`))},
	{"required/name is not a known tool (not checked)", jcRequired, `[{"name": "nope", "parameters": {}}]`,
		calls("tool_calls", call("nope", `{}`))},
	{"required/parallel_tool_calls false keeps the first", jcSerial,
		`[{"name": "a", "parameters": {}}, {"name": "b", "parameters": {"x": 1}}]`, calls("tool_calls", call("a", `{}`))},
	{"required/empty list", jcRequired, `[]`, none("tool_calls")},
	{"required/empty output", jcRequired, ``, none("tool_calls")},
	{"required/whitespace only", jcRequired, " \n ", none("tool_calls")},
	{"required/plain text", jcRequired, `The weather is fine.`, none("tool_calls")},
	{"required/an object, not a list", jcRequired, `{"name": "f", "parameters": {}}`, none("tool_calls")},
	{"required/truncated mid call", jcRequired, `[{"name": "f", "parameters": {"a": 1}}, {"name": "g", "param`, none("tool_calls")},
	{"required/truncated before ]", jcRequired, `[{"name": "f", "parameters": {"a": 1}}`, none("tool_calls")},
	{"required/text after the list", jcRequired, `[{"name": "f", "parameters": {}}] done`, none("tool_calls")},
	{"required/second list", jcRequired, `[{"name": "f", "parameters": {}}][]`, none("tool_calls")},
	{"required/parameters a list", jcRequired, `[{"name": "f", "parameters": [1]}]`, none("tool_calls")},
	{"required/parameters a string", jcRequired, `[{"name": "f", "parameters": "{}"}]`, none("tool_calls")},
	{"required/parameters a number", jcRequired, `[{"name": "f", "parameters": 1}]`, none("tool_calls")},
	{"required/name not a string", jcRequired, `[{"name": 5, "parameters": {}}]`, none("tool_calls")},
	{"required/no name", jcRequired, `[{"parameters": {}}]`, none("tool_calls")},
	{"required/element not an object", jcRequired, `[{"name": "f", "parameters": {}}, 1]`, none("tool_calls")},
	{"required/description not a string", jcRequired, `[{"name": "f", "description": 5, "parameters": {}}]`, none("tool_calls")},
	{"required/strict not a bool", jcRequired, `[{"name": "f", "strict": "maybe", "parameters": {}}]`, none("tool_calls")},
	{"required/bad JSON in parameters", jcRequired, `[{"name": "f", "parameters": {"a": tru}}]`, none("tool_calls")},
	{"required/trailing comma", jcRequired, `[{"name": "f", "parameters": {}},]`, none("tool_calls")},
	{"required/reasoning first", jcRequired, "<think>Weather, so call.</think>\n[{\"name\": \"f\", \"parameters\": {}}]",
		Result{Content: new(""), Reasoning: new("Weather, so call."), ToolCalls: []ToolCall{call("f", `{}`)}, FinishReason: "tool_calls"}},

	{"named/object", jcNamed, `{"city": "Paris"}`, calls("stop", call("get_weather", `{"city": "Paris"}`))},
	{"named/verbatim, whitespace kept", jcNamed, " \n{\"city\":\"Paris\",  \"n\": 1.50}\n ",
		calls("stop", call("get_weather", " \n{\"city\":\"Paris\",  \"n\": 1.50}\n "))},
	{"named/not JSON still a call", jcNamed, `hello`, calls("stop", call("get_weather", `hello`))},
	{"named/truncated still a call", jcNamed, `{"city": "Pa`, calls("stop", call("get_weather", `{"city": "Pa`))},
	{"named/unicode space then text", jcNamed, "\u3000\u00a0x", calls("stop", call("get_weather", "\u3000\u00a0x"))},
	{"named/empty", jcNamed, ``, none("stop")},
	{"named/whitespace only", jcNamed, " \n\t ", none("stop")},
	{"named/python whitespace only", jcNamed, "\u3000\x1c\u2028\u0085", none("stop")},
	{"named/reasoning first", jcNamed, "<think>ok</think>{\"city\": \"Rome\"}",
		Result{Content: new(""), Reasoning: new("ok"), ToolCalls: []ToolCall{call("get_weather", `{"city": "Rome"}`)}, FinishReason: "stop"}},
}

func TestJSONChoiceCases(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 19))
	for _, tc := range jsonChoiceCases {
		t.Run(tc.name, func(t *testing.T) {
			req := mustRequest(t, tc.req)
			// qwen3 reads output without </think> as reasoning.
			cfgs := []Config{jcPythonic, jcXLAM}
			if strings.Contains(tc.text, "<think>") {
				cfgs = []Config{jcQwen3}
			}
			for _, cfg := range cfgs {
				checkToolCase(t, r, cfg, req, tc.text, tc.want)
			}
			if strings.Contains(tc.req, `"required"`) && !strings.Contains(tc.text, "<think>") && !strings.Contains(tc.req, "parallel") {
				if got, want := normalise(jcOracle(t, tc.text)), normalise(tc.want); !reflect.DeepEqual(got, want) {
					t.Fatalf("oracle disagrees with the table:\n oracle %s\n  table %s", dump(got), dump(want))
				}
			}
		})
	}
}

// TestJSONChoiceHermesUnchanged checks a parser without
// supports_required_and_named still parses required output its own way.
func TestJSONChoiceHermesUnchanged(t *testing.T) {
	text := `[{"name": "f", "parameters": {}}]`
	got, _ := runSplits(t, hermesOnly, mustRequest(t, jcRequired), text, nil)
	if want := (Result{Content: new(text), FinishReason: "tool_calls"}); !reflect.DeepEqual(normalise(got), normalise(want)) {
		t.Fatalf("hermes on a JSON list: %s", dump(got))
	}
}

// TestJSONChoiceStreams checks calls go out before the output ends: the
// name once complete, arguments as they arrive.
func TestJSONChoiceStreams(t *testing.T) {
	p, err := New(jcPythonic, testVocab, mustRequest(t, jcRequired), nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		push string
		want []ToolCallDelta
	}{
		{`[{"name": "get_wea`, nil},
		{`ther", "parameters": {"city": "Pa`, []ToolCallDelta{{Index: 0, Name: "get_weather"}, {Index: 0, Arguments: `{"city": "Pa`}}},
		{`ris"}}, {"parameters": {"q": 1}`, []ToolCallDelta{{Index: 0, Arguments: `ris"}`}}},
		{`, "name": "search"}`, []ToolCallDelta{{Index: 1, Name: "search"}, {Index: 1, Arguments: `{"q": 1}`}}},
		{`]`, nil},
	}
	for _, s := range steps {
		d := pushDelta(p, s.push)
		var got []ToolCallDelta
		for _, c := range d.ToolCalls {
			if c.ID != "" {
				got = append(got, ToolCallDelta{Index: c.Index, Name: c.Name})
				if c.Arguments != "" {
					got = append(got, ToolCallDelta{Index: c.Index, Arguments: c.Arguments})
				}
				continue
			}
			got = append(got, c)
		}
		if !reflect.DeepEqual(got, s.want) || d.Content != "" {
			t.Fatalf("push %q: got %+v content %q, want %+v", s.push, got, d.Content, s.want)
		}
	}
}

// TestJSONChoiceStateRoundTrip checkpoints after every chunk.
func TestJSONChoiceStateRoundTrip(t *testing.T) {
	for i, tc := range jsonChoiceCases {
		req := mustRequest(t, tc.req)
		cfg := jcPythonic
		if strings.Contains(tc.text, "<think>") {
			cfg = jcQwen3
		}
		for _, pieces := range runeChunks(tc.text, uint64(i)) {
			checkRoundTrip(t, cfg, everyVocab{}, req, nil, pieces, nil)
		}
	}
}

// jcOracle is vLLM's non-streaming required answer computed the slow way:
// decode the whole text, check each element as FunctionDefinition, and
// json.dumps the parameters.
func jcOracle(t testing.TB, text string) Result {
	t.Helper()
	no := none("tool_calls")
	if _, err := pyjson.Canonical(text); err != nil {
		return no
	}
	var elems []json.RawMessage
	if err := json.Unmarshal([]byte(text), &elems); err != nil {
		return no
	}
	var out []ToolCall
	for _, raw := range elems {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
			return no
		}
		var name string
		if err := json.Unmarshal(fields["name"], &name); err != nil || fields["name"][0] != '"' {
			return no
		}
		if d, ok := fields["description"]; ok && d[0] != '"' && string(d) != "null" {
			return no
		}
		for _, k := range []string{"strict", "defer_loading"} {
			if v, ok := fields[k]; ok {
				canon, err := pyjson.Canonical(string(v))
				if err != nil || !laxBool([]byte(canon)) {
					return no
				}
			}
		}
		args := "null"
		if pr, ok := fields["parameters"]; ok {
			if pr[0] != '{' && string(pr) != "null" {
				return no
			}
			c, err := pyjson.Canonical(string(pr))
			if err != nil {
				t.Fatalf("canonical %s: %v", pr, err)
			}
			args = c
		}
		out = append(out, call(name, args))
	}
	return calls("tool_calls", out...)
}

var jcFuzzPieces = []string{
	"[", "]", "{", "}", ",", ":", " ", "\n", `"name"`, `"parameters"`, `"description"`, `"strict"`,
	`"f"`, `"get_weather"`, `1`, `2.50`, `null`, `true`, `"x"`, `"\u00e9"`, `"a\"b"`, "\u3000", `{}`, `[]`, `x`,
	`{"name": "f", "parameters": {"a": 1}}`, `"parameters": {"b": [1, {"c": null}]}`,
}

// FuzzJSONChoice checks batch == stream for both forms, and the required
// answer against the slow oracle.
func FuzzJSONChoice(f *testing.F) {
	f.Add([]byte{0, 25, 4, 2, 8, 5, 12, 4, 26, 3, 1}, uint64(1))
	f.Add([]byte{2, 9, 5, 22, 4, 8, 5, 13, 3}, uint64(2))
	f.Fuzz(func(t *testing.T, recipe []byte, seed uint64) {
		var sb strings.Builder
		for _, b := range recipe {
			sb.WriteString(jcFuzzPieces[int(b)%len(jcFuzzPieces)])
		}
		text := sb.String()
		for _, reqText := range []string{jcRequired, jcNamed} {
			req := mustRequest(t, reqText)
			batch, _ := runSplits(t, jcPythonic, req, text, nil)
			stream, _ := runSplits(t, jcPythonic, req, text, randomCuts(len(text), rand.New(rand.NewPCG(seed, 7))))
			if !reflect.DeepEqual(normalise(stream), normalise(batch)) {
				t.Fatalf("%s %q:\nstream %s\n batch %s", reqText, text, dump(stream), dump(batch))
			}
			if reqText == jcRequired {
				if want := jcOracle(t, text); !reflect.DeepEqual(normalise(batch), normalise(want)) {
					t.Fatalf("%q:\n got %s\nwant %s", text, dump(batch), dump(want))
				}
			}
		}
	})
}
