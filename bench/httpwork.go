package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/vrender/vrender/internal/benchdata"
)

// coldTag is the text that makes unit i's messages new: no two units (and
// not the warm-up, -1) share it, and it is the same width for all units
// up to a million, so cold requests keep the same size.
func coldTag(i int) string {
	if i < 0 {
		return "[warm-up] "
	}
	return fmt.Sprintf("[%07d] ", i)
}

// ColdConversation returns q with tag prefixed to the content of every
// message (tool calls' messages included), so every message carries text no
// request with another tag had: no cache can serve any part of it. The tag
// is spliced in after the message's `"content":"` (the bench's messages
// are json.Marshal output, so that is the top-level key and the bytes are
// what a decode-edit-encode would give; coldMessageSlow is that, for any
// other message): the client must make bodies much faster than the server
// renders them, or it, not the server, sets the pace.
func ColdConversation(q benchdata.Request, tag string) (benchdata.Request, error) {
	out := q
	out.Messages = make([]json.RawMessage, len(q.Messages))
	for i, raw := range q.Messages {
		prefix := tag + strconv.Itoa(i) + " "
		if lead := []byte(`{"content":"`); bytes.HasPrefix(raw, lead) && encodesAsIs(prefix) {
			b := make([]byte, 0, len(raw)+len(prefix))
			out.Messages[i] = append(append(append(b, lead...), prefix...), raw[len(lead):]...)
			continue
		}
		b, err := coldMessageSlow(raw, prefix)
		if err != nil {
			return out, fmt.Errorf("bench http: message %d: %w", i, err)
		}
		out.Messages[i] = b
	}
	return out, nil
}

// encodesAsIs reports whether json.Marshal writes s's bytes unchanged
// inside a string: printable ASCII other than the quote, the backslash and
// the HTML characters it escapes.
func encodesAsIs(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || strings.IndexByte(`"\\<>&`, c) >= 0 {
			return false
		}
	}
	return true
}

// coldMessageSlow prefixes the content of one message by decoding and
// re-encoding it.
func coldMessageSlow(raw json.RawMessage, prefix string) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	content, _ := m["content"].(string)
	m["content"] = prefix + content
	return json.Marshal(m)
}

// MultiTurnTurns is the number of turns of a multi-turn session.
const MultiTurnTurns = 41

// TurnMessages is how many messages turn t (0-based) of a session over an
// n-message conversation holds: 1, 3, 5, ... and the whole conversation
// at the last turn.
func TurnMessages(t, n int) int { return min(n, 2*t+1) }

// chatRenderBody is the /v1/chat/completions/render body of q.
func chatRenderBody(q benchdata.Request) []byte {
	return jsonBody(map[string]any{"model": "m", "messages": q.Messages, "tools": q.Tools,
		"add_generation_prompt": q.AddGenerationPrompt})
}

// RenderWorkloads are the chat render measurements over HTTP: cold and
// warm for each size, and multi-turn sessions over the largest.
func RenderWorkloads(sizes []benchdata.Size) []Workload {
	var out []Workload
	for _, s := range sizes {
		base := benchdata.Conversation(s)
		out = append(out, Workload{Name: "render " + s.Name, Kind: "cold", Independent: true, Next: func(i int) ([]Call, error) {
			q, err := ColdConversation(base, coldTag(i))
			if err != nil {
				return nil, err
			}
			return []Call{{Method: "POST", Path: "/v1/chat/completions/render", Body: chatRenderBody(q)}}, nil
		}})
		warm := chatRenderBody(base)
		out = append(out, Workload{Name: "render " + s.Name, Kind: "warm", Independent: true, Next: func(int) ([]Call, error) {
			return []Call{{Method: "POST", Path: "/v1/chat/completions/render", Body: warm}}, nil
		}})
	}
	last := sizes[len(sizes)-1]
	out = append(out, MultiTurnWorkload(last))
	return out
}

// MultiTurnWorkload is one unit per session: MultiTurnTurns requests, each
// holding every earlier message of a conversation whose text no other
// session shares.
func MultiTurnWorkload(s benchdata.Size) Workload {
	base := benchdata.Conversation(s)
	return Workload{Name: fmt.Sprintf("render %s, %d turns", s.Name, MultiTurnTurns), Kind: "multi-turn", Independent: true,
		Next: func(i int) ([]Call, error) {
			q, err := ColdConversation(base, coldTag(i))
			if err != nil {
				return nil, err
			}
			return MultiTurnCalls(q), nil
		}}
}

// MultiTurnCalls are the render requests of one session over q. The
// bodies are chatRenderBody's bytes, put together from the messages instead
// of marshalling 41 growing conversations (~1 MB of JSON a session, which
// left the server waiting for the client).
func MultiTurnCalls(q benchdata.Request) []Call {
	head := jsonBody(map[string]any{"add_generation_prompt": q.AddGenerationPrompt})
	head = append(head[:len(head)-1], `,"messages":[`...)
	tail := append([]byte(`],"model":"m","tools":`), jsonBody(q.Tools)...)
	tail = append(tail, '}')
	calls := make([]Call, MultiTurnTurns)
	for t := range calls {
		msgs := q.Messages[:TurnMessages(t, len(q.Messages))]
		n := len(head) + len(tail)
		for _, m := range msgs {
			n += len(m) + 1
		}
		body := append(make([]byte, 0, n), head...)
		for i, m := range msgs {
			if i > 0 {
				body = append(body, ',')
			}
			body = append(body, m...)
		}
		calls[t] = Call{Method: "POST", Path: "/v1/chat/completions/render", Body: append(body, tail...)}
	}
	return calls
}

// TokenizeWorkloads tokenize prompts over HTTP: cold prompts (prompt(i)
// must never repeat text across units) and the warm one repeated.
func TokenizeWorkloads(name string, prompt func(i int) (string, error)) []Workload {
	warmText, err := prompt(-1)
	warm := jsonBody(map[string]any{"model": "m", "prompt": warmText})
	return []Workload{
		{Name: "tokenize " + name, Kind: "cold", Independent: true, Next: func(i int) ([]Call, error) {
			p, err := prompt(i)
			if err != nil {
				return nil, err
			}
			return []Call{{Method: "POST", Path: "/tokenize", Body: jsonBody(map[string]any{"model": "m", "prompt": p})}}, nil
		}},
		{Name: "tokenize " + name, Kind: "warm", Independent: true, Next: func(int) ([]Call, error) {
			if err != nil {
				return nil, err
			}
			return []Call{{Method: "POST", Path: "/tokenize", Body: warm}}, nil
		}},
	}
}

// ColdPrompt returns text with tag and a counter inserted at the start of
// every message of a ChatML prompt (after each "<|im_start|>role\n"), or,
// for other formats, at the start and after every blank line: every
// stretch of text between special tokens the prompt's messages hold then
// carries text no prompt with another tag had.
func ColdPrompt(text, tag string) string {
	var sb strings.Builder
	sb.Grow(len(text) + 64*len(tag))
	n := 0
	mark := func() { sb.WriteString(tag); sb.WriteString(strconv.Itoa(n)); sb.WriteByte(' '); n++ }
	if !strings.Contains(text, "<|im_start|>") {
		mark()
		for {
			before, after, ok := strings.Cut(text, "\n\n")
			sb.WriteString(before)
			if !ok {
				return sb.String()
			}
			sb.WriteString("\n\n")
			mark()
			text = after
		}
	}
	for {
		before, after, ok := strings.Cut(text, "<|im_start|>")
		sb.WriteString(before)
		if !ok {
			return sb.String()
		}
		sb.WriteString("<|im_start|>")
		role, rest, ok := strings.Cut(after, "\n")
		sb.WriteString(role)
		if !ok {
			return sb.String()
		}
		sb.WriteByte('\n')
		mark()
		text = rest
	}
}
