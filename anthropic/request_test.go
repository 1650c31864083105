package anthropic

import (
	"reflect"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/protocol"
)

// validationCase is one line of testdata/anthropic_validation_golden.jsonl:
// a body and the error vLLM answers it with (nil when it accepts it).
type validationCase struct {
	Name   string `json:"name"`
	Body   string `json:"body"`
	Result struct {
		Error *protocol.ErrorInfo `json:"error"`
	} `json:"result"`
}

// TestAnthropicRequestGolden checks Messages body validation against
// testdata/anthropic_validation_golden.jsonl, produced with pydantic by
// testdata/gen_anthropic_golden.py from models declared as vLLM declares
// AnthropicMessagesRequest: the exact 400 body for refused bodies.
func TestAnthropicRequestGolden(t *testing.T) {
	n := 0
	for _, c := range testenv.ReadJSONL[validationCase](t, "testdata/anthropic_validation_golden.jsonl") {
		n++
		t.Run(c.Name, func(t *testing.T) {
			_, err := DecodeMessagesRequest([]byte(c.Body))
			if c.Result.Error == nil {
				if err != nil {
					t.Fatalf("refused a body vLLM accepts: %v", err)
				}
				return
			}
			verr, ok := err.(*pylax.ValidationError)
			if !ok {
				t.Fatalf("err = %v, want a validation error", err)
			}
			got := protocol.NewValidationErrorResponse(verr).Error
			if got.Message != c.Result.Error.Message {
				t.Errorf("message\n got: %s\nwant: %s", got.Message, c.Result.Error.Message)
			}
			if !reflect.DeepEqual(got.Param, c.Result.Error.Param) {
				t.Errorf("param = %s, want %s", testenv.MustJSON(t, got.Param), testenv.MustJSON(t, c.Result.Error.Param))
			}
		})
	}
	if n < 20 {
		t.Fatalf("only %d golden cases", n)
	}
}

func TestAnthropicDecodeValues(t *testing.T) {
	r, err := DecodeMessagesRequest([]byte(`{"model":"m","max_tokens":"8","messages":[{"role":"ctx","content":"a"}],` +
		`"tools":[{"name":"f","input_schema":{"properties":{}}},{"name":"g","input_schema":{}},{"name":"h","input_schema":{"type":"object","a":1}}],` +
		`"stop_sequences":null,"stream":1,"temperature":0.5}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.MaxTokens != 8 || r.Messages[0].Role != "user" || !r.Stream || string(text(r.Temperature)) != "0.5" || r.StopSequences != nil {
		t.Errorf("decoded %+v", r)
	}
	want := []string{`{"properties":{},"type":"object"}`, `{"type":"object"}`, `{"type":"object","a":1}`}
	for i, w := range want {
		if got := string(text(r.Tools[i].InputSchema)); got != w {
			t.Errorf("tools[%d].input_schema = %s, want %s", i, got, w)
		}
	}
}
