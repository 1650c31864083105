package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// The official Anthropic TypeScript SDK against /v1/messages and the
// official openai Node SDK against /v1/responses, both served by
// `serve --engine sim` with Qwen3 (qwen3 reasoning parser, hermes tool
// parser): create and stream, text, thinking/reasoning, tool use and a
// tool-result turn.

func startReasoningSimServe(t *testing.T) string {
	t.Helper()
	dir := testenv.ModelDir(t, "qwen3")
	addr, _, _ := startServe(t, "--engine", "sim", "--host", "127.0.0.1", "--port", "0", "--served-model-name", "m",
		"--reasoning-parser", "qwen3", "--tool-call-parser", "hermes", "--enable-auto-tool-choice", dir)
	return "http://" + addr
}

type anthropicCall struct {
	Op      string         `json:"op"`
	BaseURL string         `json:"baseURL"`
	Params  map[string]any `json:"params"`
}

type anthropicMessage struct {
	ID         string `json:"id"`
	Role       string `json:"role"`
	StopReason string `json:"stop_reason"`
	Content    []struct {
		Type      string         `json:"type"`
		Text      string         `json:"text"`
		Thinking  string         `json:"thinking"`
		Signature string         `json:"signature"`
		ID        string         `json:"id"`
		Name      string         `json:"name"`
		Input     map[string]any `json:"input"`
	} `json:"content"`
	Usage struct {
		Input  int `json:"input_tokens"`
		Output int `json:"output_tokens"`
	} `json:"usage"`
}

type anthropicResult struct {
	Message  *anthropicMessage `json:"message"`
	Events   []string          `json:"events"`
	Text     string            `json:"text"`
	Thinking string            `json:"thinking"`
	Inputs   []map[string]any  `json:"inputs"`
	Count    *struct {
		InputTokens int `json:"input_tokens"`
	} `json:"count"`
	Error *struct {
		Name    string `json:"name"`
		Status  *int   `json:"status"`
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

// blocks is the message's content as "type:text" strings.
func (m *anthropicMessage) blocks() []string {
	var out []string
	for _, b := range m.Content {
		switch b.Type {
		case "thinking":
			out = append(out, "thinking:"+b.Thinking)
		case "text":
			out = append(out, "text:"+b.Text)
		case "tool_use":
			in, _ := json.Marshal(b.Input)
			out = append(out, "tool_use:"+b.Name+":"+string(in))
		}
	}
	return out
}

var anthropicWeather = map[string]any{
	"name": "get_weather", "description": "Get the current weather for a city",
	"input_schema": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
		"required": []string{"city"}},
}

func TestAnthropicSDKMessages(t *testing.T) {
	base := startReasoningSimServe(t)
	user := []any{map[string]any{"role": "user", "content": "What is the weather in Paris?"}}
	toolParams := map[string]any{"model": "m", "max_tokens": 300, "messages": user, "tools": []any{anthropicWeather}}
	textParams := map[string]any{"model": "m", "max_tokens": 300, "system": "Be brief.",
		"messages": []any{map[string]any{"role": "user", "content": "Hello there"}}}
	calls := []anthropicCall{
		{"create", base, toolParams}, {"stream", base, toolParams},
		{"create", base, textParams}, {"stream", base, textParams},
		{"create", base, map[string]any{"model": "nope", "max_tokens": 5, "messages": user}},
		{"count", base, map[string]any{"model": "m", "messages": user, "tools": []any{anthropicWeather}}},
	}
	res := runAnthropic(t, calls)
	for i := range 4 {
		if res[i].Error != nil || res[i].Message == nil {
			t.Fatalf("call %d: %+v", i, res[i].Error)
		}
	}
	created, streamed := res[0].Message, res[1].Message
	if created.StopReason != "tool_use" || streamed.StopReason != "tool_use" {
		t.Errorf("stop_reason %q / %q, want tool_use", created.StopReason, streamed.StopReason)
	}
	cb, sb := created.blocks(), streamed.blocks()
	if len(cb) != 2 || !strings.HasPrefix(cb[0], "thinking:") || !strings.HasPrefix(cb[1], `tool_use:get_weather:{"city":`) ||
		strings.Join(cb, "|") != strings.Join(sb, "|") {
		t.Errorf("blocks: create %q, stream %q", cb, sb)
	}
	if created.Content[0].Signature == "" || streamed.Content[0].Signature == "" || !strings.HasPrefix(created.Content[1].ID, "chatcmpl-tool-") {
		t.Errorf("thinking signature or tool_use id missing: %+v", created.Content)
	}
	if len(res[1].Inputs) != 1 || res[1].Inputs[0]["city"] == nil || res[1].Thinking != created.Content[0].Thinking {
		t.Errorf("stream helpers: inputs %v, thinking %q", res[1].Inputs, res[1].Thinking)
	}
	if created.Usage != streamed.Usage || created.Usage.Input == 0 || created.Usage.Output == 0 {
		t.Errorf("usage: create %+v, stream %+v", created.Usage, streamed.Usage)
	}
	wantEvents := []string{"message_start", "content_block_start", "content_block_delta:thinking_delta",
		"content_block_delta:signature_delta", "content_block_stop", "content_block_start",
		"content_block_delta:input_json_delta", "content_block_stop", "message_delta", "message_stop"}
	if got := foldRuns(res[1].Events); strings.Join(got, " ") != strings.Join(wantEvents, " ") {
		t.Errorf("stream events %q\nwant %q", got, wantEvents)
	}
	// Text with thinking, created and streamed alike.
	tb, sb2 := res[2].Message.blocks(), res[3].Message.blocks()
	if len(tb) != 2 || !strings.HasPrefix(tb[0], "thinking:") || !strings.HasPrefix(tb[1], "text:") ||
		strings.Join(tb, "|") != strings.Join(sb2, "|") || res[2].Message.StopReason != "end_turn" ||
		"text:"+res[3].Text != tb[1] {
		t.Errorf("text answer: create %q, stream %q (text %q)", tb, sb2, res[3].Text)
	}
	if e := res[4].Error; e == nil || e.Status == nil || *e.Status != 404 || e.Name != "NotFoundError" || e.Type != "NotFoundError" {
		t.Errorf("unknown model: %+v", res[4])
	}
	if c := res[5].Count; c == nil || c.InputTokens != created.Usage.Input {
		t.Errorf("countTokens %+v (%+v), want the tool request's %d input tokens", c, res[5].Error, created.Usage.Input)
	}

	// The tool-result turn: the assistant's thinking and tool_use go back
	// with the user's tool_result.
	asst := map[string]any{"role": "assistant", "content": []any{
		map[string]any{"type": "thinking", "thinking": created.Content[0].Thinking, "signature": created.Content[0].Signature},
		map[string]any{"type": "tool_use", "id": created.Content[1].ID, "name": "get_weather", "input": created.Content[1].Input},
	}}
	result := map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result",
		"tool_use_id": created.Content[1].ID, "content": "22 degrees and sunny"}}}
	turn := map[string]any{"model": "m", "max_tokens": 300, "tools": []any{anthropicWeather},
		"messages": append(append([]any{}, user...), asst, result)}
	res = runAnthropic(t, []anthropicCall{{"create", base, turn}, {"stream", base, turn}})
	for i, r := range res {
		if r.Error != nil || r.Message == nil || len(r.Message.Content) == 0 || r.Message.StopReason == "" {
			t.Errorf("tool-result turn %d: %+v %+v", i, r.Error, r.Message)
		}
	}
	if strings.Join(res[0].Message.blocks(), "|") != strings.Join(res[1].Message.blocks(), "|") {
		t.Errorf("tool-result turn: create %q, stream %q", res[0].Message.blocks(), res[1].Message.blocks())
	}
}

func runAnthropic(t *testing.T, calls []anthropicCall) []anthropicResult {
	t.Helper()
	var res []anthropicResult
	runNodeScript(t, filepath.Join("tools", "js-clients", "anthropic.mjs"), "JS_CLIENTS_MODULES="+testenv.JSClientsModules(t), calls, &res)
	if len(res) != len(calls) {
		t.Fatalf("anthropic client answered %d calls, want %d", len(res), len(calls))
	}
	return res
}

// foldRuns drops repeats of the same consecutive entry.
func foldRuns(s []string) []string {
	var out []string
	for _, v := range s {
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

type respItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

type respResponse struct {
	ID         string     `json:"id"`
	Status     string     `json:"status"`
	OutputText string     `json:"output_text"`
	Output     []respItem `json:"output"`
	Usage      struct {
		Input  int `json:"input_tokens"`
		Output int `json:"output_tokens"`
	} `json:"usage"`
}

func (r *respResponse) items() []string {
	var out []string
	for _, it := range r.Output {
		if it.Type == "function_call" {
			out = append(out, "function_call:"+it.Name+":"+it.Arguments)
			continue
		}
		text := ""
		for _, c := range it.Content {
			text += c.Text
		}
		out = append(out, it.Type+":"+text)
	}
	return out
}

func TestOpenAINodeResponses(t *testing.T) {
	base := startReasoningSimServe(t) + "/v1"
	tool := map[string]any{"type": "function", "name": "get_weather", "description": "Get the current weather for a city",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required": []string{"city"}}, "strict": false}
	text := map[string]any{"model": "m", "input": "Hello there", "instructions": "Be brief.", "reasoning": map[string]any{"effort": "low"}}
	tools := map[string]any{"model": "m", "input": "What is the weather in Paris?", "tools": []any{tool}}
	res := runNode(t, []nodeCall{
		{Op: "responses", BaseURL: base, Params: text}, {Op: "responses_stream", BaseURL: base, Params: text},
		{Op: "responses", BaseURL: base, Params: tools}, {Op: "responses_stream", BaseURL: base, Params: tools},
	})
	var got [4]respResponse
	for i, r := range res {
		if r.Error != nil {
			t.Fatalf("call %d: %+v", i, r.Error)
		}
		if err := json.Unmarshal(r.Result, &got[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range [][]string{{"reasoning:", "message:"}, {"reasoning:", "function_call:get_weather:"}} {
		c, s := got[2*i].items(), got[2*i+1].items()
		if len(c) != len(want) || strings.Join(c, "|") != strings.Join(s, "|") {
			t.Errorf("case %d: create %q, stream %q", i, c, s)
			continue
		}
		for j, w := range want {
			if !strings.HasPrefix(c[j], w) {
				t.Errorf("case %d item %d: %q, want %q…", i, j, c[j], w)
			}
		}
		if got[2*i].Status != "completed" || got[2*i+1].Status != "completed" || got[2*i].Usage != got[2*i+1].Usage {
			t.Errorf("case %d: status %s/%s usage %+v/%+v", i, got[2*i].Status, got[2*i+1].Status, got[2*i].Usage, got[2*i+1].Usage)
		}
	}
	// output_text is the SDK's join of the message text.
	if got[0].OutputText == "" || got[0].OutputText != got[1].OutputText {
		t.Errorf("output_text %q / %q", got[0].OutputText, got[1].OutputText)
	}
	var types []string
	for _, ch := range res[3].Chunks {
		var ev struct {
			Type string `json:"type"`
			Seq  int    `json:"sequence_number"`
		}
		_ = json.Unmarshal(ch, &ev)
		types = append(types, ev.Type)
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.reasoning_text.delta", "response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done",
		"response.output_item.done", "response.completed"}
	if strings.Join(foldRuns(types), " ") != strings.Join(want, " ") {
		t.Errorf("stream events %q\nwant %q", foldRuns(types), want)
	}

	// The tool-result turn: the call and its output go back as items.
	fc := got[2].Output[1]
	turn := map[string]any{"model": "m", "tools": []any{tool}, "input": []any{
		map[string]any{"role": "user", "content": "What is the weather in Paris?"},
		map[string]any{"type": "function_call", "call_id": fc.CallID, "name": fc.Name, "arguments": fc.Arguments},
		map[string]any{"type": "function_call_output", "call_id": fc.CallID, "output": "22 degrees and sunny"},
	}}
	res = runNode(t, []nodeCall{{Op: "responses", BaseURL: base, Params: turn}, {Op: "responses_stream", BaseURL: base, Params: turn}})
	var tr [2]respResponse
	for i, r := range res {
		if r.Error != nil {
			t.Fatalf("tool-result turn %d: %+v", i, r.Error)
		}
		_ = json.Unmarshal(r.Result, &tr[i])
		if tr[i].Status != "completed" || len(tr[i].Output) == 0 {
			t.Errorf("tool-result turn %d: %s", i, r.Result)
		}
	}
	if strings.Join(tr[0].items(), "|") != strings.Join(tr[1].items(), "|") {
		t.Errorf("tool-result turn: create %q, stream %q", tr[0].items(), tr[1].items())
	}
}
