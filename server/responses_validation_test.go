package server

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestResponsesValidationBothRoutes replays protocol's pydantic goldens for
// Responses bodies (testdata/responses_validation_golden.jsonl, written by
// gen_responses_validation_golden.py) on /v1/responses/render and on the
// served /v1/responses: each refused body gets the same 400, byte for byte,
// on both routes, and each accepted body is answered.
//
// One accepted body is refused by the conversion instead (see
// docs/compatibility.md): pydantic takes a reasoning item whose summary is
// not a list as a ResponseReasoningItemParam, and vLLM then hands the item
// to its chat parser as a message without a role.
func TestResponsesValidationBothRoutes(t *testing.T) {
	convertRefused := map[string]bool{"input reasoning bad summary": true}
	f, err := os.Open("../protocol/testdata/responses_validation_golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := newOpenAIEnv(t, "")
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var c struct {
			Name   string `json:"name"`
			Body   string `json:"body"`
			Result struct {
				Error json.RawMessage `json:"error"`
			} `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		n++
		// The served model's name, same length of body members.
		body := strings.Replace(c.Body, `"model": "m"`, `"model": "qwen"`, 1)
		for _, route := range []string{"/v1/responses/render", "/v1/responses"} {
			t.Run(c.Name+" "+route, func(t *testing.T) {
				status, got := env.post(t, route, body)
				if convertRefused[c.Name] {
					if status != 400 || !strings.Contains(string(got), `"type":"BadRequestError"`) {
						t.Fatalf("body %s: %d %s", body, status, got)
					}
					return
				}
				if c.Result.Error == nil {
					if status != 200 {
						t.Fatalf("body %s: %d %s", body, status, got)
					}
					return
				}
				want, err := json.Marshal(map[string]json.RawMessage{"error": c.Result.Error})
				if err != nil {
					t.Fatal(err)
				}
				if status != 400 || !jsonEqual(t, got, want) {
					t.Errorf("body %s\n got: %d %s\nwant: 400 %s", body, status, got, want)
				}
			})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 60 {
		t.Fatalf("only %d golden cases", n)
	}
}
