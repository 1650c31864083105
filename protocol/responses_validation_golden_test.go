package protocol

import (
	"bytes"
	"errors"
	"testing"
)

// TestResponsesValidationMatchesPydanticGolden decodes every body of
// testdata/responses_validation_golden.jsonl (pydantic's answers for vLLM's
// ResponsesRequest over openai-python's types, written by
// gen_responses_validation_golden.py) and requires the same 400 body, byte
// for byte, or a decoded request where pydantic accepted the body.
func TestResponsesValidationMatchesPydanticGolden(t *testing.T) {
	cases := loadGolden(t, "testdata/responses_validation_golden.jsonl")
	if len(cases) < 60 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			r, err := DecodeResponsesRequest([]byte(c.Body))
			if c.Result.Error == nil {
				if err != nil {
					t.Fatalf("body %s: unexpected error %v", c.Body, err)
				}
				if r == nil {
					t.Fatal("nil request")
				}
				return
			}
			var verr *ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("body %s: got %v (%T), want a validation error\n%s", c.Body, err, err, c.Result.Error.Message)
			}
			resp := NewValidationErrorResponse(verr)
			want, _ := MarshalJSON(c.Result.Error)
			have, _ := MarshalJSON(resp.Error)
			if !bytes.Equal(want, have) {
				t.Errorf("body %s\n got: %s\nwant: %s", c.Body, have, want)
			}
		})
	}
}
