package protocol

import (
	"fmt"

	"github.com/vrender/vrender/internal/wire"
)

// Message is one chat message (vLLM's ChatCompletionMessageParam) as
// vLLM's chat utils read it: role, content and the members
// _parse_chat_message_content copies to the template. pydantic checks only
// that a message is a dict; what vLLM refuses later (a role that is not a
// string, an unknown part type) is refused by render, so a value of the
// wrong type is kept as sent (the Bad* members) for render's error to name
// its Python type. Members the template receives unchanged stay JSON
// (*wire.Node, never modified): their key order reaches the template.
// Other members are not read by vLLM and are dropped.
type Message struct {
	Role string
	// HasRole is false when "role" is absent or not a string; BadRole is
	// then the value sent (nil when absent).
	HasRole bool
	BadRole *wire.Node
	Content Content
	// Name and Task are the members when they are strings (vLLM copies
	// them only then).
	Name *string
	Task *string
	// ToolCalls, Reasoning, ReasoningContent, ToolCallID and Tools are the
	// members as sent (nil when absent): vLLM forwards them as they are.
	// Tools is a developer message's own tools.
	ToolCalls        *wire.Node
	Reasoning        *wire.Node
	ReasoningContent *wire.Node
	ToolCallID       *wire.Node
	Tools            *wire.Node
	// Depth is the message's nesting as sent; render refuses a message
	// nested deeper than the template engine's limit.
	Depth int
}

// ContentKind is the shape of a message's content.
type ContentKind uint8

const (
	ContentNone    ContentKind = iota // absent or null
	ContentText                       // a string
	ContentParts                      // a list of content parts
	ContentInvalid                    // anything else: Content.Bad
)

// Content is a message's content: a string, a list of parts, or none.
type Content struct {
	Kind  ContentKind
	Text  string
	Parts []ContentPart
	Bad   *wire.Node // the value sent, for ContentInvalid
}

// PartKind is which member of vLLM's ChatCompletionContentPartParam union
// a content part is, classified as _parse_chat_message_content_part does,
// or why vLLM refuses it.
type PartKind uint8

const (
	PartString        PartKind = iota // a bare string: Text
	PartText                          // text, input_text, output_text, refusal, thinking: Type, Text, Extra
	PartTextNull                      // a text-type part whose text is absent or null: vLLM skips it
	PartImage                         // image_url or input_image (typed or by key): Type, Image, UUID
	PartMedia                         // audio, video, embeddings, image_pil: Type, Media
	PartToolReference                 // Text is the name ("" when absent or not a string)
	PartNotObject                     // neither a string nor an object: Bad
	PartBadText                       // a text-type part whose text is not a string: Bad
	PartBadType                       // "type" is not a string, or names no part for the keys given: Bad is "type"
	PartUnsupported                   // "type" names no part vLLM knows: Type
	PartMissingType                   // no "type" and no media key
)

// ContentPart is one content part. The members set depend on Kind.
type ContentPart struct {
	Kind PartKind
	// Type is the part's type: the "type" member, or for a part
	// recognised by its key alone, that key.
	Type string
	Text string
	// Extra are a text part's members outside vLLM's known part fields,
	// in request order (an object; nil when there are none): the "openai"
	// content format passes them to the template.
	Extra *wire.Node
	// Image is an image part's image_url; nil when absent or null.
	Image *ImageURL
	// UUID is an image or media part's uuid when it is a string; BadUUID
	// is a uuid of another type (not null).
	UUID    *string
	BadUUID *wire.Node
	// Media is a media part's payload as sent (vrender renders images
	// only; other media are refused, their payload unread).
	Media *wire.Node
	Bad   *wire.Node
	// TypeMember and TextMember are an object part's "type" and "text"
	// members as sent (nil when absent), whatever the part was classified
	// as: vLLM's Harmony path reads the text of every part, and echo the
	// text of every part whose type says "text".
	TypeMember *wire.Node
	TextMember *wire.Node
}

// ImageURL is an image part's image_url: a URL string, or {"url", "detail"}.
type ImageURL struct {
	// URL is the URL; URLOK is false when it (or the object's "url") is
	// not a string.
	URL   string
	URLOK bool
	// Detail is the object's "detail" when present and not null ("" when
	// it is not a string: vLLM warns that it is ignored).
	Detail *string
}

// textPartKeys are the part types whose value is text, mapped to the key
// holding it (vLLM's MM_PARSER_MAP).
var textPartKeys = map[string]string{
	"text":        "text",
	"input_text":  "text",
	"output_text": "text",
	"refusal":     "refusal",
	"thinking":    "thinking",
}

// mediaPartTypes are the part types that carry media.
var mediaPartTypes = map[string]bool{
	"image_url": true, "input_image": true, "image_embeds": true, "audio_embeds": true,
	"prompt_embeds": true, "image_pil": true, "audio_url": true, "input_audio": true, "video_url": true,
}

// untypedMediaKeys are the keys vLLM recognises on a part without "type",
// in the order it tries them.
var untypedMediaKeys = []string{"image_url", "image_pil", "image_embeds", "audio_embeds", "prompt_embeds", "audio_url", "input_audio", "video_url"}

// knownPartFields are the keys of every TypedDict in vLLM's
// ChatCompletionContentPartParam union (_KNOWN_CONTENT_PART_FIELDS).
var knownPartFields = map[string]bool{
	"type": true, "text": true, "image_url": true, "input_audio": true, "file": true, "refusal": true,
	"audio_url": true, "video_url": true, "image_embeds": true, "audio_embeds": true, "uuid": true,
	"data": true, "image_pil": true, "thinking": true, "closed": true, "name": true,
}

// MessageOf reads a decoded message object (a non-object gives a message
// without role or content, which render refuses).
func MessageOf(n *wire.Node) Message {
	m := Message{Depth: n.Depth}
	if n.Kind != wire.Object {
		return m
	}
	for i, k := range n.Keys {
		v := n.Vals[i]
		switch k {
		case "role":
			m.Role, m.HasRole = v.Text()
			m.BadRole = nil
			if !m.HasRole {
				m.BadRole = v
			}
		case "content":
			m.Content = ContentOf(v)
		case "name":
			m.Name = stringOf(v)
		case "task":
			m.Task = stringOf(v)
		case "tool_calls":
			m.ToolCalls = v
		case "reasoning":
			m.Reasoning = v
		case "reasoning_content":
			m.ReasoningContent = v
		case "tool_call_id":
			m.ToolCallID = v
		case "tools":
			m.Tools = v
		}
	}
	return m
}

// MessagesOf reads each item of a decoded messages list.
func MessagesOf(items []*wire.Node) []Message {
	out := make([]Message, len(items))
	for i, n := range items {
		out[i] = MessageOf(n)
	}
	return out
}

// ParseMessages decodes chat messages given as JSON objects, for callers
// that hold them as text (tests, benchmarks, fixtures).
func ParseMessages[T ~[]byte](raw []T) ([]Message, error) {
	out := make([]Message, len(raw))
	for i, r := range raw {
		n, err := wire.Parse(r)
		if err != nil {
			return nil, fmt.Errorf("protocol: message %d: %w", i, err)
		}
		if n.Kind != wire.Object {
			return nil, fmt.Errorf("protocol: message %d is not an object", i)
		}
		out[i] = MessageOf(n)
	}
	return out, nil
}

func stringOf(n *wire.Node) *string {
	if s, ok := n.Text(); ok {
		return &s
	}
	return nil
}

// ContentOf reads a decoded content value (nil: absent).
func ContentOf(n *wire.Node) Content {
	switch n.Kind {
	case wire.Null:
		return Content{}
	case wire.String:
		return Content{Kind: ContentText, Text: n.S}
	case wire.Array:
		parts := make([]ContentPart, len(n.Arr))
		for i, p := range n.Arr {
			parts[i] = partOf(p)
			parts[i].TypeMember, _ = p.Get("type")
			parts[i].TextMember, _ = p.Get("text")
		}
		return Content{Kind: ContentParts, Parts: parts}
	}
	return Content{Kind: ContentInvalid, Bad: n}
}

// partOf classifies a part as vLLM's _parse_chat_message_content_part:
// a "type" is trusted only when the part has no uuid; otherwise the part is
// recognised by its keys.
func partOf(p *wire.Node) ContentPart {
	if s, ok := p.Text(); ok {
		return ContentPart{Kind: PartString, Text: s}
	}
	if p.Kind != wire.Object {
		return ContentPart{Kind: PartNotObject, Bad: p}
	}
	typ, hasType := p.Get("type")
	uuid, _ := p.Get("uuid")
	if hasType && !typ.IsNull() && uuid.IsNull() {
		t, isStr := typ.Text()
		if !isStr {
			return ContentPart{Kind: PartBadType, Bad: typ}
		}
		if key, ok := textPartKeys[t]; ok {
			v, _ := p.Get(key)
			if v.IsNull() {
				return ContentPart{Kind: PartTextNull, Type: t}
			}
			s, isStr := v.Text()
			if !isStr {
				return ContentPart{Kind: PartBadText, Type: t, Bad: v}
			}
			return ContentPart{Kind: PartText, Type: t, Text: s, Extra: extraPartFields(p)}
		}
		if mediaPartTypes[t] {
			return mediaPartOf(p, t)
		}
		if t == "tool_reference" {
			return toolReferenceOf(p)
		}
		return ContentPart{Kind: PartUnsupported, Type: t}
	}
	for _, k := range untypedMediaKeys {
		if _, ok := p.Get(k); ok {
			return mediaPartOf(p, k)
		}
	}
	if _, ok := p.Get("tool_reference"); ok {
		return toolReferenceOf(p)
	}
	if hasType && !typ.IsNull() {
		return ContentPart{Kind: PartBadType, Bad: typ}
	}
	return ContentPart{Kind: PartMissingType}
}

func toolReferenceOf(p *wire.Node) ContentPart {
	name, _ := p.Get("name")
	s, _ := name.Text()
	return ContentPart{Kind: PartToolReference, Type: "tool_reference", Text: s}
}

// mediaPartOf reads a media part of type t. Image parts (image_url,
// input_image) hold their image_url and uuid; other media their payload,
// the member named as the type.
func mediaPartOf(p *wire.Node, t string) ContentPart {
	c := ContentPart{Kind: PartImage, Type: t}
	if u, ok := p.Get("uuid"); ok && !u.IsNull() {
		if s, isStr := u.Text(); isStr {
			c.UUID = &s
		} else {
			c.BadUUID = u
		}
	}
	if t != "image_url" && t != "input_image" {
		// image_embeds parts read their uuid too.
		c.Kind, c.Media = PartMedia, nil
		c.Media, _ = p.Get(t)
		return c
	}
	v, _ := p.Get("image_url")
	if v.IsNull() {
		return c
	}
	img := &ImageURL{}
	if v.Kind == wire.Object {
		if d, ok := v.Get("detail"); ok && !d.IsNull() {
			s, _ := d.Text()
			img.Detail = &s
		}
		v, _ = v.Get("url")
	}
	img.URL, img.URLOK = v.Text()
	c.Image = img
	return c
}

// extraPartFields collects the members of p outside knownPartFields; nil
// when there are none.
func extraPartFields(p *wire.Node) *wire.Node {
	var extra *wire.Node
	for i, k := range p.Keys {
		if knownPartFields[k] {
			continue
		}
		if extra == nil {
			extra = &wire.Node{Kind: wire.Object}
		}
		extra.Set(k, p.Vals[i])
	}
	return extra
}

// TextMessage is a message of role with a string content.
func TextMessage(role, text string) Message {
	return Message{Role: role, HasRole: true, Content: Content{Kind: ContentText, Text: text}}
}

// TextPart is the part {"type": "text", "text": text}.
func TextPart(text string) ContentPart {
	return ContentPart{Kind: PartText, Type: "text", Text: text,
		TypeMember: wire.StringNode("text"), TextMember: wire.StringNode(text)}
}

// ImagePart is the part {"type": "image_url", "image_url": {"url": url}}.
func ImagePart(url string) ContentPart {
	return ContentPart{Kind: PartImage, Type: "image_url", Image: &ImageURL{URL: url, URLOK: true},
		TypeMember: wire.StringNode("image_url")}
}

// ToolReferencePart is the part {"type": "tool_reference", "name": name}.
func ToolReferencePart(name string) ContentPart {
	return ContentPart{Kind: PartToolReference, Type: "tool_reference", Text: name,
		TypeMember: wire.StringNode("tool_reference")}
}

// AppendJSON writes the message as vLLM reads it: its typed members in a
// fixed order, the members kept as JSON as they were sent. Members vLLM
// does not read are not kept, so they are not written; a part render
// refuses is written as far as its refusal reads it (for tests and logs:
// no request is built from this text).
func (m *Message) AppendJSON(dst []byte) ([]byte, error) {
	var b wire.ObjectBuilder
	switch {
	case m.HasRole:
		b.Str("role", m.Role)
	case m.BadRole != nil:
		b.Raw("role", nodeJSON(m.BadRole))
	}
	switch m.Content.Kind {
	case ContentText:
		b.Str("content", m.Content.Text)
	case ContentParts:
		parts := []byte{'['}
		for i := range m.Content.Parts {
			if i > 0 {
				parts = append(parts, ',')
			}
			parts = m.Content.Parts[i].appendJSON(parts)
		}
		b.Raw("content", append(parts, ']'))
	case ContentInvalid:
		b.Raw("content", nodeJSON(m.Content.Bad))
	}
	if m.Name != nil {
		b.Str("name", *m.Name)
	}
	if m.Task != nil {
		b.Str("task", *m.Task)
	}
	for _, f := range []struct {
		key string
		n   *wire.Node
	}{{"tool_calls", m.ToolCalls}, {"reasoning", m.Reasoning}, {"reasoning_content", m.ReasoningContent},
		{"tool_call_id", m.ToolCallID}, {"tools", m.Tools}} {
		if f.n != nil {
			b.Raw(f.key, nodeJSON(f.n))
		}
	}
	return append(dst, b.Bytes()...), nil
}

// MarshalJSON is AppendJSON into a new buffer.
func (m Message) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil) }

func (p *ContentPart) appendJSON(dst []byte) []byte {
	var b wire.ObjectBuilder
	switch p.Kind {
	case PartString:
		return wire.AppendString(dst, p.Text)
	case PartNotObject:
		return append(dst, nodeJSON(p.Bad)...)
	case PartText:
		b.Str("type", p.Type)
		b.Str(textPartKeys[p.Type], p.Text)
		if p.Extra != nil {
			for i, k := range p.Extra.Keys {
				b.Raw(k, nodeJSON(p.Extra.Vals[i]))
			}
		}
	case PartBadText:
		b.Str("type", p.Type)
		b.Raw(textPartKeys[p.Type], nodeJSON(p.Bad))
	case PartImage:
		b.Str("type", p.Type)
		if p.Image != nil {
			var u wire.ObjectBuilder
			if p.Image.URLOK {
				u.Str("url", p.Image.URL)
			}
			if p.Image.Detail != nil {
				u.Str("detail", *p.Image.Detail)
			}
			b.Raw("image_url", u.Bytes())
		}
		if p.UUID != nil {
			b.Str("uuid", *p.UUID)
		} else if p.BadUUID != nil {
			b.Raw("uuid", nodeJSON(p.BadUUID))
		}
	case PartMedia:
		b.Str("type", p.Type)
		if p.Media != nil {
			b.Raw(p.Type, nodeJSON(p.Media))
		}
		if p.UUID != nil {
			b.Str("uuid", *p.UUID)
		} else if p.BadUUID != nil {
			b.Raw("uuid", nodeJSON(p.BadUUID))
		}
	case PartToolReference:
		b.Str("type", p.Type)
		b.Str("name", p.Text)
	case PartTextNull, PartUnsupported:
		b.Str("type", p.Type)
	case PartBadType:
		b.Raw("type", nodeJSON(p.Bad))
	}
	return append(dst, b.Bytes()...)
}

// nodeJSON is n's JSON text: as sent for a parsed value, written for one
// built by code.
func nodeJSON(n *wire.Node) []byte {
	if n.Raw != nil {
		return n.Raw
	}
	return wire.AppendNode(nil, n)
}
