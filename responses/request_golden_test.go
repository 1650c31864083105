package responses

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/protocol"
)

// validationCase is one line of testdata/responses_validation_golden.jsonl:
// a body and the error vLLM answers it with (nil when it accepts it).
type validationCase struct {
	Name   string `json:"name"`
	Body   string `json:"body"`
	Result struct {
		Error *protocol.ErrorInfo `json:"error"`
	} `json:"result"`
}

// TestResponsesValidationMatchesPydanticGolden decodes every body of
// testdata/responses_validation_golden.jsonl (pydantic's answers for vLLM's
// ResponsesRequest over openai-python's types, written by
// gen_responses_validation_golden.py) and requires the same 400 body, byte
// for byte, or a decoded request where pydantic accepted the body.
func TestResponsesValidationMatchesPydanticGolden(t *testing.T) {
	cases := testenv.ReadJSONL[validationCase](t, "testdata/responses_validation_golden.jsonl")
	if len(cases) < 60 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			r, err := DecodeRequest([]byte(c.Body))
			if c.Result.Error == nil {
				if err != nil {
					t.Fatalf("body %s: unexpected error %v", c.Body, err)
				}
				if r == nil {
					t.Fatal("nil request")
				}
				return
			}
			var verr *pylax.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("body %s: got %v (%T), want a validation error\n%s", c.Body, err, err, c.Result.Error.Message)
			}
			resp := protocol.NewValidationErrorResponse(verr)
			want, _ := protocol.MarshalJSON(c.Result.Error)
			have, _ := protocol.MarshalJSON(resp.Error)
			if !bytes.Equal(want, have) {
				t.Errorf("body %s\n got: %s\nwant: %s", c.Body, have, want)
			}
		})
	}
}

// manyItems is a Responses body whose input holds n copies of item.
func manyItems(item string, n int) []byte {
	return []byte(`{"model":"m","input":[` + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + `]}`)
}

// TestResponsesManyBadItemsCounted: every input item fitting no member of
// the input union adds hundreds of errors; only the ten vLLM's message shows
// are built, the rest counted, so the total is right and memory stays flat.
func TestResponsesManyBadItemsCounted(t *testing.T) {
	_, err := DecodeRequest(manyItems(`{"role":"bogus","content":"x"}`, 1))
	var verr *pylax.ValidationError
	if !errors.As(err, &verr) {
		t.Fatal(err)
	}
	perItem := len(verr.Errors) + verr.Omitted - 1 // the string_type error is reported once
	const n = 2000
	_, err = DecodeRequest(manyItems(`{"role":"bogus","content":"x"}`, n))
	if !errors.As(err, &verr) {
		t.Fatal(err)
	}
	if len(verr.Errors) != pylax.MaxReportedErrors {
		t.Errorf("%d errors built, want %d", len(verr.Errors), pylax.MaxReportedErrors)
	}
	if total := len(verr.Errors) + verr.Omitted; total != 1+n*perItem {
		t.Errorf("%d errors, want %d", total, 1+n*perItem)
	}
	want := fmt.Sprintf("%d validation errors:\n", 1+n*perItem)
	if msg := verr.Message(); !strings.HasPrefix(msg, want) || !strings.HasSuffix(msg, fmt.Sprintf("...and %d more errors", 1+n*perItem-pylax.MaxReportedErrors)) {
		t.Errorf("message %q...", msg[:min(len(msg), 200)])
	}
}

func BenchmarkDecodeResponsesToolItems(b *testing.B) {
	body := manyItems(`{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"o"}`, 100)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := DecodeRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeResponsesBadItems(b *testing.B) {
	body := manyItems(`{"role":"bogus","content":"x"}`, 1000)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := DecodeRequest(body); err == nil {
			b.Fatal("accepted")
		}
	}
}
