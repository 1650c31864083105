package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// jsCall is one call for tools/js-clients/client.mjs.
type jsCall struct {
	Lib     string `json:"lib"`
	Stream  bool   `json:"stream"`
	BaseURL string `json:"baseURL"`
	Model   string `json:"model"`
	Choice  string `json:"choice"`
}

// jsResult is what client.mjs reports: the calls the library returns and
// its finish reason (the AI SDK's unified one in Finish, the wire's in
// RawFinish).
type jsResult struct {
	Calls     [][2]string `json:"calls"`
	Finish    string      `json:"finish"`
	RawFinish string      `json:"rawFinish"`
	Error     string      `json:"error"`
}

func runJSClients(t *testing.T, calls []jsCall) []jsResult {
	t.Helper()
	var res []jsResult
	runNodeScript(t, filepath.Join("tools", "js-clients", "client.mjs"), "JS_CLIENTS_MODULES="+testenv.JSClientsModules(t), calls, &res)
	if len(res) != len(calls) {
		t.Fatalf("js clients answered %d calls, want %d", len(res), len(calls))
	}
	return res
}

// The Vercel AI SDK (toolChoice 'required' and {type: 'tool'}) and
// LangChain JS (bindTools with tool_choice "required" and a named
// function) get the call from `serve --engine sim` with hermes,
// qwen3_coder and llama3_json, streamed and not. finish_reason is vLLM's:
// tool_calls for required (the AI SDK maps it to 'tool-calls'), stop for a
// named choice.
func TestJSClientsRequiredNamed(t *testing.T) {
	var calls []jsCall
	for _, stack := range toolStacks {
		base := startSimServe(t, stack.model, stack.parser)
		for _, lib := range []string{"ai", "langchain"} {
			for _, choice := range []string{"required", "named"} {
				for _, stream := range []bool{false, true} {
					calls = append(calls, jsCall{Lib: lib, Stream: stream, BaseURL: base, Model: "m", Choice: choice})
				}
			}
		}
	}
	res := runJSClients(t, calls)
	for i, r := range res {
		c := calls[i]
		stack := toolStacks[i/8]
		if r.Error != "" {
			t.Errorf("%s %s %s stream=%v: %s", stack.parser, c.Lib, c.Choice, c.Stream, r.Error)
			continue
		}
		wantRaw, wantFinish := "tool_calls", "tool_calls"
		if c.Lib == "ai" {
			wantFinish = "tool-calls"
		}
		if c.Choice == "named" {
			wantRaw, wantFinish = "stop", "stop"
		}
		if len(r.Calls) != 1 || r.Calls[0][0] != "get_weather" || !strings.Contains(r.Calls[0][1], `"city"`) ||
			r.Finish != wantFinish || r.RawFinish != wantRaw {
			t.Errorf("%s %s %s stream=%v: %+v, want one get_weather call, finish %q (raw %q)",
				stack.parser, c.Lib, c.Choice, c.Stream, r, wantFinish, wantRaw)
		}
		if c.Stream {
			if batch := res[i-1]; len(batch.Calls) != len(r.Calls) || len(r.Calls) > 0 && batch.Calls[0] != r.Calls[0] {
				t.Errorf("%s %s %s: stream calls %v, batch %v", stack.parser, c.Lib, c.Choice, r.Calls, batch.Calls)
			}
		}
	}
}
