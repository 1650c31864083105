package server

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// validationGolden is one case of protocol's pydantic goldens: a body and
// the error vLLM answers, or none where pydantic accepts it.
type validationGolden struct {
	Name   string `json:"name"`
	Body   string `json:"body"`
	Result struct {
		Error json.RawMessage `json:"error"`
	} `json:"result"`
}

// replayValidationGolden posts every body of the golden file to each route
// (the model renamed to the test server's "qwen") and requires the golden
// 400 body for a refused one. An accepted body must pass validation: it is
// answered, or refused by a later step (the served model's name, sampling
// parameter ranges, the conversion) with that step's error, never
// pydantic's.
func replayValidationGolden(t *testing.T, file string, routes []string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := newOpenAIEnv(t, "")
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var c validationGolden
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		n++
		// Same length of body members: only the name changes.
		body := strings.Replace(strings.Replace(c.Body, `"model": "m"`, `"model": "qwen"`, 1), `"model":"m"`, `"model":"qwen"`, 1)
		for _, route := range routes {
			t.Run(c.Name+" "+route, func(t *testing.T) {
				status, got := env.post(t, route, body)
				switch {
				case c.Result.Error == nil:
					if status != 200 && (status >= 500 || strings.Contains(string(got), "validation error")) {
						t.Fatalf("body %s: %d %s", body, status, got)
					}
				default:
					want, err := json.Marshal(map[string]json.RawMessage{"error": c.Result.Error})
					if err != nil {
						t.Fatal(err)
					}
					if status != 400 || !jsonEqual(t, got, want) {
						t.Errorf("body %s\n got: %d %s\nwant: 400 %s", body, status, got, want)
					}
				}
			})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 60 {
		t.Fatalf("only %d golden cases in %s", n, file)
	}
}

// TestResponsesValidationBothRoutes replays protocol's pydantic goldens for
// Responses bodies (gen_responses_validation_golden.py) on
// /v1/responses/render and on the served /v1/responses: each refused body
// gets the same 400, byte for byte, on both routes, and each accepted body
// passes validation. (One accepted body is refused by the conversion, see
// docs/compatibility.md: pydantic takes a reasoning item whose summary is
// not a list as a ResponseReasoningItemParam, and vLLM then hands the item
// to its chat parser as a message without a role.)
func TestResponsesValidationBothRoutes(t *testing.T) {
	replayValidationGolden(t, "../responses/testdata/responses_validation_golden.jsonl",
		[]string{"/v1/responses/render", "/v1/responses"})
}

// TestMessagesValidationBothRoutes replays the Messages goldens
// (gen_anthropic_golden.py) on /v1/messages/render and the served
// /v1/messages: a body failing validation gets vLLM's OpenAI-shaped 400 on
// both, before the route runs.
func TestMessagesValidationBothRoutes(t *testing.T) {
	replayValidationGolden(t, "../anthropic/testdata/anthropic_validation_golden.jsonl",
		[]string{"/v1/messages/render", "/v1/messages"})
}
