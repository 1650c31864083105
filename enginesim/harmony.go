package enginesim

import (
	"regexp"
	"strings"

	"github.com/vrender/vrender/protocol"
)

// gpt-oss answers in Harmony: the prompt ends with "<|start|>assistant" and
// the model writes an analysis message, then either a final answer ended by
// <|return|> (its EOS) or a commentary tool call ended by <|call|>:
//
//	<|channel|>analysis<|message|>…<|end|><|start|>assistant<|channel|>final<|message|>…<|return|>
//	<|channel|>analysis<|message|>…<|end|><|start|>assistant to=functions.NAME<|channel|>commentary <|constrain|>json<|message|>{…}<|call|>

const harmonyThink = "The user wants a reply from the simulated engine. I will keep it short and answer directly."

// harmonyAnswer is the built-in output for a Harmony prompt; eos says the
// plan appends the model's EOS (<|return|>): a tool call carries its own
// <|call|> instead.
func (k *answerKit) harmonyAnswer(req *protocol.GenerateRequest, prompt string, variant int) (ids []int, eos bool) {
	analysis := "<|channel|>analysis<|message|>" + harmonyThink + "<|end|><|start|>assistant"
	final := func(text string) ([]int, bool) {
		return k.tok(analysis + "<|channel|>final<|message|>" + text), true
	}
	if so := req.SamplingParams.StructuredOutputs; so != nil {
		if text, ok := structuredText(so, variant); ok {
			return final(text)
		}
	}
	if tools := harmonyTools(prompt); len(tools) > 0 {
		if harmonyToolResultPending(prompt) {
			return final(afterToolText)
		}
		t := tools[0]
		return k.tok(analysis + " to=functions." + t.name + "<|channel|>commentary <|constrain|>json<|message|>" +
			t.arguments + "<|call|>"), false
	}
	return final(answerTexts[variant%len(answerTexts)])
}

// harmonyTool is a function openai_harmony rendered into the developer
// message, with arguments built from its TypeScript-like signature.
type harmonyTool struct{ name, arguments string }

var (
	hmTypeLine  = regexp.MustCompile(`^type (\w+) = \(\) => any;$|^type (\w+) = \(_: (\{|// .*)$`)
	hmFieldLine = regexp.MustCompile(`^(\w+)(\?)?: (.*?),?(?: // .*)?$`)
)

// harmonyTools reads the "namespace functions { … }" block of the last
// developer message. Required fields get a value of their type (the first
// literal of a union, "sim" for strings, 1 for numbers); optional ones are
// left out.
func harmonyTools(prompt string) []harmonyTool {
	start := strings.LastIndex(prompt, "namespace functions {")
	if start < 0 {
		return nil
	}
	body := prompt[start:]
	if end := strings.Index(body, "} // namespace functions"); end >= 0 {
		body = body[:end]
	}
	var tools []harmonyTool
	var cur *harmonyTool
	var fields []string
	depth := 0
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if cur == nil {
			m := hmTypeLine.FindStringSubmatch(line)
			switch {
			case m == nil:
			case m[1] != "":
				tools = append(tools, harmonyTool{name: m[1], arguments: "{}"})
			default:
				// "(_: {" or "(_: // description" with "{" on the next line.
				cur, fields, depth = &harmonyTool{name: m[2]}, nil, strings.Count(m[3], "{")
			}
			continue
		}
		if strings.HasPrefix(line, "}) => any;") && depth == 1 {
			cur.arguments = "{" + strings.Join(fields, ", ") + "}"
			tools = append(tools, *cur)
			cur = nil
			continue
		}
		if depth == 1 {
			if m := hmFieldLine.FindStringSubmatch(line); m != nil && m[2] == "" {
				fields = append(fields, quoteJSON(m[1])+": "+harmonyValue(m[3]))
			}
		}
		depth += strings.Count(line, "{") - strings.Count(line, "}")
	}
	return tools
}

// harmonyValue is a JSON value of a rendered TypeScript type.
func harmonyValue(ts string) string {
	ts = strings.TrimSpace(ts)
	switch {
	case strings.HasPrefix(ts, `"`):
		if end := strings.Index(ts[1:], `"`); end >= 0 {
			return ts[:end+2]
		}
	case strings.HasSuffix(ts, "[]"):
		return "[]"
	case strings.HasPrefix(ts, "{"):
		return "{}"
	case strings.HasPrefix(ts, "string"):
		return `"sim"`
	case strings.HasPrefix(ts, "number"), strings.HasPrefix(ts, "integer"):
		return "1"
	case strings.HasPrefix(ts, "boolean"):
		return "true"
	}
	return "null"
}

func quoteJSON(s string) string {
	var b strings.Builder
	writeJSONString(&b, s)
	return b.String()
}

// harmonyToolResultPending: a tool's answer (functions.NAME to=assistant)
// came after the last user message.
func harmonyToolResultPending(prompt string) bool {
	last := strings.LastIndex(prompt, "<|start|>user<|message|>")
	return strings.Contains(prompt[max(last, 0):], "<|start|>functions.")
}
