package derender

import (
	"regexp"
	"testing"

	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
)

// mistralVocab knows Mistral's v11 tool-call markers, which none of the
// test tokenizers have.
type mistralVocab map[string]int

func (v mistralVocab) TokenToID(s string) (int, bool) { id, ok := v[s]; return id, ok }

// TestToolCallIDs checks the ids a stream's tool calls go out with: the
// mistral parser's own nine alphanumerics (vLLM sends MistralToolCall
// ids, and Mistral's templates check them on the next turn), vLLM's
// chatcmpl-tool-<uuid> for every other machine, including mistral's
// required tool_choice, which vLLM parses with its generic JSON path.
func TestToolCallIDs(t *testing.T) {
	e, _ := benchEngine(t, 0)
	vocab := mistralVocab{"[TOOL_CALLS]": 9, "[ARGS]": 32}
	tools := `[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]`
	mistral9 := regexp.MustCompile(`^[A-Za-z0-9]{9}$`)
	vllmID := regexp.MustCompile(`^chatcmpl-tool-[0-9a-f]{32}$`)
	for _, tc := range []struct {
		name, tool, choice, text string
		want                     *regexp.Regexp
	}{
		{"mistral", "mistral", `"auto"`, `[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}`, mistral9},
		{"mistral required", "mistral", `"required"`, `[{"name": "get_weather", "parameters": {"city": "Paris"}}]`, vllmID},
		{"hermes", "hermes", `"auto"`, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>", vllmID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr, err := protocol.DecodeChatCompletionRequest([]byte(`{"messages": [{"role": "user", "content": "x"}], "tools": ` + tools + `, "tool_choice": ` + tc.choice + `}`))
			if err != nil {
				t.Fatal(err)
			}
			req, err := parserRequest(cr)
			if err != nil {
				t.Fatal(err)
			}
			cfg := parsers.Config{ToolParser: tc.tool, EnableAutoToolChoice: true}
			for _, split := range []int{len(tc.text), 3} {
				p, err := parsers.New(cfg, vocab, req, nil)
				if err != nil {
					t.Fatal(err)
				}
				var state protocol.DerenderStreamState
				var b deltaBuf
				var s deltaStore
				var fromFill, fromDelta []string
				for i := 0; i < len(tc.text); i += split {
					var d parsers.Delta
					p.Push(tc.text[i:min(i+split, len(tc.text))], &d)
					if i+split >= len(tc.text) {
						p.Finish(&d)
					}
					var m protocol.DeltaMessage
					st := state // the two renderings each number the calls
					b.fill(e, p, &d, &state, &m)
					w := e.delta(p, d, &st, &s)
					for _, c := range m.ToolCalls {
						if c.ID != nil {
							fromFill = append(fromFill, *c.ID)
						}
					}
					for _, c := range w.ToolCalls {
						if c.ID != nil {
							fromDelta = append(fromDelta, *c.ID)
						}
					}
				}
				if len(fromFill) != 1 || len(fromDelta) != 1 || !tc.want.MatchString(fromFill[0]) || !tc.want.MatchString(fromDelta[0]) {
					t.Fatalf("%d-byte pushes: ids %q (session) and %q (stream_state), want one each matching %s",
						split, fromFill, fromDelta, tc.want)
				}
			}
		})
	}
}
