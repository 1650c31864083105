package render

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vrender/vrender/internal/pyfmt"
)

// Content formats, as --chat-template-content-format names them.
const (
	FormatAuto   = "auto"
	FormatString = "string"
	FormatOpenAI = "openai"
)

func strNode(s string) *node { return &node{k: jStr, s: s} }

func objNode(kv ...any) *node {
	n := &node{k: jObj}
	for i := 0; i+1 < len(kv); i += 2 {
		n.keys = append(n.keys, kv[i].(string))
		n.vals = append(n.vals, kv[i+1].(*node))
	}
	return n
}

// textTypes are the part types whose value is text, mapped to the key
// holding it (vLLM's MM_PARSER_MAP).
var textTypes = map[string]string{
	"text":        "text",
	"input_text":  "text",
	"output_text": "text",
	"refusal":     "refusal",
	"thinking":    "thinking",
}

// mediaTypes are the part types that carry media; vrender has no
// multimodal support yet.
var mediaTypes = map[string]bool{
	"image_url": true, "input_image": true, "image_embeds": true, "audio_embeds": true,
	"prompt_embeds": true, "image_pil": true, "audio_url": true, "input_audio": true, "video_url": true,
}

// untypedMediaKeys are the keys vLLM recognises on a part without "type".
var untypedMediaKeys = []string{"image_url", "image_pil", "image_embeds", "audio_embeds", "prompt_embeds", "audio_url", "input_audio", "video_url"}

const supportedPartTypes = "audio_embeds, audio_url, image_embeds, image_pil, image_url, input_audio, " +
	"input_image, input_text, output_text, prompt_embeds, refusal, text, thinking, tool_reference, video_url"

// knownPartFields are the keys of every TypedDict in vLLM's
// ChatCompletionContentPartParam union (_KNOWN_CONTENT_PART_FIELDS). Other
// keys of a text part reach an "openai"-format template unchanged.
var knownPartFields = map[string]bool{
	"type": true, "text": true, "image_url": true, "input_audio": true, "file": true, "refusal": true,
	"audio_url": true, "video_url": true, "image_embeds": true, "audio_embeds": true, "uuid": true,
	"data": true, "image_pil": true, "thinking": true, "closed": true, "name": true,
}

// parsedPart is one content part after vLLM's _parse_chat_message_content_part.
type parsedPart struct {
	text    string
	toolRef bool // a tool_reference part: text holds its name
	// extra is the text part's unknown keys in request order (vLLM's
	// _collect_extra_fields), kept by the "openai" content format.
	extra *node
}

// extraPartFields collects the keys of p outside knownPartFields; nil when
// there are none.
func extraPartFields(p *node) *node {
	var extra *node
	for i, k := range p.keys {
		if knownPartFields[k] {
			continue
		}
		if extra == nil {
			extra = &node{k: jObj}
		}
		extra.set(k, p.vals[i])
	}
	return extra
}

// parsePart parses one content part; ok is false for parts vLLM skips.
func parsePart(p *node) (parsedPart, bool, error) {
	if s, isStr := p.str(); isStr {
		return parsedPart{text: s}, true, nil
	}
	if p.k != jObj {
		return parsedPart{}, false, badParam("messages", "Invalid content part: expected an object or a string, got %s", p.pyType())
	}
	typ, hasType := p.get("type")
	uuid, _ := p.get("uuid")
	if hasType && !typ.isNull() && uuid.isNull() {
		t, isStr := typ.str()
		if !isStr {
			return parsedPart{}, false, badRequest("Invalid 'type' field in multimodal part.")
		}
		if key, ok := textTypes[t]; ok {
			v, _ := p.get(key)
			if v.isNull() {
				return parsedPart{}, false, nil
			}
			s, isStr := v.str()
			if !isStr {
				return parsedPart{}, false, badParam("messages", "sequence item 0: expected str instance, %s found", v.pyType())
			}
			return parsedPart{text: s, extra: extraPartFields(p)}, true, nil
		}
		if mediaTypes[t] {
			return parsedPart{}, false, badRequest(errMultimodal)
		}
		if t == "tool_reference" {
			return toolReference(p)
		}
		return parsedPart{}, false, badParam("type", "Unsupported chat content part type: %s. Supported types: %s.", pyStrRepr(t), supportedPartTypes)
	}
	for _, k := range untypedMediaKeys {
		if _, ok := p.get(k); ok {
			return parsedPart{}, false, badRequest(errMultimodal)
		}
	}
	if _, ok := p.get("tool_reference"); ok {
		return toolReference(p)
	}
	if hasType && !typ.isNull() {
		return parsedPart{}, false, badRequest("Invalid 'type' field in multimodal part.")
	}
	return parsedPart{}, false, badRequest("Missing 'type' field in multimodal part.")
}

func toolReference(p *node) (parsedPart, bool, error) {
	name, _ := p.get("name")
	s, _ := name.str()
	return parsedPart{text: s, toolRef: true}, true, nil
}

// parseMessage is vLLM's _parse_chat_message_content: it builds a new
// message holding role and normalised content, then the fields vLLM copies
// (tool_calls, reasoning, tool_call_id, name, task, tools), in that order.
func parseMessage(raw json.RawMessage, format string) (*node, error) {
	msg, err := parseJSON(raw)
	if err != nil {
		return nil, badParam("messages", "Invalid message JSON: %v", err)
	}
	if msg.k != jObj {
		return nil, badParam("messages", "Each message must be an object, got %s", msg.pyType())
	}
	roleNode, _ := msg.get("role")
	role, ok := roleNode.str()
	if !ok {
		return nil, badParam("messages", "Each message must have a string 'role'")
	}

	var parts []*node
	content, _ := msg.get("content")
	switch {
	case content.isNull():
	case content.k == jStr:
		parts = []*node{objNode("type", strNode("text"), "text", content)}
	case content.k == jArr:
		parts = content.arr
	default:
		return nil, badParam("messages", "Message content must be a string, a list of parts or null, got %s", content.pyType())
	}
	parsed := make([]parsedPart, 0, len(parts))
	for _, p := range parts {
		pp, keep, err := parsePart(p)
		if err != nil {
			return nil, err
		}
		if keep {
			parsed = append(parsed, pp)
		}
	}

	out := &node{k: jObj, keys: make([]string, 0, 4), vals: make([]*node, 0, 4)}
	out.set("role", strNode(role))
	if format == FormatOpenAI {
		out.set("content", partsNode(parsed))
	} else {
		out.set("content", strNode(joinTexts(parsed)))
	}

	switch role {
	case "assistant":
		if tc, ok := msg.get("tool_calls"); ok && !tc.isNull() {
			out.set("tool_calls", tc)
		}
		reasoning, _ := msg.get("reasoning")
		if reasoning.isNull() {
			// Older clients send the deprecated name.
			reasoning, _ = msg.get("reasoning_content")
		}
		if !reasoning.isNull() {
			out.set("reasoning", reasoning)
			out.set("reasoning_content", reasoning)
		}
	case "tool":
		if id, ok := msg.get("tool_call_id"); ok {
			out.set("tool_call_id", id)
		}
		// Templates expect tool results as a string; only parts other than
		// text (tool_reference) keep the list.
		if c, _ := out.get("content"); c.k == jArr {
			structured := false
			for _, p := range parsed {
				structured = structured || p.toolRef
			}
			if !structured {
				out.set("content", strNode(joinTexts(parsed)))
			}
		}
	}
	if name, ok := msg.get("name"); ok && name.k == jStr {
		out.set("name", name)
	}
	if task, ok := msg.get("task"); ok && task.k == jStr {
		out.set("task", task)
	}
	if role == "developer" {
		tools, ok := msg.get("tools")
		if !ok {
			tools = nullNode
		}
		out.set("tools", tools)
	}
	return out, nil
}

func joinTexts(parts []parsedPart) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0].text
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.text)
	}
	return b.String()
}

func partsNode(parts []parsedPart) *node {
	arr := make([]*node, len(parts))
	for i, p := range parts {
		if p.toolRef {
			arr[i] = objNode("type", strNode("tool_reference"), "name", strNode(p.text))
		} else {
			arr[i] = objNode("type", strNode("text"), "text", strNode(p.text))
			if p.extra != nil {
				arr[i].keys = append(arr[i].keys, p.extra.keys...)
				arr[i].vals = append(arr[i].vals, p.extra.vals...)
			}
		}
	}
	return &node{k: jArr, arr: arr}
}

// postprocessToolCalls is vLLM's _postprocess_messages: empty tool_calls are
// dropped and string arguments are parsed, since templates expect objects.
func postprocessToolCalls(msgs []*node) error {
	for _, m := range msgs {
		if role, _ := m.get("role"); role.s != "assistant" {
			continue
		}
		tc, ok := m.get("tool_calls")
		if !ok || tc.k != jArr {
			continue
		}
		if len(tc.arr) == 0 {
			m.del("tool_calls")
			continue
		}
		for _, item := range tc.arr {
			if item.k != jObj {
				return badParam("tool_calls", "assistant tool_calls entries must be objects.")
			}
			typ, hasType := item.get("type")
			fn, _ := item.get("function")
			if (hasType && (typ.k != jStr || typ.s != "function")) || fn == nil || fn.k != jObj {
				return badParam("tool_calls", "chat completions only support assistant tool_calls of type 'function'.")
			}
			args, _ := fn.get("arguments")
			if args == nil || !args.truthy() {
				fn.set("arguments", &node{k: jObj})
				continue
			}
			if args.k == jObj || args.k == jArr {
				continue
			}
			s, isStr := args.str()
			if !isStr {
				return badParam("tool_calls", "the JSON object must be str, bytes or bytearray, not %s", args.pyType())
			}
			parsed, err := parseJSON([]byte(s))
			if err != nil {
				return badParam("tool_calls", "Invalid JSON in tool call arguments: %v", err)
			}
			if parsed.isNull() {
				parsed = &node{k: jObj}
			}
			fn.set("arguments", parsed)
		}
	}
	return nil
}

// del removes an object member.
func (n *node) del(key string) {
	for i, k := range n.keys {
		if k == key {
			n.keys = append(n.keys[:i], n.keys[i+1:]...)
			n.vals = append(n.vals[:i], n.vals[i+1:]...)
			return
		}
	}
}

// mergeDeveloper is vLLM's handling of developer messages for templates that
// never mention 'developer' (vllm-project/vllm#43590): they become system
// messages without their developer-only tools, and all system messages with
// string content are merged, joined by a blank line, into one leading
// system message, since strict templates accept a system message only first.
func mergeDeveloper(msgs []*node) []*node {
	hasDev := false
	for _, m := range msgs {
		if r, _ := m.get("role"); r.s == "developer" {
			hasDev = true
			m.set("role", strNode("system"))
			m.del("tools")
		}
	}
	if !hasDev {
		return msgs
	}
	var first *node
	var texts []string
	rest := make([]*node, 0, len(msgs))
	for _, m := range msgs {
		r, _ := m.get("role")
		c, _ := m.get("content")
		if r.s != "system" || c.k != jStr {
			rest = append(rest, m)
			continue
		}
		texts = append(texts, c.s)
		if first == nil {
			first = m
		}
	}
	if first == nil {
		return msgs
	}
	first.set("content", strNode(strings.Join(texts, "\n\n")))
	return append([]*node{first}, rest...)
}

// normalizeMessages is vLLM's parse_chat_messages for text-only input.
func normalizeMessages(raw []json.RawMessage, format string, templateUsesDeveloper bool) ([]*node, error) {
	msgs := make([]*node, 0, len(raw))
	for i, r := range raw {
		m, err := parseMessage(r, format)
		if err != nil {
			if br, ok := err.(*BadRequestError); ok && br.Param == "messages" {
				br.Param = fmt.Sprintf("messages.%d", i)
			}
			return nil, err
		}
		msgs = append(msgs, m)
	}
	if err := postprocessToolCalls(msgs); err != nil {
		return nil, err
	}
	if !templateUsesDeveloper {
		msgs = mergeDeveloper(msgs)
	}
	return msgs, nil
}

// pyStrRepr is Python's repr() of a str, for error messages.
func pyStrRepr(s string) string {
	return string(pyfmt.AppendStrRepr(make([]byte, 0, len(s)+2), s, `\ufffd`))
}
