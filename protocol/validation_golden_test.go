package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/testenv"
)

// goldenCase is one line of testdata/validation_golden.jsonl, produced by
// testdata/gen_validation_golden.py with pydantic: the body vLLM's
// /tokenize or /detokenize receives and either the error body it answers
// or the model it validates to.
type goldenCase struct {
	Name     string `json:"name"`
	Endpoint string `json:"endpoint"`
	Body     string `json:"body"`
	Result   struct {
		Error *ErrorInfo                 `json:"error"`
		OK    string                     `json:"ok"`
		Dump  map[string]json.RawMessage `json:"dump"`
	} `json:"result"`
}

// loadGolden reads the goldenCase lines of a testdata/*.jsonl file.
func loadGolden(t *testing.T, path string) []goldenCase {
	return testenv.ReadJSONL[goldenCase](t, path)
}

// decodeAs runs the body through the same steps the server takes: Python's
// JSON check for a non-empty body, then the endpoint's decoder. It returns
// the decoded request, or the error body vLLM would send.
func decodeAs(endpoint, body string) (any, *ErrorResponse) {
	data := []byte(body)
	if len(data) > 0 {
		parsed, err := ParseJSONBody(data)
		var syn *JSONSyntaxError
		if errors.As(err, &syn) {
			resp := NewValidationErrorResponse(&pylax.ValidationError{Errors: []pylax.FieldError{syn.FieldError()}})
			return nil, &resp
		}
		if err != nil {
			resp := NewHTTPErrorResponse(400, err.Error())
			return nil, &resp
		}
		data = parsed
	}
	var (
		v   any
		err error
	)
	switch endpoint {
	case "tokenize":
		var r TokenizeRequest
		r, err = DecodeTokenizeRequest(data)
		switch {
		case r.Chat != nil:
			v = r.Chat
		case r.Completion != nil:
			v = r.Completion
		}
	case "detokenize":
		var r DetokenizeRequest
		r, err = DecodeDetokenizeRequest(data)
		v = &r
	}
	if err != nil {
		var verr *pylax.ValidationError
		if !errors.As(err, &verr) {
			panic(err)
		}
		resp := NewValidationErrorResponse(verr)
		return nil, &resp
	}
	return v, nil
}

func TestValidationMatchesPydanticGolden(t *testing.T) {
	cases := loadGolden(t, "testdata/validation_golden.jsonl")
	if len(cases) < 80 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			got, gotErr := decodeAs(c.Endpoint, c.Body)
			if c.Result.Error != nil {
				if gotErr == nil {
					t.Fatalf("body %q: decoded as %T, want error\n%s", c.Body, got, c.Result.Error.Message)
				}
				want, _ := MarshalJSON(c.Result.Error)
				have, _ := MarshalJSON(gotErr.Error)
				if !bytes.Equal(want, have) {
					t.Errorf("body %q\n got: %s\nwant: %s", c.Body, have, want)
				}
				return
			}
			if gotErr != nil {
				t.Fatalf("body %q: unexpected error %s", c.Body, gotErr.Error.Message)
			}
			wantType := map[string]string{
				"TokenizeCompletionRequest": "*protocol.TokenizeCompletionRequest",
				"TokenizeChatRequest":       "*protocol.TokenizeChatRequest",
				"DetokenizeRequest":         "*protocol.DetokenizeRequest",
			}[c.Result.OK]
			if typeName(got) != wantType {
				t.Fatalf("body %q: decoded as %s, want %s", c.Body, typeName(got), wantType)
			}
			// Every field our struct declares must equal pydantic's dump.
			b, _ := MarshalJSON(got)
			var have map[string]json.RawMessage
			if err := json.Unmarshal(b, &have); err != nil {
				t.Fatal(err)
			}
			for k, hv := range have {
				if !jsonEqual(t, hv, c.Result.Dump[k]) {
					t.Errorf("body %q: field %s = %s, want %s", c.Body, k, hv, c.Result.Dump[k])
				}
			}
		})
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return false
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
