package responses

import (
	"encoding/json"
	"testing"

	"github.com/vrender/vrender/protocol"
)

// Converting an accepted Responses body to its chat request never panics
// and gives a request or an error with a message.
func FuzzConvertToChat(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","max_tokens":5,"system":[{"type":"text","text":"x-anthropic-billing-header: y"}],"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"tool_use","id":"a","name":"f","input":{"x":[1,2.5e3]}},{"type":"tool_result","content":[{"k":true}]}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"image","source":{"type":"url","url":"u"}},{"type":"tool_reference","tool_name":"f"}]}]}]}`,
		`{"input":[{"role":"assistant","content":[{"type":"output_text","text":"a"}]},{"type":"reasoning","summary":[{"text":"s"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}],"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}]}`,
		`{"input":"hi","tool_choice":"required","tools":[{"type":"mcp"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		convert := func(req *protocol.ChatCompletionRequest, err error) {
			if err != nil && err.Error() == "" {
				t.Fatalf("%s: empty error", data)
			}
			if err == nil && req == nil {
				t.Fatalf("%s: no request and no error", data)
			}
		}
		if r, err := DecodeRequest(data); err == nil {
			convert(ToChat(r))
		}
	})
}
