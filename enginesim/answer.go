package enginesim

import (
	"strings"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
)

// answerKit holds the built-in outputs, tokenised once.
type answerKit struct {
	tok      func(string) []int
	eos      int  // the token a finished answer ends with
	hasEOS   bool // the model names an EOS token
	otherEOS []int
	thinking bool    // the vocabulary has <think> as one token: answer like a reasoning model
	harmony  bool    // gpt-oss: answer in Harmony
	answers  [][]int // full default answers with a reasoning block
	plain    [][]int // the same answers without it
	tail     [][]int // reasoning close + answer, for prompts that opened <think>
	filler   []int   // repeated after an answer when ignore_eos asks for more tokens
}

const thinkText = "The user wants a reply from the simulated engine. " +
	"I will keep it short and answer directly.\n"

var answerTexts = []string{
	"This is the simulated engine's answer. It is deterministic for a given seed.",
	"Hello! The simulated engine answers every question the same way, briefly.",
	"Here is a short reply from the simulated engine, ending with its EOS token.",
}

const afterToolText = "I called the tool and received its result. Based on it, the answer is ready."

const fillerText = " Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor" +
	" incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation" +
	" ullamco laboris nisi ut aliquip ex ea commodo consequat."

func newAnswerKit(m *model.Model) answerKit {
	tok := m.Tokenizer
	k := answerKit{tok: func(s string) []int { return tok.Encode(s, false) }, harmony: m.UsesHarmony()}
	if len(m.EOSTokenIDs) > 0 {
		k.eos, k.hasEOS = m.EOSTokenIDs[0], true
		k.otherEOS = m.EOSTokenIDs[1:]
	}
	if id, ok := tok.TokenToID("<think>"); ok {
		_, closeOK := tok.TokenToID("</think>")
		k.thinking = closeOK && id >= 0
	}
	for _, a := range answerTexts {
		k.plain = append(k.plain, k.tok(a))
		k.answers = append(k.answers, k.tok("<think>\n"+thinkText+"</think>\n\n"+a))
		k.tail = append(k.tail, k.tok(thinkText+"</think>\n\n"+a))
	}
	k.filler = k.tok(fillerText)
	return k
}

// thinkMode is how an answer starts.
type thinkMode int

const (
	thinkNone  thinkMode = iota // no reasoning block
	thinkFull                   // <think>...</think> then the answer
	thinkClose                  // the prompt opened <think>: reasoning, </think>, answer
)

// thinkModeFor decides whether the answer reasons first: only for models
// with think tokens, not when the renderer says reasoning has ended, and not
// when the prompt already closed an empty block (enable_thinking=false).
func (k *answerKit) thinkModeFor(req *protocol.GenerateRequest, prompt string) thinkMode {
	switch {
	case !k.thinking,
		req.ReasoningEnded != nil && *req.ReasoningEnded,
		strings.HasSuffix(prompt, "</think>\n\n"), strings.HasSuffix(prompt, "</think>\n"):
		return thinkNone
	case strings.HasSuffix(prompt, "<think>\n"), strings.HasSuffix(prompt, "<think>"):
		return thinkClose
	}
	return thinkFull
}

// withThinking tokenises body after the reasoning block mode asks for.
func (k *answerKit) withThinking(mode thinkMode, body string) []int {
	switch mode {
	case thinkFull:
		return k.tok("<think>\n" + thinkText + "</think>\n\n" + body)
	case thinkClose:
		return k.tok(thinkText + "</think>\n\n" + body)
	}
	return k.tok(body)
}

// answer is the built-in output and whether the model's EOS follows it;
// seen (describeImages) starts a plain answer.
func (k *answerKit) answer(req *protocol.GenerateRequest, prompt string, variant int, seen string) ([]int, bool) {
	if k.harmony {
		return k.harmonyAnswer(req, prompt, variant)
	}
	return k.defaultAnswer(req, prompt, variant, seen), true
}

// defaultAnswer is the built-in output for a request: JSON for structured
// outputs, a hermes tool call when tools were rendered and not yet
// answered, else a canned answer chosen by variant, after what the
// request's images were (seen) when it has any.
func (k *answerKit) defaultAnswer(req *protocol.GenerateRequest, prompt string, variant int, seen string) []int {
	mode := k.thinkModeFor(req, prompt)
	if so := req.SamplingParams.StructuredOutputs; so != nil {
		if text, ok := structuredText(so, variant); ok {
			return k.withThinking(mode, text)
		}
	}
	if tools := renderedTools(prompt); len(tools) > 0 {
		if toolResultPending(prompt) {
			return k.withThinking(mode, afterToolText)
		}
		return k.withThinking(mode, hermesCall(tools[0]))
	}
	i := variant % len(k.answers)
	if seen != "" {
		return k.withThinking(mode, seen+answerTexts[i])
	}
	switch mode {
	case thinkFull:
		return k.answers[i]
	case thinkClose:
		return k.tail[i]
	}
	return k.plain[i]
}

// structuredText is output satisfying a structured outputs constraint.
// Regex, grammar and auto structural tags are not simulated (ok=false).
func structuredText(so *protocol.StructuredOutputsParams, variant int) (string, bool) {
	switch {
	case so.StructuralTag != nil:
		return structuralTagText(*so.StructuralTag)
	case !so.JSON.IsNull():
		schema := so.JSON
		if schema.Kind == wire.String { // the schema given as a JSON string
			var err error
			if schema, err = parseJSONValue([]byte(schema.S)); err != nil {
				return "", false
			}
		}
		if schema.Depth > maxJSONDepth {
			return "", false
		}
		return jsonForSchema(schema), true
	case len(so.Choice) > 0:
		return so.Choice[variant%len(so.Choice)], true
	case so.JSONObject != nil && *so.JSONObject:
		return `{"answer": "This is the simulated engine's answer."}`, true
	}
	return "", false
}

// tool is one function signature found in the prompt.
type tool struct {
	name       string
	parameters *wire.Node
}

// renderedTools finds the tools a hermes-style template (Qwen2.5/Qwen3)
// rendered into the prompt: one JSON signature per line inside the last
// <tools>...</tools> block.
func renderedTools(prompt string) []tool {
	start := strings.LastIndex(prompt, "<tools>")
	if start < 0 {
		return nil
	}
	body := prompt[start+len("<tools>"):]
	end := strings.Index(body, "</tools>")
	if end < 0 {
		return nil
	}
	var tools []tool
	for _, line := range strings.Split(body[:end], "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "{") {
			continue
		}
		v, err := parseJSONValue([]byte(line))
		if err != nil {
			continue
		}
		if fn := member(v, "function"); fn != nil {
			v = fn
		}
		name := member(v, "name")
		if name == nil || name.Kind != wire.String {
			continue
		}
		tools = append(tools, tool{name: name.S, parameters: member(v, "parameters")})
	}
	return tools
}

// toolResultPending reports whether the latest user turn carries tool
// results, so the model should answer rather than call again.
func toolResultPending(prompt string) bool {
	last := strings.LastIndex(prompt, "<|im_start|>user")
	return last >= 0 && strings.Contains(prompt[last:], "<tool_response>")
}

// hermesCall is a hermes tool call with arguments satisfying the tool's
// parameter schema, printed as Qwen models print it.
func hermesCall(t tool) string {
	var b strings.Builder
	b.WriteString("<tool_call>\n{\"name\": ")
	writeJSONString(&b, t.name)
	b.WriteString(", \"arguments\": ")
	if t.parameters == nil || schemaType(t.parameters) != "object" {
		b.WriteString("{}")
	} else {
		b.WriteString(jsonForSchema(t.parameters))
	}
	b.WriteString("}\n</tool_call>")
	return b.String()
}
