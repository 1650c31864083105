package protocol

import (
	"testing"

	"github.com/vrender/vrender/internal/wire"
)

// TestPartKinds pins the classification of content parts as vLLM's
// _parse_chat_message_content_part makes it: a "type" counts only without
// a uuid; a part without one is recognised by its media key.
func TestPartKinds(t *testing.T) {
	for _, tc := range []struct {
		name, part string
		kind       PartKind
		typ, text  string
	}{
		{"bare string", `"s"`, PartString, "", "s"},
		{"number", `7`, PartNotObject, "", ""},
		{"null", `null`, PartNotObject, "", ""},
		{"text", `{"type":"text","text":"t","x":1}`, PartText, "text", "t"},
		{"input_text", `{"type":"input_text","text":"t"}`, PartText, "input_text", "t"},
		{"refusal reads refusal", `{"type":"refusal","refusal":"r","text":"t"}`, PartText, "refusal", "r"},
		{"thinking", `{"type":"thinking","thinking":"k"}`, PartText, "thinking", "k"},
		{"text null", `{"type":"output_text","text":null}`, PartTextNull, "output_text", ""},
		{"text not a string", `{"type":"text","text":5}`, PartBadText, "text", ""},
		{"image_url", `{"type":"image_url","image_url":"u"}`, PartImage, "image_url", ""},
		{"input_image", `{"type":"input_image","image_url":{"url":"u"}}`, PartImage, "input_image", ""},
		{"image by key", `{"image_url":"u"}`, PartImage, "image_url", ""},
		{"uuid sends a typed part to its keys", `{"type":"text","uuid":"x","image_url":"u"}`, PartImage, "image_url", ""},
		{"uuid on a text part", `{"type":"text","uuid":"x","text":"t"}`, PartBadType, "", ""},
		{"audio", `{"type":"audio_url","audio_url":{"url":"a"}}`, PartMedia, "audio_url", ""},
		{"audio by key", `{"input_audio":{}}`, PartMedia, "input_audio", ""},
		{"tool_reference", `{"type":"tool_reference","name":"g"}`, PartToolReference, "tool_reference", "g"},
		{"tool_reference by key", `{"tool_reference":1,"name":5}`, PartToolReference, "tool_reference", ""},
		{"type not a string", `{"type":5}`, PartBadType, "", ""},
		{"unknown type", `{"type":"nope"}`, PartUnsupported, "nope", ""},
		{"no type", `{"text":"t"}`, PartMissingType, "", ""},
		{"null type", `{"type":null}`, PartMissingType, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := wire.Parse([]byte(`{"role":"user","content":[` + tc.part + `]}`))
			if err != nil {
				t.Fatal(err)
			}
			m := MessageOf(n)
			if m.Content.Kind != ContentParts || len(m.Content.Parts) != 1 {
				t.Fatalf("content %+v", m.Content)
			}
			p := m.Content.Parts[0]
			if p.Kind != tc.kind || p.Type != tc.typ || p.Text != tc.text {
				t.Fatalf("part %+v, want kind %d type %q text %q", p, tc.kind, tc.typ, tc.text)
			}
		})
	}
}

// TestImageURL pins what an image part's image_url holds.
func TestImageURL(t *testing.T) {
	for _, tc := range []struct {
		part   string
		url    string
		urlOK  bool
		detail string // "-": none
		uuid   string // "-": none; "!": not a string
	}{
		{`{"type":"image_url","image_url":"u"}`, "u", true, "-", "-"},
		{`{"type":"image_url","image_url":{"url":"u","detail":"low"},"uuid":null}`, "u", true, "low", "-"},
		{`{"image_url":{"url":5,"detail":7},"uuid":"k"}`, "", false, "", "k"},
		{`{"image_url":{"detail":null},"uuid":5}`, "", false, "-", "!"},
	} {
		n, err := wire.Parse([]byte(`{"content":[` + tc.part + `]}`))
		if err != nil {
			t.Fatal(err)
		}
		p := MessageOf(n).Content.Parts[0]
		if p.Image == nil || p.Image.URL != tc.url || p.Image.URLOK != tc.urlOK {
			t.Fatalf("%s: image %+v", tc.part, p.Image)
		}
		detail := "-"
		if p.Image.Detail != nil {
			detail = *p.Image.Detail
		}
		uuid := "-"
		switch {
		case p.UUID != nil:
			uuid = *p.UUID
		case p.BadUUID != nil:
			uuid = "!"
		}
		if detail != tc.detail || uuid != tc.uuid {
			t.Fatalf("%s: detail %q uuid %q, want %q %q", tc.part, detail, uuid, tc.detail, tc.uuid)
		}
	}
}

// TestMessageMembers: a message keeps the members vLLM reads, of the
// types it reads them as, and the wrong types as sent.
func TestMessageMembers(t *testing.T) {
	n, err := wire.Parse([]byte(`{"role":3,"name":5,"task":"t","tool_calls":[1],"reasoning":null,` +
		`"reasoning_content":"r","tool_call_id":null,"tools":[],"junk":{"a":[[1]]},"content":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	m := MessageOf(n)
	switch {
	case m.HasRole || m.BadRole == nil || m.BadRole.S != "3":
		t.Fatalf("role %q %v %+v", m.Role, m.HasRole, m.BadRole)
	case m.Name != nil || m.Task == nil || *m.Task != "t":
		t.Fatalf("name %v task %v", m.Name, m.Task)
	case m.ToolCalls == nil || m.Reasoning == nil || !m.Reasoning.IsNull() || m.ReasoningContent == nil ||
		m.ToolCallID == nil || m.Tools == nil:
		t.Fatalf("forwarded members %+v", m)
	case m.Content.Kind != ContentInvalid || m.Depth != 4:
		t.Fatalf("content %+v depth %d", m.Content, m.Depth)
	}
	b, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"role":3,"content":{},"task":"t","tool_calls":[1],"reasoning":null,"reasoning_content":"r","tool_call_id":null,"tools":[]}`
	if string(b) != want {
		t.Fatalf("JSON %s, want %s", b, want)
	}
}
