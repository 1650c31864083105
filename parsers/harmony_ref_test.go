package parsers

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/harmonyref"
	"github.com/vrender/vrender/internal/testmodel"
)

// refToolNames are the tools (and their property names) of the render
// corpus, render/harmony/testdata/ref_tools.json, so the completions call
// the tools the differential render test declares.
func refToolNames(t *testing.T) (names []string, props [][]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "render", "harmony", "testdata", "ref_tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tools []struct {
		Name       string `json:"name"`
		Parameters struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(data, &tools); err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		var p []string
		for k := range tool.Parameters.Properties {
			p = append(p, k)
		}
		slices.Sort(p)
		names, props = append(names, tool.Name), append(props, p)
	}
	return names, props
}

// harmonyCompletion is one random well-formed gpt-oss completion (the text
// after the prompt's "<|start|>assistant"): analysis, preambles, tool calls
// in the header spellings models produce, builtin calls, a final answer,
// and sometimes a last message cut short as by max_tokens. Call arguments
// are written as Python's json.dumps writes them, so vLLM's
// json.dumps(json.loads(...)) leaves them as openai_harmony parsed them.
func harmonyCompletion(r *rand.Rand, names []string, props [][]string) string {
	words := []string{"The", "user", "wants", "weather", "in", "Tokyo.", "Let's", "call", "the", "tool", "é", "中文", "🙂", "\n", "  ", "{", "}", "\"q\"", "42", "x"}
	prose := func(ascii bool) string {
		var b strings.Builder
		for i := range 1 + r.IntN(12) {
			w := words[r.IntN(len(words))]
			if ascii && strings.ContainsFunc(w, func(c rune) bool { return c > 127 }) {
				w = "ok"
			}
			if i > 0 && r.IntN(3) > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		return b.String()
	}
	args := func(i int) string {
		var parts []string
		for _, p := range props[i] {
			if r.IntN(2) == 0 {
				continue
			}
			var v string
			switch r.IntN(4) {
			case 0:
				v = fmt.Sprintf("%d", r.IntN(1000))
			case 1:
				v = `"` + strings.ReplaceAll(prose(true), "\n", `\n`) + `"`
				v = strings.ReplaceAll(v, `"q"`, `\"q\"`)
			case 2:
				v = "true"
			default:
				v = `[1, "a", null, {"k": false}]`
			}
			parts = append(parts, `"`+p+`": `+v)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	var b strings.Builder
	n := 1 + r.IntN(5)
	for m := range n {
		if m > 0 {
			b.WriteString("<|start|>assistant")
		}
		last := m == n-1
		truncate := last && r.IntN(4) == 0
		var header, body, stop string
		tool := r.IntN(len(names))
		name := names[tool]
		switch kind := r.IntN(14); kind {
		case 0, 1:
			header, body, stop = "<|channel|>analysis<|message|>", prose(truncate), "<|end|>"
		case 2:
			header, body, stop = "<|channel|>commentary<|message|>", prose(truncate), "<|end|>"
		case 3, 4:
			header, body, stop = "<|channel|>final<|message|>", prose(truncate), "<|end|>"
			if last {
				stop = "<|return|>"
			}
		case 5:
			header = "<|channel|>commentary to=functions." + name + " <|constrain|>json<|message|>"
		case 6:
			header = " to=functions." + name + "<|channel|>commentary <|constrain|>json<|message|>"
		case 7:
			header = "<|channel|>commentary to=functions." + name + "<|constrain|>json<|message|>"
		case 8:
			header = "<|channel|>commentary to=functions." + name + " json<|message|>"
		case 9:
			header = "<|channel|>commentary to=functions." + name + "<|message|>"
		case 10:
			header, body = "<|channel|>commentary to=functions."+name+" code<|message|>", "ls -la | head"
		case 11:
			header = "<|channel|>analysis to=functions." + name + " <|constrain|>json<|message|>"
		case 12:
			header = "<|channel|>commentary to=" + name + " <|constrain|>json<|message|>"
		default:
			header = []string{"<|channel|>commentary to=python<|message|>", "<|channel|>analysis to=browser.search <|constrain|>json<|message|>",
				"<|channel|>commentary to=container.exec<|message|>"}[r.IntN(3)]
		}
		if header != "" && body == "" && stop == "" {
			body, stop = args(tool), "<|call|>"
		}
		if truncate {
			body, stop = body[:r.IntN(len(body)+1)], ""
		}
		b.WriteString(header + body + stop)
		if truncate {
			break
		}
	}
	return b.String()
}

// vllmFromHarmony is vLLM's HarmonyParser.parse (vllm/parser/harmony.py at
// bf578e1) applied to the messages openai_harmony parsed: what the Go
// machine must answer for well-formed output.
func vllmFromHarmony(msgs []harmonyref.Message, reasoning, tools bool) Result {
	var rs, cs []string
	var calls []ToolCall
	for _, m := range msgs {
		if m.Role != "assistant" {
			continue
		}
		recipient := m.Recipient
		if i := strings.Index(recipient, "<|constrain|>"); i >= 0 {
			recipient = strings.TrimRight(recipient[:i], " \t\n\r\f\v")
		}
		switch {
		case recipient != "" && vllmFunctionRecipient(recipient):
			if !tools {
				continue
			}
			// vLLM json.dumps(json.loads(...))'s JSON arguments; the
			// generated ones are json.dumps output already, and a
			// truncated call is not JSON and stays verbatim.
			calls = append(calls, ToolCall{Name: strings.TrimPrefix(recipient, "functions."), Arguments: m.Content})
		case m.Channel == "analysis":
			if reasoning && m.Content != "" {
				rs = append(rs, m.Content)
			}
		case m.Channel == "final" || m.Channel == "commentary" && recipient == "":
			if m.Content != "" {
				cs = append(cs, m.Content)
			}
		}
	}
	var res Result
	if len(rs) > 0 {
		res.Reasoning = new(strings.Join(rs, "\n"))
	}
	if len(cs) > 0 {
		res.Content = new(strings.Join(cs, "\n"))
	}
	res.ToolCalls = calls
	if len(calls) > 0 && res.Content != nil && strings.TrimSpace(*res.Content) == "" {
		// vLLM's serving layer drops whitespace-only content next to tool
		// calls (combined.go holdWhitespace).
		res.Content = nil
	}
	return res
}

// vllmFunctionRecipient is vLLM's is_function_recipient for Chat
// Completions (no allowed names) with its builtin tool labels.
func vllmFunctionRecipient(r string) bool {
	switch {
	case r == "" || strings.HasPrefix(r, "<|") || r == "assistant":
		return false
	case strings.HasPrefix(r, "functions."):
		return len(r) > len("functions.")
	}
	first, _, _ := strings.Cut(r, ".")
	for _, b := range []string{"python", "browser", "container", "code_interpreter", "web_search_preview"} {
		if r == b || first == b {
			return false
		}
	}
	return true
}

// TestHarmonyMatchesOpenAIHarmony parses random completions with
// openai_harmony (parse_messages_from_completion_tokens with role assistant,
// which is StreamableParser + process_eos, what vLLM's HarmonyParser runs)
// and with the Harmony machine on their decoded text, whole and in random
// pieces, under all three parser configurations.
func TestHarmonyMatchesOpenAIHarmony(t *testing.T) {
	tok := testmodel.Tokenizer(t, "gptoss")
	names, props := refToolNames(t)
	r := rand.New(rand.NewPCG(16, 2026))
	const n = 400
	texts := make([]string, n)
	requests := make([]harmonyref.Request, n)
	for i := range texts {
		texts[i] = harmonyCompletion(r, names, props)
		ids := tok.Encode(texts[i], false)
		if got := tok.Decode(ids, false); got != texts[i] {
			t.Fatalf("tokenizer round trip: %q -> %q", texts[i], got)
		}
		requests[i] = harmonyref.Request{Op: "parse", Tokens: ids, Role: "assistant"}
	}
	results := harmonyref.Run(t, requests)
	req := mustRequest(t, weatherTools)
	configs := []struct {
		cfg              Config
		reasoning, tools bool
	}{{harmonyBoth, true, true}, {harmonyTool, false, true}, {harmonyReasn, true, false}}
	for i, text := range texts {
		ref := results[i]
		if ref.Error != "" {
			t.Fatalf("openai_harmony rejected a well-formed completion %q: %s", text, ref.Error)
		}
		if ref.Text != text {
			t.Fatalf("openai_harmony decodes %q as %q", text, ref.Text)
		}
		for _, c := range configs {
			want := normalise(vllmFromHarmony(ref.Messages, c.reasoning, c.tools))
			batch, _ := runSplits(t, c.cfg, req, text, nil)
			got := normalise(batch)
			got.FinishReason = ""
			if got.Content != nil && *got.Content == "" {
				// null or "" for empty content is the serving layer's
				// choice (ContentNull), not openai_harmony's.
				got.Content = nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%+v %q:\n got %s\nwant %s (openai_harmony messages %s)", c.cfg, text, dump(got), dump(want), dump(ref.Messages))
			}
			s, _ := runSplits(t, c.cfg, req, text, randomCuts(len(text), r))
			if s := normalise(s); !reflect.DeepEqual(s.ToolCalls, batch.ToolCalls) || !reflect.DeepEqual(s.Content, batch.Content) || !reflect.DeepEqual(s.Reasoning, batch.Reasoning) {
				t.Fatalf("%+v %q: stream %s\nbatch %s", c.cfg, text, dump(s), dump(batch))
			}
		}
	}
}
