package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vrender/vrender/internal/pyfmt"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// Content formats, as --chat-template-content-format names them.
const (
	FormatAuto   = "auto"
	FormatString = "string"
	FormatOpenAI = "openai"
)

func strNode(s string) *node { return &node{Kind: jStr, S: s} }

// objMember is one key and value of an object objNode builds.
type objMember struct {
	key string
	val *node
}

// objNode is an object of the given members with room for extra more.
func objNode(extra int, members ...objMember) *node {
	n := &node{Kind: jObj, Keys: make([]string, len(members), len(members)+extra),
		Vals: make([]*node, len(members), len(members)+extra)}
	for i, m := range members {
		n.Keys[i], n.Vals[i] = m.key, m.val
	}
	return n
}

const supportedPartTypes = "audio_embeds, audio_url, image_embeds, image_pil, image_url, input_audio, " +
	"input_image, input_text, output_text, prompt_embeds, refusal, text, thinking, tool_reference, video_url"

// parsedPart is one content part after vLLM's _parse_chat_message_content_part.
type parsedPart struct {
	text    string
	toolRef bool // a tool_reference part: text holds its name
	// extra is the text part's unknown keys in request order (vLLM's
	// _collect_extra_fields), kept by the "openai" content format.
	extra *node
	// image marks an image part (its reference went to the imageParts).
	image bool
}

// parsePart is vLLM's handling of one content part protocol classified;
// ok is false for parts vLLM skips. mm collects image parts; nil refuses
// them (a model without an image processor).
func parsePart(p *protocol.ContentPart, mm *imageParts) (parsedPart, bool, error) {
	switch p.Kind {
	case protocol.PartString:
		return parsedPart{text: p.Text}, true, nil
	case protocol.PartNotObject:
		return parsedPart{}, false, badParam("messages", "Invalid content part: expected an object or a string, got %s", pyType(p.Bad))
	case protocol.PartText:
		return parsedPart{text: p.Text, extra: p.Extra}, true, nil
	case protocol.PartTextNull:
		return parsedPart{}, false, nil
	case protocol.PartBadText:
		return parsedPart{}, false, badParam("messages", "sequence item 0: expected str instance, %s found", pyType(p.Bad))
	case protocol.PartImage:
		if mm != nil {
			return mm.add(p)
		}
		return parsedPart{}, false, badRequest(errMultimodal)
	case protocol.PartMedia:
		return parsedPart{}, false, badRequest(errMultimodal)
	case protocol.PartToolReference:
		return parsedPart{text: p.Text, toolRef: true}, true, nil
	case protocol.PartUnsupported:
		return parsedPart{}, false, badParam("type", "Unsupported chat content part type: %s. Supported types: %s.", pyStrRepr(p.Type), supportedPartTypes)
	case protocol.PartBadType:
		return parsedPart{}, false, badRequest("Invalid 'type' field in multimodal part.")
	}
	return parsedPart{}, false, badRequest("Missing 'type' field in multimodal part.")
}

// parseMessage is vLLM's _parse_chat_message_content: it builds a new
// message holding role and normalised content, then the fields vLLM copies
// (tool_calls, reasoning, tool_call_id, name, task, tools), in that order.
// The result is written to out, whose Keys and Vals have room for the
// fields (msgFields); strs holds room for its role and content strings.
func parseMessage(msg *protocol.Message, format string, mm *imageParts, out *node, strs *[2]node) error {
	if msg.Depth > maxJSONDepth {
		return badParam("messages", "Invalid message JSON: %v", errJSONTooDeep)
	}
	if !msg.HasRole {
		return badParam("messages", "Each message must have a string 'role'")
	}
	role := msg.Role

	var buf [1]parsedPart
	parsed := buf[:0]
	content := &msg.Content
	switch content.Kind {
	case protocol.ContentNone:
	case protocol.ContentText:
		// vLLM wraps a str content as one text part; parsing that part
		// gives its text back.
		parsed = append(parsed, parsedPart{text: content.Text})
	case protocol.ContentParts:
		for i := range content.Parts {
			pp, keep, err := parsePart(&content.Parts[i], mm)
			if err != nil {
				return err
			}
			if keep {
				parsed = append(parsed, pp)
			}
		}
	default:
		return badParam("messages", "Message content must be a string, a list of parts or null, got %s", pyType(content.Bad))
	}

	strs[0] = node{Kind: jStr, S: role}
	out.Set("role", &strs[0])
	switch {
	case format == FormatOpenAI:
		out.Set("content", partsNode(parsed))
	case content.Kind == protocol.ContentText:
		strs[1] = node{Kind: jStr, S: content.Text}
		out.Set("content", &strs[1])
	default:
		out.Set("content", strNode(mm.withPlaceholders(parsed, joinTexts(parsed))))
	}

	switch role {
	case "assistant":
		if tc := msg.ToolCalls; !tc.IsNull() {
			out.Set("tool_calls", tc)
		}
		reasoning := msg.Reasoning
		if reasoning.IsNull() {
			// Older clients send the deprecated name.
			reasoning = msg.ReasoningContent
		}
		if !reasoning.IsNull() {
			out.Set("reasoning", reasoning)
			out.Set("reasoning_content", reasoning)
		}
	case "tool":
		if msg.ToolCallID != nil {
			out.Set("tool_call_id", msg.ToolCallID)
		}
		// Templates expect tool results as a string; only parts other than
		// text (tool_reference) keep the list.
		if c, _ := out.Get("content"); c.Kind == jArr {
			structured := false
			for _, p := range parsed {
				structured = structured || p.toolRef
			}
			if !structured {
				out.Set("content", strNode(joinTexts(parsed)))
			}
		}
	}
	if msg.Name != nil {
		out.Set("name", strNode(*msg.Name))
	}
	if msg.Task != nil {
		out.Set("task", strNode(*msg.Task))
	}
	if role == "developer" {
		tools := msg.Tools
		if tools == nil {
			tools = wire.NullNode
		}
		out.Set("tools", tools)
	}
	return nil
}

func joinTexts(parts []parsedPart) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		if !parts[0].image {
			return parts[0].text
		}
	}
	var b strings.Builder
	n := 0
	for _, p := range parts {
		if p.image {
			continue
		}
		if n > 0 {
			b.WriteByte('\n')
		}
		n++
		b.WriteString(p.text)
	}
	return b.String()
}

func partsNode(parts []parsedPart) *node {
	arr := make([]*node, len(parts))
	for i, p := range parts {
		switch {
		case p.image:
			arr[i] = objNode(0, objMember{"type", strNode("image")})
		case p.toolRef:
			arr[i] = objNode(0, objMember{"type", strNode("tool_reference")}, objMember{"name", strNode(p.text)})
		default:
			extra := 0
			if p.extra != nil {
				extra = len(p.extra.Keys)
			}
			arr[i] = objNode(extra, objMember{"type", strNode("text")}, objMember{"text", strNode(p.text)})
			if p.extra != nil {
				arr[i].Keys = append(arr[i].Keys, p.extra.Keys...)
				arr[i].Vals = append(arr[i].Vals, p.extra.Vals...)
			}
		}
	}
	return &node{Kind: jArr, Arr: arr}
}

// postprocessToolCalls is vLLM's _postprocess_messages: empty tool_calls are
// dropped and string arguments are parsed, since templates expect objects.
// The tool calls may belong to the request's decoded messages, which are
// not render's to modify: a changed call is a copy.
func postprocessToolCalls(msgs []*node) error {
	// All string arguments of the request share one parser's slabs.
	var ps wire.Parser
	for _, m := range msgs {
		if role, _ := m.Get("role"); role.S != "assistant" {
			continue
		}
		tc, ok := m.Get("tool_calls")
		if !ok || tc.Kind != jArr {
			continue
		}
		if len(tc.Arr) == 0 {
			m.Del("tool_calls")
			continue
		}
		var changed []*node
		for j, item := range tc.Arr {
			if item.Kind != jObj {
				return badParam("tool_calls", "assistant tool_calls entries must be objects.")
			}
			typ, hasType := item.Get("type")
			fn, _ := item.Get("function")
			if (hasType && (typ.Kind != jStr || typ.S != "function")) || fn == nil || fn.Kind != jObj {
				return badParam("tool_calls", "chat completions only support assistant tool_calls of type 'function'.")
			}
			args, err := toolArguments(fn, &ps)
			if err != nil {
				return err
			}
			if args == nil {
				continue
			}
			if changed == nil {
				changed = slices.Clone(tc.Arr)
			}
			fn = shallowCopy(fn)
			fn.Set("arguments", args)
			item = shallowCopy(item)
			item.Set("function", fn)
			changed[j] = item
		}
		if changed != nil {
			m.Set("tool_calls", &node{Kind: jArr, Arr: changed})
		}
	}
	return nil
}

// toolArguments is the parsed value of fn's arguments, or nil when they
// stay as they are (an object or a list).
func toolArguments(fn *node, ps *wire.Parser) (*node, error) {
	args, _ := fn.Get("arguments")
	if args == nil || !truthy(args) {
		return &node{Kind: jObj}, nil
	}
	if args.Kind == jObj || args.Kind == jArr {
		return nil, nil
	}
	s, isStr := args.Text()
	if !isStr {
		return nil, badParam("tool_calls", "the JSON object must be str, bytes or bytearray, not %s", pyType(args))
	}
	v, err := parsed(ps.Parse([]byte(s)))
	if err != nil {
		return nil, badParam("tool_calls", "Invalid JSON in tool call arguments: %v", err)
	}
	if v.IsNull() {
		v = &node{Kind: jObj}
	}
	return v, nil
}

// shallowCopy is an object whose members can be set without changing n.
// It shares n's keys, capped: Set writes only values in place, and Set and
// Del reallocate the keys of a full slice rather than write into it.
func shallowCopy(n *node) *node {
	// A tool call and its function have a few members: their values fit
	// the copy's own array, one allocation for both.
	c := &struct {
		n    node
		vals [4]*node
	}{n: *n}
	c.n.Keys = n.Keys[:len(n.Keys):len(n.Keys)]
	if len(n.Vals) <= len(c.vals) {
		c.n.Vals = c.vals[:len(n.Vals):len(n.Vals)]
		copy(c.n.Vals, n.Vals)
	} else {
		c.n.Vals = slices.Clone(n.Vals)
	}
	c.n.Raw = nil
	return &c.n
}

// mergeDeveloper is vLLM's handling of developer messages for templates that
// never mention 'developer' (vllm-project/vllm#43590): they become system
// messages without their developer-only tools, and all system messages with
// string content are merged, joined by a blank line, into one leading
// system message, since strict templates accept a system message only first.
func mergeDeveloper(msgs []*node) []*node {
	hasDev := false
	for _, m := range msgs {
		if r, _ := m.Get("role"); r.S == "developer" {
			hasDev = true
			m.Set("role", strNode("system"))
			m.Del("tools")
		}
	}
	if !hasDev {
		return msgs
	}
	var first *node
	var texts []string
	rest := make([]*node, 0, len(msgs))
	for _, m := range msgs {
		r, _ := m.Get("role")
		c, _ := m.Get("content")
		if r.S != "system" || c.Kind != jStr {
			rest = append(rest, m)
			continue
		}
		texts = append(texts, c.S)
		if first == nil {
			first = m
		}
	}
	if first == nil {
		return msgs
	}
	first.Set("content", strNode(strings.Join(texts, "\n\n")))
	return append([]*node{first}, rest...)
}

// msgFields is the most members parseMessage sets: role, content,
// tool_calls, reasoning, reasoning_content, name and task. More would only
// reallocate (the slices are capped).
const msgFields = 7

// normalizeMessages is vLLM's parse_chat_messages for text-only input.
func normalizeMessages(in []protocol.Message, format string, templateUsesDeveloper bool) ([]*node, error) {
	return normalizeChat(in, format, templateUsesDeveloper, nil)
}

// normalizeChat is vLLM's parse_chat_messages; image parts go to mm (nil:
// refused).
func normalizeChat(in []protocol.Message, format string, templateUsesDeveloper bool, mm *imageParts) ([]*node, error) {
	msgs := make([]*node, 0, len(in))
	// The messages' objects, their members and their role and content
	// strings come out of four slabs.
	outs := make([]node, len(in))
	keys := make([]string, msgFields*len(in))
	vals := make([]*node, msgFields*len(in))
	strs := make([][2]node, len(in))
	for i := range in {
		m := &outs[i]
		k := i * msgFields
		*m = node{Kind: jObj, Keys: keys[k : k : k+msgFields], Vals: vals[k : k : k+msgFields]}
		if err := parseMessage(&in[i], format, mm, m, &strs[i]); err != nil {
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
