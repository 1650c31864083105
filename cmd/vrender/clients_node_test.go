package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testenv"
)

// nodeCall is one call for tools/openai-node/client.cjs.
type nodeCall struct {
	Op               string         `json:"op"`
	BaseURL          string         `json:"baseURL"`
	Params           map[string]any `json:"params,omitempty"`
	AbortAfterChunks int            `json:"abortAfterChunks,omitempty"`
	Headers          map[string]any `json:"headers,omitempty"`
}

// nodeResult is what client.cjs reports for a call.
type nodeResult struct {
	Result json.RawMessage   `json:"result"`
	Chunks []json.RawMessage `json:"chunks"`
	Error  *struct {
		Name    string `json:"name"`
		Status  *int   `json:"status"`
		Message string `json:"message"`
	} `json:"error"`
}

// nodeChat is the part of a chat completion (or the accumulation of its
// chunks) the tests compare.
type nodeChat struct {
	Content   string
	Reasoning string
	Calls     [][2]string // name, arguments
	Finish    string
	Choices   int
	Usage     int // completion tokens
}

func runNode(t *testing.T, calls []nodeCall) []nodeResult {
	t.Helper()
	mod := filepath.Join(testenv.OpenAINodeModules(t), "openai")
	var res []nodeResult
	runNodeScript(t, filepath.Join("tools", "openai-node", "client.cjs"), "OPENAI_MODULE="+mod, calls, &res)
	if len(res) != len(calls) {
		t.Fatalf("node client answered %d calls, want %d", len(res), len(calls))
	}
	return res
}

// runNodeScript runs the repository's node script with env added, calls as
// JSON on stdin, and decodes its stdout into out.
func runNodeScript(t *testing.T, script, env string, calls, out any) {
	t.Helper()
	node := testenv.Node(t)
	in, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(testenv.RepoRoot(t), script))
	cmd.Env = append(cmd.Environ(), env)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, stderr.String())
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		t.Fatalf("%s output (%v): %s", script, err, stdout)
	}
}

// chatOf reads a non-streaming answer, or accumulates chunks as a client would.
func chatOf(t *testing.T, r nodeResult) nodeChat {
	t.Helper()
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		Index    int `json:"index"`
		Function fn  `json:"function"`
	}
	type msg struct {
		Content   *string `json:"content"`
		Reasoning *string `json:"reasoning"`
		ToolCalls []call  `json:"tool_calls"`
	}
	type choice struct {
		Index   int     `json:"index"`
		Message msg     `json:"message"`
		Delta   msg     `json:"delta"`
		Finish  *string `json:"finish_reason"`
	}
	type body struct {
		Choices []choice `json:"choices"`
		Usage   *struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	var out nodeChat
	add := func(m msg, isDelta bool) {
		if m.Content != nil {
			out.Content += *m.Content
		}
		if m.Reasoning != nil {
			out.Reasoning += *m.Reasoning
		}
		for _, c := range m.ToolCalls {
			if !isDelta {
				out.Calls = append(out.Calls, [2]string{c.Function.Name, c.Function.Arguments})
				continue
			}
			for len(out.Calls) <= c.Index {
				out.Calls = append(out.Calls, [2]string{})
			}
			out.Calls[c.Index][0] += c.Function.Name
			out.Calls[c.Index][1] += c.Function.Arguments
		}
	}
	seen := map[int]bool{}
	take := func(raw json.RawMessage, isDelta bool) {
		var b body
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Fatalf("decode %s: %v", raw, err)
		}
		if b.Usage != nil {
			out.Usage = b.Usage.CompletionTokens
		}
		for _, c := range b.Choices {
			seen[c.Index] = true
			if c.Index != 0 {
				continue
			}
			if isDelta {
				add(c.Delta, true)
			} else {
				add(c.Message, false)
			}
			if c.Finish != nil {
				out.Finish = *c.Finish
			}
		}
	}
	if r.Result != nil {
		take(r.Result, false)
	}
	for _, c := range r.Chunks {
		take(c, true)
	}
	out.Choices = len(seen)
	return out
}

func TestOpenAINodeClient(t *testing.T) {
	st := startClientStack(t)
	var tool map[string]any
	if err := json.Unmarshal([]byte(weatherToolJSON), &tool); err != nil {
		t.Fatal(err)
	}
	chat := func(prompt string, extra map[string]any) map[string]any {
		p := map[string]any{"model": "qwen", "messages": []any{map[string]any{"role": "user", "content": prompt}}}
		for k, v := range extra {
			p[k] = v
		}
		return p
	}
	tools := func(choice any) map[string]any {
		m := map[string]any{"tools": []any{tool}}
		if choice != nil {
			m["tool_choice"] = choice
		}
		return m
	}
	named := map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}}

	type check func(t *testing.T, r nodeResult)
	wantChat := func(want nodeChat) check {
		return func(t *testing.T, r nodeResult) {
			if r.Error != nil {
				t.Fatalf("error %+v", *r.Error)
			}
			got := chatOf(t, r)
			got.Usage, got.Choices = 0, 0
			if testenv.MustJSON(t, got) != testenv.MustJSON(t, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		}
	}
	wantStatus := func(status int) check {
		return func(t *testing.T, r nodeResult) {
			if r.Error == nil || r.Error.Status == nil || *r.Error.Status != status || r.Error.Message == "" {
				t.Fatalf("want an API error with status %d, got %+v", status, r)
			}
		}
	}
	deflt := nodeChat{Content: wantDefaultContent, Reasoning: wantDefaultReasoning, Finish: "stop"}
	weather := nodeChat{Reasoning: "\nThe user wants weather.\n", Calls: [][2]string{{"get_weather", wantWeatherArgs}}, Finish: "tool_calls"}
	two := nodeChat{Reasoning: "\nTwo calls.\n", Calls: [][2]string{{"get_weather", `{"city": "Paris"}`}, {"get_weather", `{"city": "Rome"}`}},
		Finish: "tool_calls"}
	cases := []struct {
		name  string
		call  nodeCall
		check check
	}{
		{name: "models", call: nodeCall{Op: "models"}, check: func(t *testing.T, r nodeResult) {
			if r.Error != nil || !strings.Contains(string(r.Result), `"id":"qwen"`) {
				t.Fatalf("models: %+v %s", r.Error, r.Result)
			}
		}},
		{name: "chat", call: nodeCall{Op: "chat", Params: chat("What is 2+2?", nil)}, check: wantChat(deflt)},
		{name: "chat stream", call: nodeCall{Op: "chat_stream", Params: chat("What is 2+2?", nil)}, check: wantChat(deflt)},
		{name: "chat stream usage", call: nodeCall{Op: "chat_stream", Params: chat("What is 2+2?",
			map[string]any{"stream_options": map[string]any{"include_usage": true}})}, check: func(t *testing.T, r nodeResult) {
			if got := chatOf(t, r); got.Usage == 0 || got.Content != wantDefaultContent {
				t.Fatalf("no usage or wrong content: %+v", got)
			}
		}},
		{name: "tool auto", call: nodeCall{Op: "chat", Params: chat("What is the weather in Paris?", tools("auto"))}, check: wantChat(weather)},
		{name: "tool auto stream", call: nodeCall{Op: "chat_stream", Params: chat("What is the weather in Paris?", tools(nil))}, check: wantChat(weather)},
		{name: "parallel tools", call: nodeCall{Op: "chat", Params: chat("weather in two cities", tools(nil))}, check: wantChat(two)},
		{name: "parallel tools stream", call: nodeCall{Op: "chat_stream", Params: chat("weather in two cities", tools(nil))}, check: wantChat(two)},
		{name: "tool_choice none", call: nodeCall{Op: "chat_stream", Params: chat("What is the weather in Paris?", tools("none"))},
			check: func(t *testing.T, r nodeResult) {
				if got := chatOf(t, r); len(got.Calls) != 0 || !strings.Contains(got.Content, "<tool_call>") || got.Finish != "stop" {
					t.Fatalf("tool_choice none: %+v", got)
				}
			}},
		{name: "tool_choice required", call: nodeCall{Op: "chat_stream", Params: chat("Tell me something.", tools("required"))},
			check: func(t *testing.T, r nodeResult) {
				if got := chatOf(t, r); len(got.Calls) == 0 || got.Calls[0][0] != "get_weather" || got.Finish != "tool_calls" {
					t.Fatalf("tool_choice required: %+v", got)
				}
			}},
		{name: "tool_choice named", call: nodeCall{Op: "chat", Params: chat("Tell me something.", tools(named))},
			check: func(t *testing.T, r nodeResult) {
				if got := chatOf(t, r); len(got.Calls) != 1 || got.Calls[0][0] != "get_weather" || !strings.Contains(got.Calls[0][1], `"city"`) {
					t.Fatalf("tool_choice named: %+v", got)
				}
			}},
		{name: "n=2", call: nodeCall{Op: "chat_stream", Params: chat("What is 2+2?", map[string]any{"n": 2})},
			check: func(t *testing.T, r nodeResult) {
				if got := chatOf(t, r); got.Choices != 2 || got.Content != wantDefaultContent {
					t.Fatalf("n=2: %+v", got)
				}
			}},
		{name: "stop across tokens", call: nodeCall{Op: "chat_stream", Params: chat("stopme please", map[string]any{"stop": []string{clientStop}})},
			check: wantChat(nodeChat{Content: wantStoppedBefore, Reasoning: "\nok\n", Finish: "stop"})},
		{name: "stop included", call: nodeCall{Op: "chat", Params: chat("stopme please",
			map[string]any{"stop": clientStop, "include_stop_str_in_output": true})},
			check: wantChat(nodeChat{Content: wantStoppedBefore + clientStop, Reasoning: "\nok\n", Finish: "stop"})},
		{name: "logprobs", call: nodeCall{Op: "chat", Params: chat("What is 2+2?", map[string]any{"logprobs": true, "top_logprobs": 3})},
			check: func(t *testing.T, r nodeResult) {
				var b struct {
					Choices []struct {
						Logprobs struct {
							Content []struct {
								Top []json.RawMessage `json:"top_logprobs"`
							} `json:"content"`
						} `json:"logprobs"`
					} `json:"choices"`
				}
				if err := json.Unmarshal(r.Result, &b); err != nil || len(b.Choices) != 1 || len(b.Choices[0].Logprobs.Content) == 0 ||
					len(b.Choices[0].Logprobs.Content[0].Top) != 3 {
					t.Fatalf("logprobs: %v %s", err, r.Result)
				}
			}},
		{name: "unknown model", call: nodeCall{Op: "chat", Params: map[string]any{"model": "nope", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}},
			check: wantStatus(404)},
		{name: "invalid params", call: nodeCall{Op: "chat", Params: chat("hi", map[string]any{"temperature": -1})}, check: wantStatus(400)},
		{name: "engine down", call: nodeCall{Op: "chat", BaseURL: st.downURL, Params: chat("hi", nil)}, check: wantStatus(503)},
		{name: "engine down stream", call: nodeCall{Op: "chat_stream", BaseURL: st.downURL, Params: chat("hi", nil)}, check: wantStatus(503)},
		{name: "engine drops mid-stream", call: nodeCall{Op: "chat_stream", Params: chat("dropme now", nil)},
			check: func(t *testing.T, r nodeResult) {
				if len(r.Chunks) == 0 || r.Error == nil {
					t.Fatalf("want chunks then an error, got %d chunks, error %+v", len(r.Chunks), r.Error)
				}
			}},
		{name: "client disconnect", call: nodeCall{Op: "chat_stream", AbortAfterChunks: 2,
			Params: chat("think slowly", nil), Headers: map[string]any{"X-Request-Id": "node-client-disconnect"}},
			check: func(t *testing.T, r nodeResult) {
				if len(r.Chunks) != 2 {
					t.Fatalf("want 2 chunks before the abort, got %d (%+v)", len(r.Chunks), r.Error)
				}
			}},
	}
	calls := make([]nodeCall, len(cases))
	for i, c := range cases {
		calls[i] = c.call
		if calls[i].BaseURL == "" {
			calls[i].BaseURL = st.baseURL
		}
	}
	results := runNode(t, calls)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.check(t, results[i]) })
	}
	st.waitAbort(t, "node-client-disconnect")
}

// The openai npm client gets the call for required and named tool_choice
// with every stack (toolStacks), streamed and not; finish_reason is
// tool_calls for required and stop for a named choice, as vLLM answers.
func TestOpenAINodeClientRequiredNamedStacks(t *testing.T) {
	var tool map[string]any
	if err := json.Unmarshal([]byte(weatherToolJSON), &tool); err != nil {
		t.Fatal(err)
	}
	named := map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}}
	type want struct {
		choice any
		finish string
	}
	wants := []want{{"required", "tool_calls"}, {named, "stop"}}
	var calls []nodeCall
	for _, stack := range toolStacks {
		base := startSimServe(t, stack.model, stack.parser)
		for _, w := range wants {
			params := map[string]any{"model": "m", "tools": []any{tool}, "tool_choice": w.choice,
				"messages": []any{map[string]any{"role": "user", "content": "Tell me something."}}}
			calls = append(calls, nodeCall{Op: "chat", BaseURL: base, Params: params},
				nodeCall{Op: "chat_stream", BaseURL: base, Params: params})
		}
	}
	res := runNode(t, calls)
	for i, r := range res {
		stack, w := toolStacks[i/(2*len(wants))], wants[i/2%len(wants)]
		got := chatOf(t, r)
		if len(got.Calls) != 1 || got.Calls[0][0] != "get_weather" || !strings.Contains(got.Calls[0][1], `"city"`) || got.Finish != w.finish {
			t.Errorf("%s %s %v: %+v, want one get_weather call and finish %q", stack.parser, calls[i].Op, w.choice, got, w.finish)
		}
		if i%2 == 1 {
			if batch := chatOf(t, res[i-1]); !reflect.DeepEqual(batch.Calls, got.Calls) {
				t.Errorf("%s %v: stream calls %v, batch %v", stack.parser, w.choice, got.Calls, batch.Calls)
			}
		}
	}
}
