package render

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/protocol"
)

// fuzzRenderBudget is how long one render may take before the fuzz targets
// call it a hang: the slowest shared template renders a corpus conversation
// in well under a millisecond; the jinja engine's limits stop a 32 MiB string
// or 10M loop steps in about a second on a loaded 2-core machine.
const fuzzRenderBudget = 20 * time.Second

// sharedTemplate is one of ../shared/templates compiled over Qwen3's
// tokenizer with its own model's bos/eos, as the parity test does.
type sharedTemplate struct {
	name string
	r    *Renderer
}

// loadSharedTemplates compiles every ../shared/templates/*.jinja. It skips
// (fails in CI) when the folder or the Qwen3 tokenizer is absent.
func loadSharedTemplates(tb testing.TB) []sharedTemplate {
	tb.Helper()
	shared := testenv.SharedDir(tb)
	qwen := testmodel.Load(tb, "qwen3")
	paths, err := filepath.Glob(filepath.Join(shared, "templates", "*.jinja"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no templates in %s/templates: %v", shared, err)
	}
	sort.Strings(paths)
	var out []sharedTemplate
	for _, p := range paths {
		name := filepath.Base(p)
		toks, ok := sharedTemplateTokens[name]
		if !ok {
			tb.Fatalf("template %s has no bos/eos entry in sharedTemplateTokens", name)
		}
		m := *qwen
		m.TokenizerConfig.BOSToken, m.TokenizerConfig.EOSToken = toks[0], toks[1]
		m.ChatTemplates = nil
		r, err := New(&m, Config{ChatTemplate: p, Now: func() time.Time { return parityClock }})
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		out = append(out, sharedTemplate{name: name, r: r})
	}
	return out
}

// checkRender is the contract every fuzzed render must keep: a prompt in
// valid UTF-8 or a *BadRequestError (a 400), within fuzzRenderBudget.
func checkRender(t *testing.T, what string, r *Renderer, in ChatInput) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*fuzzRenderBudget)
	defer cancel()
	start := time.Now()
	got, err := r.RenderChat(ctx, in)
	if d := time.Since(start); d > fuzzRenderBudget {
		t.Fatalf("%s: render took %v", what, d)
	}
	if err != nil {
		var br *BadRequestError
		if !errors.As(err, &br) {
			t.Fatalf("%s: error is %T, want *BadRequestError: %v", what, err, err)
		}
		return
	}
	if !utf8.ValidString(got.Text) {
		t.Fatalf("%s: prompt is not valid UTF-8: %q", what, got.Text)
	}
}

// FuzzSharedTemplates renders random chat requests (mutated from the parity
// corpus) through each of the shared templates, the byte `which` choosing
// the template so the fuzzer can specialise on one.
func FuzzSharedTemplates(f *testing.F) {
	templates := loadSharedTemplates(f)
	for i, c := range loadConversations(f) {
		f.Add([]byte(c.Request), uint8(i))
	}
	for i := range templates {
		f.Add([]byte(`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":[1,{}]}"}}]},{"role":"tool","tool_call_id":"c","content":"{}"}],"add_generation_prompt":true}`), uint8(i))
	}
	f.Add([]byte(`{"messages":[{"role":"system","content":[{"type":"text","text":"s"},{"type":"image_url","image_url":{"url":"x"}}]},{"role":"assistant","content":"x","reasoning_content":"r"}],"continue_final_message":true}`), uint8(3))
	f.Add([]byte(`{"messages":[{"role":"user"},{"role":7,"content":{"a":1}}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"type":["string","null"]}}}}}],"documents":[{"title":"t","text":"d"}],"chat_template_kwargs":{"enable_thinking":false,"thinking":true,"reasoning_effort":"high"}}`), uint8(9))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		var q testRequest
		if json.Unmarshal(data, &q) != nil {
			return
		}
		st := templates[int(which)%len(templates)]
		checkRender(t, st.name, st.r, q.input())
	})
}

// convPieces are the parts FuzzSharedTemplatesRecipe builds a conversation
// from: a recipe byte picks one, so mutations change the conversation's
// shape (roles, content kinds, tool traffic, flags) rather than its JSON
// syntax, which FuzzSharedTemplates already covers.
var convPieces = []string{
	`{"role":"system","content":"Be brief."}`,
	`{"role":"user","content":"What is 2+2?"}`,
	`{"role":"assistant","content":"4"}`,
	`{"role":"assistant","content":"<think>\nhm\n</think>\n\n4"}`,
	`{"role":"assistant","content":"","reasoning_content":"because"}`,
	`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"東京\"}"}}]}`,
	`{"role":"assistant","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}},{"function":{"name":"f","arguments":"not json"}}]}`,
	`{"role":"tool","tool_call_id":"call_1","content":"{\"temp\": 21}"}`,
	`{"role":"tool","name":"get_weather","content":[{"type":"text","text":"21C"}]}`,
	`{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:,"}}]}`,
	`{"role":"user","content":[]}`,
	`{"role":"developer","content":"dev"}`,
	`{"role":"user","content":""}`,
	`{"role":"ipython","content":"out"}`,
	`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`,
	`{"role":"user","content":"\u0000 \ud83d\ude00 {{ raise_exception('x') }} {% endfor %}"}`,
}

var convTools = `[{"type":"function","function":{"name":"get_weather","description":"Weather.","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}}},{"type":"function","function":{"name":"f","parameters":{}}}]`

// recipeInput turns a recipe into a chat input: the first byte sets the
// flags (tools, generation prompt, continue, thinking off, documents), the
// rest pick messages.
func recipeInput(tb testing.TB, recipe []byte) ChatInput {
	var in ChatInput
	if len(recipe) == 0 {
		return in
	}
	flags, picks := recipe[0], recipe[1:]
	if flags&1 != 0 {
		var tools []json.RawMessage
		_ = json.Unmarshal([]byte(convTools), &tools)
		in.Tools = decodeTools(tb, tools...)
		in.ToolChoice = protocol.ToolChoice{Kind: protocol.ToolChoiceAuto}
	}
	in.AddGenerationPrompt = flags&2 != 0
	in.ContinueFinalMessage = flags&4 != 0
	if flags&8 != 0 {
		in.ChatTemplateKwargs = mustNode(`{"enable_thinking":false,"thinking":false}`)
	}
	if flags&16 != 0 {
		in.Documents = mustNode(`[{"title":"Doc","text":"body"}]`)
	}
	if flags&32 != 0 {
		effort := "low"
		in.ReasoningEffort = &effort
	}
	for _, b := range picks {
		in.Messages = append(in.Messages, typedMessages([]json.RawMessage{json.RawMessage(convPieces[int(b)%len(convPieces)])})...)
	}
	return in
}

// FuzzSharedTemplatesRecipe renders conversations built from convPieces
// through each shared template.
func FuzzSharedTemplatesRecipe(f *testing.F) {
	templates := loadSharedTemplates(f)
	for i := range templates {
		f.Add([]byte{3, 0, 1, 5, 7, 2, 1}, uint8(i))
		f.Add([]byte{byte(i), byte(i) + 1, byte(i) + 2, byte(i) + 3, byte(i) + 4}, uint8(i))
	}
	f.Add([]byte{6, 1, 3}, uint8(0))
	f.Add([]byte{63, 11, 9, 6, 8, 15, 14, 4}, uint8(5))
	f.Add([]byte{0}, uint8(7))
	f.Fuzz(func(t *testing.T, recipe []byte, which uint8) {
		st := templates[int(which)%len(templates)]
		checkRender(t, st.name, st.r, recipeInput(t, recipe))
	})
}

// FuzzRequestChatTemplate sends random template source as the request's
// chat_template (--trust-request-chat-template on) with a random
// conversation: the template compiles or is refused, and renders or is
// refused, with a 400 and within the budget, never a panic or a hang (the
// engine's step, depth and output limits guard loops and recursion).
func FuzzRequestChatTemplate(f *testing.F) {
	m := testmodel.Load(f, "qwen3")
	r, err := New(m, Config{TrustRequestChatTemplate: true, Now: func() time.Time { return parityClock }})
	if err != nil {
		f.Fatal(err)
	}
	seeds := []string{
		"{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}",
		"{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
		"{% for i in range(1000000000) %}{{ i }}{% endfor %}",
		"{% set ns = namespace(x='a') %}{% for i in range(40) %}{% set ns.x = ns.x ~ ns.x %}{% endfor %}{{ ns.x }}",
		"{{ raise_exception('no') }}",
		"{{ messages[0]['content'] | tojson }}{{ tools | length if tools else 0 }}",
		"{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
		"{{ (messages | map(attribute='content') | join('|'))[::-1] }}",
		"{% for x in messages recursive %}{{ loop(messages) }}{% endfor %}",
		"{{ '%s' % messages }}{{ strftime_now('%Y') }}",
		"{% include 'x' %}",
		"{{ ",
	}
	for i, src := range seeds {
		f.Add(src, []byte{byte(i), 0, 1, 2})
	}
	f.Add(m.ChatTemplates["default"], []byte{3, 0, 1, 5, 7, 2})
	f.Add(m.ChatTemplates["default"], []byte{1, 5, 7, 3})
	f.Fuzz(func(t *testing.T, src string, recipe []byte) {
		// A request's chat_template arrives as a JSON string, which
		// decodes invalid UTF-8 to U+FFFD; raw bytes would only test that
		// the engine copies template text verbatim.
		src = strings.ToValidUTF8(src, "\uFFFD")
		in := recipeInput(t, recipe)
		in.ChatTemplate = &src
		checkRender(t, "request template", r, in)
	})
}
