package derender

import (
	"strings"
	"testing"

	"github.com/vrender/vrender/protocol"
)

// TestReasoningContentNotHTMLEscaped: --reasoning-field-compat's
// reasoning_content is written as Python's json.dumps writes it, <>& raw,
// like the stream path and the "reasoning" field.
func TestReasoningContentNotHTMLEscaped(t *testing.T) {
	e := &Engine{cfg: Config{ReasoningFieldCompat: true}}
	r := "a <b> & c"
	m := e.message(nil, &r, nil)
	if got := string(m.ReasoningContent); got != `"a <b> & c"` {
		t.Errorf("reasoning_content %s", got)
	}
	body, err := protocol.MarshalJSON(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"reasoning":"a <b> & c","reasoning_content":"a <b> & c"`) {
		t.Errorf("message %s", body)
	}
}
