package responses

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// The readers of the request's members before the request kept their trees:
// each member's raw text read again with encoding/json. The differential
// tests hold the tree readers to them.

// refConfig is what DecodeRequest read with encoding/json.
type refConfig struct {
	Include   []string
	Reasoning *struct {
		Effort *string `json:"effort"`
	}
	Text *struct {
		Format *struct {
			Type   string          `json:"type"`
			Name   *string         `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict *bool           `json:"strict"`
		} `json:"format"`
	}
	Metadata, ToolChoice, KV, EC json.RawMessage
}

func refNullToNil(v json.RawMessage) json.RawMessage {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	return v
}

// refDecodeConfig reads an accepted body's members as DecodeRequest did;
// r is the decoded request, for the tool-choice defaults, which did not
// read JSON.
func refDecodeConfig(data []byte, r *Request) refConfig {
	members := map[string]json.RawMessage{}
	_ = json.Unmarshal(data, &members) // the last of a repeated key, as the tree
	var c refConfig
	_ = json.Unmarshal(refNullToNil(members["include"]), &c.Include)
	c.Metadata = refNullToNil(members["metadata"])
	if raw := refNullToNil(members["reasoning"]); raw != nil {
		_ = json.Unmarshal(raw, &c.Reasoning)
	}
	if raw := refNullToNil(members["text"]); raw != nil {
		_ = json.Unmarshal(raw, &c.Text)
	}
	c.ToolChoice = json.RawMessage(`"auto"`)
	if raw, ok := members["tool_choice"]; ok {
		c.ToolChoice = raw
	}
	if raw := members["tool_choice"]; refNullToNil(raw) != nil && len(r.Tools) == 0 {
		// check_tool_usage turned "auto" into "none" before validation.
		if n, err := wire.Parse(raw); err == nil && protocol.ResponsesToolChoice(n).Kind == protocol.ToolChoiceAuto {
			c.ToolChoice = json.RawMessage(`"none"`)
		}
	} else if raw == nil && len(r.Tools) == 0 {
		c.ToolChoice = json.RawMessage(`"none"`)
	}
	for k, dst := range map[string]*json.RawMessage{"kv_transfer_params": &c.KV, "ec_transfer_params": &c.EC} {
		if raw := refNullToNil(members[k]); len(raw) > 0 && raw[0] == '{' {
			*dst = raw
		}
	}
	return c
}

// refPassthroughChat is passthroughChat as it wrote the members' text into
// a body the chat decoder parsed again.
func refPassthroughChat(r *Request, data []byte) (*protocol.ChatCompletionRequest, error) {
	members := map[string]json.RawMessage{}
	_ = json.Unmarshal(data, &members)
	var b wire.ObjectBuilder
	if r.Model != nil {
		b.Str("model", *r.Model)
	}
	b.Raw("messages", json.RawMessage("[]"))
	for _, k := range responsesPassthrough {
		if v, ok := members[k]; ok {
			b.Raw(k, v)
		}
	}
	return protocol.DecodeChatCompletionRequest(b.Bytes())
}

// readMembers are the member names the encoding/json readers read; it
// matched them case-insensitively, where Python's dict (and the trees)
// match them exactly.
var readMembers = []string{"type", "role", "call_id", "name", "namespace", "arguments", "output",
	"encrypted_content", "summary", "content", "text", "status", "effort", "format", "schema", "strict"}

// jsonQuirk reports an object in raw that encoding/json reads otherwise
// than json.loads: a key repeated, or spelled as a read member in another
// case (encoding/json matched "TYPE" as "type", and kept a type error in a
// repeated key it then replaced).
func jsonQuirk(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var walk func() bool
	walk = func() bool {
		t, err := dec.Token()
		if err != nil {
			return true
		}
		switch t {
		case json.Delim('{'):
			var keys []string
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return true
				}
				k := kt.(string)
				for _, prev := range keys {
					if strings.EqualFold(prev, k) {
						return true
					}
				}
				for _, m := range readMembers {
					if k != m && strings.EqualFold(k, m) {
						return true
					}
				}
				keys = append(keys, k)
				if walk() {
					return true
				}
			}
			_, err := dec.Token()
			return err != nil
		case json.Delim('['):
			for dec.More() {
				if walk() {
					return true
				}
			}
			_, err := dec.Token()
			return err != nil
		}
		return false
	}
	return walk()
}
