package anthropic

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
)

// The Messages and count_tokens decoders read untrusted bodies: they never
// panic, and a refusal is a validation error with a message.
func FuzzDecodeMessages(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"ctx","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"}]}]}],"tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"tool"}}`,
		`{"model":"","messages":[],"system":[{"type":"text","text":"s"}]}`,
		`[]`, `null`, `{}`,
	} {
		f.Add([]byte(s))
	}
	check := func(t *testing.T, data []byte, err error) {
		if err == nil {
			return
		}
		var verr *pylax.ValidationError
		switch {
		case errors.As(err, &verr):
			if len(verr.Errors) == 0 || verr.Message() == "" {
				t.Fatalf("%s: empty validation error", data)
			}
		case err.Error() == "":
			t.Fatalf("%s: empty error", data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		_, err := DecodeMessagesRequest(data)
		check(t, data, err)
		_, err = DecodeCountTokensRequest(data)
		check(t, data, err)
	})
}
