package wire

import "encoding/json"

// ObjectBuilder writes a JSON object member by member, in call order: the shape
// the front ends build the chat requests they translate to.
type ObjectBuilder struct{ buf []byte }

// Key starts a member named k.
func (b *ObjectBuilder) Key(k string) {
	if len(b.buf) == 0 {
		b.buf = append(b.buf, '{')
	} else {
		b.buf = append(b.buf, ',')
	}
	kb, _ := json.Marshal(k)
	b.buf = append(b.buf, kb...)
	b.buf = append(b.buf, ':')
}

// Str adds k with the string v.
func (b *ObjectBuilder) Str(k, v string) {
	b.Key(k)
	vb, _ := json.Marshal(v)
	b.buf = append(b.buf, vb...)
}

// Raw adds k with the JSON value v; a nil v is skipped.
func (b *ObjectBuilder) Raw(k string, v json.RawMessage) {
	if v == nil {
		return
	}
	b.Key(k)
	b.buf = append(b.buf, v...)
}

// Value adds k with v marshalled (a nil pointer is null).
func (b *ObjectBuilder) Value(k string, v any) {
	b.Key(k)
	vb, _ := json.Marshal(v)
	b.buf = append(b.buf, vb...)
}

// Bytes is the object written so far ({} when empty).
func (b *ObjectBuilder) Bytes() json.RawMessage {
	if len(b.buf) == 0 {
		return json.RawMessage("{}")
	}
	return json.RawMessage(append(b.buf, '}'))
}
