package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/vrender/vrender/parsers"
)

// The derender bench's parser-family workloads: for each family, model
// output in the family's own markup, written the way the model writes it.
// Where ../shared/parity holds vLLM's golden outputs for the family,
// TestFamilyFormatsMatchGoldens holds the markup written here to those
// outputs byte for byte; the other formats follow vLLM's parser tests and
// the models' chat templates (Source says which).

// benchParam is one argument of a generated tool call, in order.
type benchParam struct {
	Key   string
	Value any // string, int or bool
}

// benchCall is one generated tool call.
type benchCall struct {
	Name   string
	Params []benchParam
}

// DerenderFamily is one parser family's output format.
type DerenderFamily struct {
	// Name is the tool parser's name (vLLM's --tool-call-parser).
	Name string
	// Model is the tokenizer's directory name under the models folder.
	Model string
	// Added are the family's markers that Model's vocabulary lacks: the
	// bench adds them as special tokens, as the family's own tokenizer
	// has them (none of the five test tokenizers is the family's own).
	Added   []string
	Parsers parsers.Config
	// Golden is the ../shared/parity file whose outputs the format
	// reproduces ("" when there is none); Source names the format's origin.
	Golden, Source string
	// Prompt is the chat prompt's text, special tokens spelled out.
	Prompt string
	// End ends an output without calls; CallEnd one with calls ("" = End).
	End, CallEnd string
	// Think wraps reasoning (nil: the family's parsers take none).
	Think func(reasoning string) string
	// Content wraps the answer text (nil: as is).
	Content func(content string) string
	// Calls writes the calls section.
	Calls func(calls []benchCall) string
	// Intro is set when content may precede the calls.
	Intro bool
	// MaxCalls caps the calls of one output (0: no cap): gpt-oss stops
	// generating at its first <|call|>.
	MaxCalls int
}

const (
	qwenPrompt     = "<|im_start|>user\nwrite it<|im_end|>\n<|im_start|>assistant\n"
	deepseekPrompt = "<｜begin▁of▁sentence｜><｜User｜>write it<｜Assistant｜>"
	llamaPrompt    = "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nwrite it<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
)

func thinkTags(r string) string      { return "<think>\n" + r + "\n</think>\n\n" }
func thinkTagsTight(r string) string { return "<think>" + r + "</think>" }

// DerenderFamilies are the formats `vrender bench derender` measures.
var DerenderFamilies = []DerenderFamily{
	{Name: "hermes", Model: "qwen3", Golden: "qwen3_hermes.jsonl", Source: "golden qwen3_hermes",
		Parsers: parsers.Config{ReasoningParser: "qwen3", ToolParser: "hermes", EnableAutoToolChoice: true},
		Prompt:  qwenPrompt, End: "<|im_end|>", Think: thinkTags, Intro: true,
		Calls: func(cs []benchCall) string {
			return joinCalls(cs, "\n", func(_ int, c benchCall) string {
				return "<tool_call>\n" + jsonCall(c, "arguments") + "\n</tool_call>"
			})
		}},
	{Name: "qwen3_coder", Model: "qwen3", Golden: "qwen3_qwen3_coder.jsonl", Source: "golden qwen3_qwen3_coder",
		Parsers: parsers.Config{ReasoningParser: "qwen3", ToolParser: "qwen3_coder", EnableAutoToolChoice: true},
		Prompt:  qwenPrompt, End: "<|im_end|>", Think: thinkTags, Intro: true,
		Calls: func(cs []benchCall) string {
			return joinCalls(cs, "\n", func(_ int, c benchCall) string {
				return paramCall("<tool_call>\n<function="+c.Name+">\n", c, "<parameter=%s>\n%s\n</parameter>\n", "</function>\n</tool_call>")
			})
		}},
	{Name: "llama3_json", Model: "llama3_1", Golden: "llama3_json.jsonl", Source: "golden llama3_json",
		Parsers: parsers.Config{ToolParser: "llama3_json", EnableAutoToolChoice: true},
		Prompt:  llamaPrompt, End: "<|eot_id|>",
		Calls: func(cs []benchCall) string {
			return joinCalls(cs, "; ", func(_ int, c benchCall) string { return jsonCall(c, "parameters") })
		}},
	{Name: "pythonic", Model: "llama3_1", Golden: "pythonic_llama.jsonl", Source: "golden pythonic_llama",
		Parsers: parsers.Config{ToolParser: "pythonic", EnableAutoToolChoice: true},
		Prompt:  llamaPrompt, End: "<|eot_id|>",
		Calls: func(cs []benchCall) string {
			return "[" + joinCalls(cs, ", ", func(_ int, c benchCall) string {
				args := make([]string, len(c.Params))
				for i, p := range c.Params {
					args[i] = p.Key + "=" + pyValue(p.Value)
				}
				return c.Name + "(" + strings.Join(args, ", ") + ")"
			}) + "]"
		}},
	{Name: "deepseek_v3", Model: "deepseek_v3", Golden: "deepseek_v3.jsonl", Source: "golden deepseek_v3",
		Parsers: parsers.Config{ToolParser: "deepseek_v3", EnableAutoToolChoice: true},
		Prompt:  deepseekPrompt, End: "<｜end▁of▁sentence｜>", Intro: true,
		Calls: func(cs []benchCall) string {
			return "<｜tool▁calls▁begin｜>" + joinCalls(cs, "", func(_ int, c benchCall) string {
				return "<｜tool▁call▁begin｜>function<｜tool▁sep｜>" + c.Name + "\n```json\n" + jsonArgs(c) + "\n```<｜tool▁call▁end｜>"
			}) + "<｜tool▁calls▁end｜>"
		}},
	{Name: "deepseek_v31", Model: "deepseek_v3", Golden: "deepseek_v31.jsonl", Source: "golden deepseek_v31",
		Parsers: parsers.Config{ToolParser: "deepseek_v31", EnableAutoToolChoice: true},
		Prompt:  deepseekPrompt, End: "<｜end▁of▁sentence｜>", Intro: true,
		Calls: func(cs []benchCall) string {
			return "<｜tool▁calls▁begin｜>" + joinCalls(cs, "", func(_ int, c benchCall) string {
				return "<｜tool▁call▁begin｜>" + c.Name + "<｜tool▁sep｜>" + jsonArgs(c) + "<｜tool▁call▁end｜>"
			}) + "<｜tool▁calls▁end｜>"
		}},
	{Name: "mistral", Model: "qwen3", Added: []string{"[TOOL_CALLS]", "[ARGS]", "[THINK]", "[/THINK]"},
		Source:  "vLLM's mistral parser tests (v11 [TOOL_CALLS]name[ARGS]{...})",
		Parsers: parsers.Config{ReasoningParser: "mistral", ToolParser: "mistral", EnableAutoToolChoice: true},
		Prompt:  qwenPrompt, End: "<|im_end|>", Intro: true,
		Think: func(r string) string { return "[THINK]" + r + "[/THINK]" },
		Calls: func(cs []benchCall) string {
			return joinCalls(cs, "", func(_ int, c benchCall) string { return "[TOOL_CALLS]" + c.Name + "[ARGS]" + jsonArgs(c) })
		}},
	{Name: "kimi_k2", Model: "qwen3",
		Added:   []string{"<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>", "<|tool_call_end|>", "<|tool_call_argument_begin|>"},
		Source:  "vLLM's kimi_k2 parser tests and Kimi K2's chat template",
		Parsers: parsers.Config{ReasoningParser: "kimi_k2", ToolParser: "kimi_k2", EnableAutoToolChoice: true},
		Prompt:  qwenPrompt, End: "<|im_end|>", Think: thinkTagsTight, Intro: true,
		Calls: func(cs []benchCall) string {
			return "<|tool_calls_section_begin|>" + joinCalls(cs, "", func(i int, c benchCall) string {
				return "<|tool_call_begin|>functions." + c.Name + ":" + strconv.Itoa(i) + "<|tool_call_argument_begin|>" + jsonArgs(c) + "<|tool_call_end|>"
			}) + "<|tool_calls_section_end|>"
		}},
	{Name: "glm45", Model: "qwen3", Added: []string{"<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"},
		Source:  "vLLM's glm4_moe parser tests and GLM-4.5's chat template",
		Parsers: parsers.Config{ReasoningParser: "glm45", ToolParser: "glm45", EnableAutoToolChoice: true},
		Prompt:  qwenPrompt, End: "<|im_end|>", Think: thinkTagsTight, Intro: true,
		Calls: func(cs []benchCall) string {
			return joinCalls(cs, "\n", func(_ int, c benchCall) string {
				return paramCall("<tool_call>"+c.Name+"\n", c, "<arg_key>%s</arg_key>\n<arg_value>%s</arg_value>\n", "</tool_call>")
			})
		}},
	{Name: "minimax_m2", Model: "qwen3", Added: []string{"<minimax:tool_call>", "</minimax:tool_call>"},
		Source:  "vLLM's minimax_m2 parser tests and MiniMax-M2's chat template",
		Parsers: parsers.Config{ReasoningParser: "minimax_m2", ToolParser: "minimax_m2", EnableAutoToolChoice: true},
		Prompt:  qwenPrompt, End: "<|im_end|>", Think: thinkTags, Intro: true,
		Calls: func(cs []benchCall) string {
			return "<minimax:tool_call>\n" + joinCalls(cs, "", func(_ int, c benchCall) string {
				return paramCall(`<invoke name="`+c.Name+"\">\n", c, `<parameter name="%s">%s</parameter>`+"\n", "</invoke>\n")
			}) + "</minimax:tool_call>"
		}},
	{Name: "openai", Model: "gptoss", Source: "vLLM's harmony parser tests (gpt-oss channels)",
		Parsers: parsers.Config{ReasoningParser: "openai_gptoss", ToolParser: "openai", EnableAutoToolChoice: true},
		Prompt:  "<|start|>user<|message|>write it<|end|><|start|>assistant", End: "<|return|>", CallEnd: "<|call|>", MaxCalls: 1,
		Think:   func(r string) string { return "<|channel|>analysis<|message|>" + r + "<|end|><|start|>assistant" },
		Content: func(c string) string { return "<|channel|>final<|message|>" + c },
		Calls: func(cs []benchCall) string {
			return joinCalls(cs, "", func(_ int, c benchCall) string {
				return "<|channel|>commentary to=functions." + c.Name + " <|constrain|>json<|message|>" + jsonArgs(c)
			})
		}},
}

// familyChatRequest is the chat_request of every family workload: the
// golden set's four tools, tool_choice auto.
const familyChatRequest = `{"messages":[{"role":"user","content":"write it"}],"tools":[` +
	`{"type":"function","function":{"name":"get_weather","description":"Get the current weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"days":{"type":"integer"}},"required":["city"]}}},` +
	`{"type":"function","function":{"name":"search","description":"Web search","parameters":{"type":"object","properties":{"query":{"type":"string"},"top_k":{"type":"integer"},"safe":{"type":"boolean"}},"required":["query"]}}},` +
	`{"type":"function","function":{"name":"create_event","description":"Create a calendar event","parameters":{"type":"object","properties":{"title":{"type":"string"},"attendees":{"type":"array","items":{"type":"string"}},"details":{"type":"object"},"priority":{"type":"number"}},"required":["title"]}}},` +
	`{"type":"function","function":{"name":"get_time","description":"Current time","parameters":{"type":"object","properties":{}}}}]}`

func joinCalls(cs []benchCall, sep string, one func(i int, c benchCall) string) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = one(i, c)
	}
	return strings.Join(parts, sep)
}

// paramCall is an XML-style call: head, each parameter through format
// (key, raw value), tail.
func paramCall(head string, c benchCall, format, tail string) string {
	var b strings.Builder
	b.WriteString(head)
	for _, p := range c.Params {
		fmt.Fprintf(&b, format, p.Key, rawValue(p.Value))
	}
	b.WriteString(tail)
	return b.String()
}

// jsonString is s as Python's json.dumps writes it (ASCII input).
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// jsonArgs is the call's arguments as json.dumps writes a dict.
func jsonArgs(c benchCall) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, p := range c.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(jsonString(p.Key) + ": ")
		switch v := p.Value.(type) {
		case string:
			b.WriteString(jsonString(v))
		default:
			b.WriteString(rawValue(v))
		}
	}
	b.WriteByte('}')
	return b.String()
}

// jsonCall is {"name": ..., "<argsKey>": {...}}.
func jsonCall(c benchCall, argsKey string) string {
	return `{"name": ` + jsonString(c.Name) + `, "` + argsKey + `": ` + jsonArgs(c) + "}"
}

// rawValue is a value as XML-style formats write it: strings as they are.
func rawValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case int:
		return strconv.Itoa(v)
	}
	panic(fmt.Sprintf("bench: unsupported argument type %T", v))
}

// pyValue is a value as a Python call expression writes it.
func pyValue(v any) string {
	switch v := v.(type) {
	case string:
		r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
		return `"` + r.Replace(v) + `"`
	case bool:
		if v {
			return "True"
		}
		return "False"
	}
	return rawValue(v)
}

var proseWords = strings.Fields(`the service reads records from queue checks each one and writes result
before next batch starts while worker keeps its own cache of recent keys so that repeated lookups stay
cheap under load; when a request arrives late it is retried once with longer timeout, then reported as
failed with reason code operators can search for in logs dashboards alerts every deploy rolls out to one
region first measures error rate latency memory for an hour compares them with previous release`)

// proseText is n words of plain English with numbers, punctuation,
// occasional markdown and paragraph breaks, and no markup of any family
// (a lone "<" or "[" now and then, as prose has).
func proseText(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 15))
	var b strings.Builder
	for i := range n {
		switch {
		case i == 0:
		case i%97 == 0:
			b.WriteString(".\n\n- ")
		case i%13 == 0:
			b.WriteString(". ")
		case i%7 == 0:
			b.WriteString(", ")
		default:
			b.WriteByte(' ')
		}
		switch r.IntN(40) {
		case 0:
			fmt.Fprintf(&b, "%d.%d ms", r.IntN(100), r.IntN(10))
		case 1:
			b.WriteString("(see step " + strconv.Itoa(r.IntN(9)+1) + ")")
		case 2:
			b.WriteString("**" + proseWords[r.IntN(len(proseWords))] + "**")
		case 3:
			b.WriteString("x < y")
		case 4:
			b.WriteString("item [" + strconv.Itoa(r.IntN(20)) + "]")
		default:
			b.WriteString(proseWords[r.IntN(len(proseWords))])
		}
	}
	b.WriteByte('.')
	return b.String()
}

// argText is a long string argument of n lines: code-like text with
// quotes and newlines, so every format escapes or carries it raw.
func argText(n, seed int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "step %d: total := sum(\"%s\", %d)\n", i, proseWords[(i+seed)%len(proseWords)], i*seed)
	}
	return b.String()
}

// familyCalls are calls of the golden set's tools, alternating a search
// with a long query and a short get_weather, k lines of text per search.
func familyCalls(count, k int) []benchCall {
	cs := make([]benchCall, count)
	for i := range cs {
		if i%2 == 0 {
			cs[i] = benchCall{Name: "search", Params: []benchParam{{"query", argText(k, i+1)}, {"top_k", i + 3}, {"safe", i%4 == 0}}}
		} else {
			cs[i] = benchCall{Name: "get_weather", Params: []benchParam{{"city", "Paris " + strconv.Itoa(i)}, {"unit", "celsius"}, {"days", i}}}
		}
	}
	return cs
}

// FamilyCallsPerOutput is how many calls a "calls" workload's output holds
// (fewer where the family caps it).
const FamilyCallsPerOutput = 8

// familyText is a workload's output text of scale k: "prose" is a short
// reasoning and a long answer without calls; "calls" a short reasoning, a
// one-line answer where the family allows one, and several calls with
// long arguments. It returns the text and the calls it holds.
func (f *DerenderFamily) familyText(kind string, k int) (string, int) {
	var b strings.Builder
	content := func(s string) {
		if f.Content != nil {
			s = f.Content(s)
		}
		b.WriteString(s)
	}
	switch kind {
	case "prose":
		if f.Think != nil {
			b.WriteString(f.Think(proseText(max(k/20, 5), 1)))
		}
		content(proseText(k, 2))
		b.WriteString(f.End)
		return b.String(), 0
	case "calls":
		if f.Think != nil {
			b.WriteString(f.Think(proseText(30, 3)))
		}
		if f.Intro {
			content("I will run these now.\n\n")
		}
		n := FamilyCallsPerOutput
		if f.MaxCalls > 0 {
			n = min(n, f.MaxCalls)
		}
		b.WriteString(f.Calls(familyCalls(n, max(k/n/8, 1))))
		end := f.CallEnd
		if end == "" {
			end = f.End
		}
		b.WriteString(end)
		return b.String(), n
	}
	panic("bench: unknown workload kind " + kind)
}
