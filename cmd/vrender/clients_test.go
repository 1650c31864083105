package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/testmodel"
)

// The OpenAI endpoints driven by the official clients (openai-go here, the
// openai npm package in clients_node_test.go): `vrender serve` in-process
// with qwen3 + hermes parsers in front of the simulated engine, both on
// loopback. The simulator is in-process too so the tests can see what it
// received and which requests it was asked to abort.

// clientScript is what the simulated engine answers, by prompt substring.
const clientScript = `{"match": "two cities", "text": "<think>\nTwo calls.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n</tool_call>"}
{"match": "weather", "text": "<think>\nThe user wants weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n</tool_call>"}
{"match": "stopme", "text": "<think>\nok\n</think>\n\nAlpha beta gamma; the END marker and more text after it."}
{"match": "dropme", "text": "<think>\nThis will be cut off somewhere in the middle of a long thought.\n</think>\n\nNever.", "fault": {"kind": "drop", "after_tokens": 3}}
{"match": "slowly", "text": "<think>\nSlow thinking goes on and on and on and on and on and on and on and on and on.\n</think>\n\nDone.", "token_latency": "40ms"}
{"default": true, "text": "<think>\nLet me think about 2+2.\n</think>\n\n2+2 = 4. Ünïcödé ✓ 😀"}
`

// Expected answers of the script above, as vLLM's qwen3 + hermes parsers split them
// (qwen3 keeps the blank line after </think> in content).
const (
	wantDefaultContent   = "\n\n2+2 = 4. Ünïcödé ✓ 😀"
	wantDefaultReasoning = "\nLet me think about 2+2.\n"
	wantWeatherArgs      = `{"city": "Paris", "unit": "celsius"}`
	// The stop string "a; th" spans the tokens of "gamma; the".
	clientStop        = "a; th"
	wantStoppedBefore = "\n\nAlpha beta gamm"
)

// weatherTool is the one function the tool tests offer, as JSON for the
// Node client; the Go client builds the same one with its own types.
const weatherToolJSON = `{"type": "function", "function": {"name": "get_weather", "description": "Current weather",
 "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}`

// clientStack is a running vrender in front of a simulated engine.
type clientStack struct {
	baseURL string // vrender's OpenAI base URL, ending in /v1
	sim     *enginesim.Sim
	// downURL is a vrender whose only engine does not answer.
	downURL string
}

func startClientStack(t *testing.T) *clientStack {
	t.Helper()
	dir := testenv.ModelDir(t, "qwen3")
	m := testmodel.Load(t, "qwen3")
	path := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(path, []byte(clientScript), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := enginesim.LoadScript(path, m.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := enginesim.New(m, enginesim.Config{ServedModelName: "qwen", Script: script})
	if err != nil {
		t.Fatal(err)
	}
	es := httptest.NewServer(sim.Handler())
	t.Cleanup(es.Close)

	common := []string{"--host", "127.0.0.1", "--port", "0", "--served-model-name", "qwen",
		"--reasoning-parser", "qwen3", "--tool-call-parser", "hermes", "--enable-auto-tool-choice", dir}
	addr, _, _ := startServe(t, append([]string{"--engine", es.URL}, common...)...)

	// An engine address nothing listens on: take a free port and close it.
	dead := httptest.NewServer(nil)
	deadURL := dead.URL
	dead.Close()
	downAddr, _, _ := startServe(t, append([]string{"--engine", deadURL}, common...)...)
	return &clientStack{baseURL: "http://" + addr + "/v1", sim: sim, downURL: "http://" + downAddr + "/v1"}
}

// waitAbort waits until the simulator has seen an abort of a request whose
// id contains marker.
func (s *clientStack) waitAbort(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, id := range s.sim.Aborts() {
			if strings.Contains(id, marker) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the engine saw no abort of a request containing %q; aborts: %v", marker, s.sim.Aborts())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lastStructuredOutputs returns the structured_outputs of the newest
// generate request the simulator accepted, as JSON ("null" if none).
func (s *clientStack) lastStructuredOutputs(t *testing.T) string {
	t.Helper()
	reqs := s.sim.Requests()
	if len(reqs) == 0 {
		t.Fatal("the engine received no request")
	}
	return testenv.MustJSON(t, reqs[len(reqs)-1].SamplingParams.StructuredOutputs)
}
