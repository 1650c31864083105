package parsers

import (
	"crypto/rand"
	"encoding/json"
)

// newToolCallID returns a fresh id in the shape of vLLM's random ids.
func newToolCallID() string {
	return "call_" + rand.Text()[:24]
}

// decodeString decodes canonical JSON text that should hold a string.
func decodeString(canon []byte) (string, bool) {
	if len(canon) == 0 || canon[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(canon, &s); err != nil {
		return "", false
	}
	return s, true
}

func isJSONSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return false
		}
	}
	return true
}
