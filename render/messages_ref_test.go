package render

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/render/harmony"
)

// The message handling render had before messages were typed: it read
// each message's JSON tree (or parsed its raw JSON), and Harmony decoded
// messages with encoding/json. The differential tests hold the typed path
// to it.

// refTextTypes are the part types whose value is text, mapped to the key
// holding it (vLLM's MM_PARSER_MAP).
var refTextTypes = map[string]string{
	"text":        "text",
	"input_text":  "text",
	"output_text": "text",
	"refusal":     "refusal",
	"thinking":    "thinking",
}

// refMediaTypes are the part types that carry media; of these only images
// (image_url, input_image) are rendered, for models with an image processor.
var refMediaTypes = map[string]bool{
	"image_url": true, "input_image": true, "image_embeds": true, "audio_embeds": true,
	"prompt_embeds": true, "image_pil": true, "audio_url": true, "input_audio": true, "video_url": true,
}

// refUntypedMediaKeys are the keys vLLM recognises on a part without "type".
var refUntypedMediaKeys = []string{"image_url", "image_pil", "image_embeds", "audio_embeds", "prompt_embeds", "audio_url", "input_audio", "video_url"}

// refKnownPartFields are the keys of every TypedDict in vLLM's
// ChatCompletionContentPartParam union (_KNOWN_CONTENT_PART_FIELDS). Other
// keys of a text part reach an "openai"-format template unchanged.
var refKnownPartFields = map[string]bool{
	"type": true, "text": true, "image_url": true, "input_audio": true, "file": true, "refusal": true,
	"audio_url": true, "video_url": true, "image_embeds": true, "audio_embeds": true, "uuid": true,
	"data": true, "image_pil": true, "thinking": true, "closed": true, "name": true,
}

// refExtraPartFields collects the keys of p outside refKnownPartFields; nil when
// there are none.
func refExtraPartFields(p *node) *node {
	var extra *node
	for i, k := range p.Keys {
		if refKnownPartFields[k] {
			continue
		}
		if extra == nil {
			extra = &node{Kind: jObj}
		}
		extra.Set(k, p.Vals[i])
	}
	return extra
}

// parsePart parses one content part; ok is false for parts vLLM skips.
// mm collects image parts; nil refuses them (a model without an image
// processor).
func refParsePart(p *node, mm *imageParts) (parsedPart, bool, error) {
	if s, isStr := p.Text(); isStr {
		return parsedPart{text: s}, true, nil
	}
	if p.Kind != jObj {
		return parsedPart{}, false, badParam("messages", "Invalid content part: expected an object or a string, got %s", pyType(p))
	}
	typ, hasType := p.Get("type")
	uuid, _ := p.Get("uuid")
	if hasType && !typ.IsNull() && uuid.IsNull() {
		t, isStr := typ.Text()
		if !isStr {
			return parsedPart{}, false, badRequest("Invalid 'type' field in multimodal part.")
		}
		if key, ok := refTextTypes[t]; ok {
			v, _ := p.Get(key)
			if v.IsNull() {
				return parsedPart{}, false, nil
			}
			s, isStr := v.Text()
			if !isStr {
				return parsedPart{}, false, badParam("messages", "sequence item 0: expected str instance, %s found", pyType(v))
			}
			return parsedPart{text: s, extra: refExtraPartFields(p)}, true, nil
		}
		if refMediaTypes[t] {
			if mm != nil && (t == "image_url" || t == "input_image") {
				return refAdd(mm, p)
			}
			return parsedPart{}, false, badRequest(errMultimodal)
		}
		if t == "tool_reference" {
			return refToolReference(p)
		}
		return parsedPart{}, false, badParam("type", "Unsupported chat content part type: %s. Supported types: %s.", pyStrRepr(t), supportedPartTypes)
	}
	for _, k := range refUntypedMediaKeys {
		if _, ok := p.Get(k); ok {
			if mm != nil && k == "image_url" {
				return refAdd(mm, p)
			}
			return parsedPart{}, false, badRequest(errMultimodal)
		}
	}
	if _, ok := p.Get("tool_reference"); ok {
		return refToolReference(p)
	}
	if hasType && !typ.IsNull() {
		return parsedPart{}, false, badRequest("Invalid 'type' field in multimodal part.")
	}
	return parsedPart{}, false, badRequest("Missing 'type' field in multimodal part.")
}

func refToolReference(p *node) (parsedPart, bool, error) {
	name, _ := p.Get("name")
	s, _ := name.Text()
	return parsedPart{text: s, toolRef: true}, true, nil
}

// parseMessage is vLLM's _parse_chat_message_content: it builds a new
// message holding role and normalised content, then the fields vLLM copies
// (tool_calls, reasoning, tool_call_id, name, task, tools), in that order.
// The result is written to out, whose Keys and Vals have room for the
// fields (msgFields).
func refParseMessage(raw json.RawMessage, tree *node, format string, mm *imageParts, out *node) error {
	msg, err := tree, error(nil)
	if msg != nil {
		err = checkDepth(msg)
	} else {
		msg, err = parseJSON(raw)
	}
	if err != nil {
		return badParam("messages", "Invalid message JSON: %v", err)
	}
	if msg.Kind != jObj {
		return badParam("messages", "Each message must be an object, got %s", pyType(msg))
	}
	roleNode, _ := msg.Get("role")
	role, ok := roleNode.Text()
	if !ok {
		return badParam("messages", "Each message must have a string 'role'")
	}

	var buf [1]parsedPart
	parsed := buf[:0]
	content, _ := msg.Get("content")
	switch {
	case content.IsNull():
	case content.Kind == jStr:
		// vLLM wraps a str content as one text part; parsing that part
		// gives its text back.
		parsed = append(parsed, parsedPart{text: content.S})
	case content.Kind == jArr:
		for _, p := range content.Arr {
			pp, keep, err := refParsePart(p, mm)
			if err != nil {
				return err
			}
			if keep {
				parsed = append(parsed, pp)
			}
		}
	default:
		return badParam("messages", "Message content must be a string, a list of parts or null, got %s", pyType(content))
	}

	// The request's own string nodes serve where the value is unchanged:
	// render never modifies a node it did not build.
	out.Set("role", roleNode)
	switch {
	case format == FormatOpenAI:
		out.Set("content", partsNode(parsed))
	case !content.IsNull() && content.Kind == jStr:
		out.Set("content", content)
	default:
		out.Set("content", strNode(mm.withPlaceholders(parsed, joinTexts(parsed))))
	}

	switch role {
	case "assistant":
		if tc, ok := msg.Get("tool_calls"); ok && !tc.IsNull() {
			out.Set("tool_calls", tc)
		}
		reasoning, _ := msg.Get("reasoning")
		if reasoning.IsNull() {
			// Older clients send the deprecated name.
			reasoning, _ = msg.Get("reasoning_content")
		}
		if !reasoning.IsNull() {
			out.Set("reasoning", reasoning)
			out.Set("reasoning_content", reasoning)
		}
	case "tool":
		if id, ok := msg.Get("tool_call_id"); ok {
			out.Set("tool_call_id", id)
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
	if name, ok := msg.Get("name"); ok && name.Kind == jStr {
		out.Set("name", name)
	}
	if task, ok := msg.Get("task"); ok && task.Kind == jStr {
		out.Set("task", task)
	}
	if role == "developer" {
		tools, ok := msg.Get("tools")
		if !ok {
			tools = wire.NullNode
		}
		out.Set("tools", tools)
	}
	return nil
}

// normalizeChat is vLLM's parse_chat_messages; image parts go to mm (nil:
// refused).
func refNormalizeChat(raw []json.RawMessage, trees []*node, format string, templateUsesDeveloper bool, mm *imageParts) ([]*node, error) {
	if len(trees) != len(raw) {
		trees = nil
	}
	msgs := make([]*node, 0, len(raw))
	// The messages' objects and their members come out of three slabs.
	outs := make([]node, len(raw))
	keys := make([]string, msgFields*len(raw))
	vals := make([]*node, msgFields*len(raw))
	for i, r := range raw {
		var tree *node
		if trees != nil {
			tree = trees[i]
		}
		m := &outs[i]
		k := i * msgFields
		*m = node{Kind: jObj, Keys: keys[k : k : k+msgFields], Vals: vals[k : k : k+msgFields]}
		if err := refParseMessage(r, tree, format, mm, m); err != nil {
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

// add parses an image part (typed image_url or input_image, or the
// type-less {"image_url": ...}): image_url is a URL string or {"url", "detail"}.
func refAdd(mm *imageParts, p *node) (parsedPart, bool, error) {
	var uuid *string
	if u, ok := p.Get("uuid"); ok && !u.IsNull() {
		s, isStr := u.Text()
		if !isStr {
			return parsedPart{}, false, badParam("uuid", "uuid must be a string, got %s", pyType(u))
		}
		uuid = &s
	}
	v, _ := p.Get("image_url")
	if v.IsNull() {
		if uuid != nil {
			// A uuid without data refers to the processor cache, which the
			// render tier does not keep (skip_mm_cache).
			return parsedPart{}, false, badParam("image_url",
				"Image with uuid %s has no data and is not cached on this render server", pyStrRepr(*uuid))
		}
		return parsedPart{}, false, nil
	}
	if v.Kind == jObj {
		if d, ok := v.Get("detail"); ok {
			if s, _ := d.Text(); s != "auto" && !d.IsNull() {
				slog.Warn("'detail' is ignored for image inputs", "detail", s)
			}
		}
		v, _ = v.Get("url")
	}
	url, isStr := v.Text()
	if !isStr {
		return parsedPart{}, false, badParam("image_url", "image_url must be a URL string or an object with a string 'url'")
	}
	mm.refs = append(mm.refs, imageRef{url: url, uuid: uuid})
	return parsedPart{image: true}, true, nil
}

// harmonyMessage is the part of a chat message vLLM's Harmony conversion
// reads (parse_chat_input_to_harmony_message on the message dict).
type harmonyMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Reasoning *string         `json:"reasoning"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string  `json:"name"`
			Arguments *string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
}

func refHarmonyMessages(raw []json.RawMessage) ([]harmony.ChatMessage, error) {
	out := make([]harmony.ChatMessage, 0, len(raw))
	for i, r := range raw {
		var m harmonyMessage
		if err := json.Unmarshal(r, &m); err != nil {
			return nil, badParam(fmt.Sprintf("messages.%d", i), "messages.%d: %v", i, err)
		}
		cm := harmony.ChatMessage{Role: m.Role, ToolCallID: m.ToolCallID}
		if m.Reasoning != nil {
			cm.Reasoning = *m.Reasoning
		}
		for _, c := range m.ToolCalls {
			tc := harmony.ToolCall{ID: c.ID, Name: c.Function.Name}
			if c.Function.Arguments != nil {
				tc.Arguments = *c.Function.Arguments
			}
			cm.ToolCalls = append(cm.ToolCalls, tc)
		}
		if err := refHarmonyContent(m.Content, &cm); err != nil {
			return nil, badParam(fmt.Sprintf("messages.%d.content", i), "messages.%d.content: %v", i, err)
		}
		out = append(out, cm)
	}
	return out, nil
}

// harmonyContent reads content as flatten_input_text_content and the
// TextContent list see it: a string, or parts whose "text" they take.
func refHarmonyContent(raw json.RawMessage, cm *harmony.ChatMessage) error {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil
	}
	if s[0] == '"' {
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return err
		}
		cm.Content = &text
		return nil
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return err
	}
	cm.IsList = true
	for i, p := range parts {
		var text *string
		if ps := strings.TrimSpace(string(p)); ps != "" && ps[0] == '"' {
			var t string
			if err := json.Unmarshal(p, &t); err != nil {
				return err
			}
			text = &t
		} else {
			var part struct {
				Text *string `json:"text"`
			}
			if err := json.Unmarshal(p, &part); err != nil {
				return err
			}
			text = part.Text
		}
		if i == 0 && text != nil {
			cm.First = *text
		}
		if text != nil {
			cm.Parts = append(cm.Parts, *text)
		}
	}
	return nil
}
