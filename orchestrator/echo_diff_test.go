package orchestrator

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
)

// refEchoText and refChatRole are how echo and the request role read the
// last message before messages were typed: encoding/json on its raw JSON.
func refEchoText(raw json.RawMessage, role string) string {
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	text := ""
	if json.Unmarshal(raw, &m) == nil && m.Role == role {
		var s string
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		switch {
		case json.Unmarshal(m.Content, &s) == nil:
			text = s
		case json.Unmarshal(m.Content, &parts) == nil:
			texts := make([]string, 0, len(parts))
			for _, p := range parts {
				if p.Type == "text" {
					texts = append(texts, p.Text)
				}
			}
			text = strings.Join(texts, "\n")
		}
	}
	return text
}

func refChatRole(raw json.RawMessage, fallback string) string {
	var m struct {
		Role string `json:"role"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Role == "" {
		return fallback
	}
	return m.Role
}

var echoCases = []string{
	`{"role":"assistant","content":"partial"}`,
	`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"refusal","refusal":"r"}]}`,
	`{"role":"assistant","content":[{"type":"text","text":null},null,{"type":"image_url","image_url":"u"}]}`,
	`{"role":"assistant","content":["a"]}`,
	`{"role":"assistant","content":[{"type":"text","text":5}]}`,
	`{"role":"assistant","content":[7]}`,
	`{"role":"assistant","content":null}`,
	`{"role":"assistant"}`,
	`{"role":"assistant","content":{"a":1}}`,
	`{"role":"user","content":"u"}`,
	`{"role":"","content":"e"}`,
	`{"role":5,"content":"x"}`,
	`{"role":null,"content":"x"}`,
	`{"content":"x"}`,
	`{"role":"assistant","content":[{"type":"text","uuid":"x","text":"t"}]}`,
	`{"role":"assistant","content":[{"type":"text","uuid":"x","image_url":"u","text":"t"},{"type":5,"uuid":"y","image_url":"v"}]}`,
}

// echoDiff compares echo's text and the request role of the typed last
// message with the encoding/json reading it replaced.
func echoDiff(t *testing.T, raw []byte) {
	n, err := wire.Parse(raw)
	if err != nil || n.Kind != wire.Object || caseFolds(n) {
		return
	}
	m := protocol.MessageOf(n)
	req := &protocol.ChatCompletionRequest{Messages: []protocol.Message{m}, Echo: true}
	if got, want := *echoContent(req, "assistant"), refEchoText(raw, "assistant"); got != want {
		t.Fatalf("%s: echo %q, want %q", raw, got, want)
	}
	o := &Orchestrator{cfg: Config{ResponseRole: "assistant"}}
	if got, want := o.chatRole(req), refChatRole(raw, "assistant"); got != want {
		t.Fatalf("%s: role %q, want %q", raw, got, want)
	}
}

// caseFolds reports a member encoding/json would have matched to a field
// case-insensitively (vLLM's dicts never did).
func caseFolds(n *wire.Node) bool {
	for i, k := range n.Keys {
		for _, f := range []string{"role", "content", "type", "text"} {
			if k != f && strings.EqualFold(k, f) {
				return true
			}
		}
		if caseFolds(n.Vals[i]) {
			return true
		}
	}
	for _, v := range n.Arr {
		if caseFolds(v) {
			return true
		}
	}
	return false
}

func TestEchoReadsTypedMessage(t *testing.T) {
	for _, c := range echoCases {
		echoDiff(t, []byte(c))
	}
}

func FuzzEchoReadsTypedMessage(f *testing.F) {
	for _, c := range echoCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, raw string) { echoDiff(t, []byte(raw)) })
}
