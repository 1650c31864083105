package bench

import (
	"bytes"
	"encoding/json"
)

// chunkKind classifies one SSE data payload of an OpenAI stream.
type chunkKind int

const (
	chunkOther   chunkKind = iota // neither choices nor usage (ignored, as vLLM does)
	chunkChoices                  // "choices" is a non-empty array: a token chunk
	chunkUsage                    // "choices" empty or absent, "usage" an object: the final usage chunk
	chunkError                    // an error event: {"error": {...}} or {"object": "error", ...}
)

// chunkInfo is what the load generator needs from one payload.
type chunkInfo struct {
	kind             chunkKind
	completionTokens int  // usage.completion_tokens
	promptTokens     int  // usage.prompt_tokens
	hasUsage         bool // a usage object was present (continuous usage stats put one on token chunks too)
}

// Keys are searched as raw bytes. Inside a JSON string every quote is
// escaped, so `"choices"` with both quotes bare can only be a key; the
// OpenAI chunk schemas use these names nowhere but at the top level.
var (
	keyChoices          = []byte(`"choices"`)
	keyUsage            = []byte(`"usage"`)
	keyCompletionTokens = []byte(`"completion_tokens"`)
	keyPromptTokens     = []byte(`"prompt_tokens"`)
	keyError            = []byte(`"error"`)
)

// scanChunk classifies an SSE data payload without decoding it: per token
// the load generator must stay far cheaper than the server it measures.
func scanChunk(p []byte) chunkInfo {
	var info chunkInfo
	if v, ok := sseValueOf(p, keyUsage); ok && len(v) > 0 && v[0] == '{' {
		if n, ok := sseValueOf(v, keyCompletionTokens); ok {
			info.completionTokens, info.hasUsage = sseLeadingInt(n), true
		}
		if n, ok := sseValueOf(v, keyPromptTokens); ok {
			info.promptTokens = sseLeadingInt(n)
		}
	}
	if v, ok := sseValueOf(p, keyChoices); ok && len(v) > 0 && v[0] == '[' {
		if rest := sseTrimSpace(v[1:]); len(rest) > 0 && rest[0] != ']' {
			info.kind = chunkChoices
			return info
		}
	}
	switch {
	case info.hasUsage:
		info.kind = chunkUsage
	case isErrorPayload(p):
		info.kind = chunkError
	}
	return info
}

// sseValueOf returns the bytes after `key:` (whitespace skipped), ok false if
// the key does not occur.
func sseValueOf(p, key []byte) ([]byte, bool) {
	for {
		i := bytes.Index(p, key)
		if i < 0 {
			return nil, false
		}
		p = sseTrimSpace(p[i+len(key):])
		if len(p) > 0 && p[0] == ':' {
			return sseTrimSpace(p[1:]), true
		}
	}
}

func sseTrimSpace(p []byte) []byte {
	for len(p) > 0 && (p[0] == ' ' || p[0] == '\t' || p[0] == '\n' || p[0] == '\r') {
		p = p[1:]
	}
	return p
}

// sseLeadingInt parses the non-negative integer at the start of p.
func sseLeadingInt(p []byte) int {
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// isErrorPayload reports an error event: vLLM's streaming error is
// {"error": {...}} (older servers: {"object": "error", "message": ...}).
func isErrorPayload(p []byte) bool {
	if v, ok := sseValueOf(p, keyError); ok && len(v) > 0 && v[0] == '{' {
		return true
	}
	return bytes.Contains(p, []byte(`"object":"error"`)) || bytes.Contains(p, []byte(`"object": "error"`))
}

// errorMessage extracts the message of an error event (rare: decoded).
func errorMessage(p []byte) string {
	var e struct {
		Message string `json:"message"`
		Error   *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(p, &e); err != nil {
		return string(p)
	}
	if e.Error != nil {
		return e.Error.Message
	}
	return e.Message
}

// chunkText decodes the generated text of a token chunk: choices[0].text
// (completions) or choices[0].delta.content (chat). Only used when the
// texts are kept (--save-detailed).
func chunkText(p []byte) string {
	var c struct {
		Choices []struct {
			Text  *string `json:"text"`
			Delta *struct {
				Content *string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal(p, &c) != nil || len(c.Choices) == 0 {
		return ""
	}
	ch := c.Choices[0]
	switch {
	case ch.Text != nil:
		return *ch.Text
	case ch.Delta != nil && ch.Delta.Content != nil:
		return *ch.Delta.Content
	}
	return ""
}
