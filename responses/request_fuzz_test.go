package responses

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
)

// The Responses decoder reads untrusted bodies: it never panics, and a
// refusal is a validation or parameter error with a message.
func FuzzDecodeResponses(f *testing.F) {
	for _, s := range []string{
		`{"input":"hi","tools":[{"type":"web_search"},{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}}`,
		`{"input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"o"}]}`,
		`{"input":[],"text":{"format":{"type":"json_schema","schema":{}}},"reasoning":{"effort":"low"},"metadata":{"a":"b"}}`,
		`[]`, `null`, `{}`,
	} {
		f.Add([]byte(s))
	}
	check := func(t *testing.T, data []byte, err error) {
		if err == nil {
			return
		}
		var verr *pylax.ValidationError
		var perr *ParamError
		switch {
		case errors.As(err, &verr):
			if len(verr.Errors) == 0 || verr.Message() == "" {
				t.Fatalf("%s: empty validation error", data)
			}
		case errors.As(err, &perr):
			if perr.Message == "" {
				t.Fatalf("%s: empty parameter error", data)
			}
		case err.Error() == "":
			t.Fatalf("%s: empty error", data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		_, err := DecodeRequest(data)
		check(t, data, err)
	})
}
