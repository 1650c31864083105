package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/internal/testmodel"
)

// What engine-sim's Harmony answers parse to (enginesim/harmony.go).
const (
	gptossReasoning = "The user wants a reply from the simulated engine. I will keep it short and answer directly."
	gptossAfterTool = "I called the tool and received its result. Based on it, the answer is ready."
)

var gptossAnswers = []string{
	"This is the simulated engine's answer. It is deterministic for a given seed.",
	"Hello! The simulated engine answers every question the same way, briefly.",
	"Here is a short reply from the simulated engine, ending with its EOS token.",
}

// startGptossServe is `vrender serve --engine sim` on the gpt-oss model as
// vLLM's gpt-oss recipe starts it: --tool-call-parser openai
// --enable-auto-tool-choice, the reasoning parser left to its gpt-oss
// default (openai_gptoss).
func startGptossServe(t *testing.T) string {
	t.Helper()
	dir := testenv.ModelDir(t, "gptoss")
	addr, _, _ := startServe(t, "--engine", "sim", "--host", "127.0.0.1", "--port", "0", "--served-model-name", "gpt-oss",
		"--tool-call-parser", "openai", "--enable-auto-tool-choice", dir)
	return "http://" + addr + "/v1"
}

func gptossParams(prompt string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    "gpt-oss",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
	}
}

// TestOpenAIGoClientGptOss: /v1/chat/completions over engine-sim speaking
// Harmony, rendered and parsed as vLLM does for gpt-oss; every answer
// streamed and not, the stream adding up to the batch answer.
func TestOpenAIGoClientGptOss(t *testing.T) {
	ctx := context.Background()
	c := goClient(startGptossServe(t))
	type want struct {
		content   []string // any of these
		reasoning string
		call      string // tool name, "" for none
		args      string
		finish    string
	}
	toolsParams := func(p openai.ChatCompletionNewParams) openai.ChatCompletionNewParams {
		p.Tools = []openai.ChatCompletionToolUnionParam{weatherTool()}
		return p
	}
	followUp := toolsParams(gptossParams("Weather in Paris?"))
	followUp.Messages = append(followUp.Messages,
		openai.ChatCompletionMessageParamUnion{OfAssistant: &openai.ChatCompletionAssistantMessageParam{
			ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID: "call_1", Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}}}},
		openai.ToolMessage(`{"temp_c": 21}`, "call_1"))
	required := toolsParams(gptossParams("Tell me something."))
	required.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}
	named := toolsParams(gptossParams("Tell me something."))
	named.ToolChoice = openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"})
	none := toolsParams(gptossParams("Weather in Paris?"))
	none.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}
	effort := gptossParams("What is 2+2?")
	effort.ReasoningEffort = "high"
	for _, tc := range []struct {
		name string
		p    openai.ChatCompletionNewParams
		want want
	}{
		{"reasoning and content", gptossParams("What is 2+2?"), want{content: gptossAnswers, reasoning: gptossReasoning, finish: "stop"}},
		{"reasoning_effort high", effort, want{content: gptossAnswers, reasoning: gptossReasoning, finish: "stop"}},
		{"auto tool call", toolsParams(gptossParams("Weather in Paris?")), want{reasoning: gptossReasoning, call: "get_weather", args: `{"city": "sim"}`, finish: "tool_calls"}},
		{"answer after the tool result", followUp, want{content: []string{gptossAfterTool}, reasoning: gptossReasoning, finish: "stop"}},
		{"required", required, want{reasoning: gptossReasoning, call: "get_weather", args: `{"city": "sim"}`, finish: "tool_calls"}},
		// The model still calls (the tools are rendered); vLLM drops the call
		// and has no content for it.
		{"tool_choice none", none, want{content: []string{""}, reasoning: gptossReasoning, finish: "stop"}},
		{"named", named, want{reasoning: gptossReasoning, call: "get_weather", args: `{"city": "sim"}`, finish: "stop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.Chat.Completions.New(ctx, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			ch := res.Choices[0]
			msg := ch.Message
			if got := reasoningOf(msg.JSON.ExtraFields); got != tc.want.reasoning {
				t.Errorf("reasoning %q, want %q", got, tc.want.reasoning)
			}
			if tc.want.content != nil && !slices.Contains(tc.want.content, msg.Content) {
				t.Errorf("content %q, want one of %q", msg.Content, tc.want.content)
			}
			if tc.want.call == "" && len(msg.ToolCalls) != 0 {
				t.Errorf("tool calls %+v, want none", msg.ToolCalls)
			}
			if tc.want.call != "" {
				if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != tc.want.call || msg.ToolCalls[0].Function.Arguments != tc.want.args ||
					!strings.HasPrefix(msg.ToolCalls[0].ID, "chatcmpl-tool-") {
					t.Errorf("tool calls %+v, want %s(%s)", msg.ToolCalls, tc.want.call, tc.want.args)
				}
				if msg.Content != "" {
					t.Errorf("content %q next to a tool call", msg.Content)
				}
			}
			if ch.FinishReason != tc.want.finish {
				t.Errorf("finish %q, want %q", ch.FinishReason, tc.want.finish)
			}
			s := streamChat(ctx, c, tc.p)
			if s.err != nil {
				t.Fatal(s.err)
			}
			sm := s.acc.Choices[0].Message
			if s.reasoning[0] != reasoningOf(msg.JSON.ExtraFields) || sm.Content != msg.Content || s.acc.Choices[0].FinishReason != ch.FinishReason {
				t.Errorf("stream reasoning %q content %q finish %q; batch %q %q %q", s.reasoning[0], sm.Content, s.acc.Choices[0].FinishReason,
					reasoningOf(msg.JSON.ExtraFields), msg.Content, ch.FinishReason)
			}
			if len(sm.ToolCalls) != len(msg.ToolCalls) {
				t.Fatalf("stream calls %+v, batch %+v", sm.ToolCalls, msg.ToolCalls)
			}
			for i := range sm.ToolCalls {
				if sm.ToolCalls[i].Function.Name != msg.ToolCalls[i].Function.Name || sm.ToolCalls[i].Function.Arguments != msg.ToolCalls[i].Function.Arguments {
					t.Errorf("stream call %d %+v, batch %+v", i, sm.ToolCalls[i].Function, msg.ToolCalls[i].Function)
				}
			}
		})
	}

	t.Run("reasoning_effort none refused as vLLM does", func(t *testing.T) {
		p := gptossParams("hi")
		p.ReasoningEffort = "none"
		_, err := c.Chat.Completions.New(ctx, p)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest ||
			!strings.Contains(apiErr.Message, "Harmony does not support reasoning_effort='none'") {
			t.Fatalf("err %v, want 400 Harmony does not support reasoning_effort='none'", err)
		}
	})
}

// TestOpenAINodeClientGptOss: the official openai npm client against the
// same server, streamed and not.
func TestOpenAINodeClientGptOss(t *testing.T) {
	base := startGptossServe(t)
	var tool map[string]any
	if err := json.Unmarshal([]byte(weatherToolJSON), &tool); err != nil {
		t.Fatal(err)
	}
	plain := map[string]any{"model": "gpt-oss", "messages": []any{map[string]any{"role": "user", "content": "What is 2+2?"}}}
	tools := map[string]any{"model": "gpt-oss", "tools": []any{tool},
		"messages": []any{map[string]any{"role": "user", "content": "Weather in Paris?"}}}
	calls := []nodeCall{
		{Op: "chat", BaseURL: base, Params: plain}, {Op: "chat_stream", BaseURL: base, Params: plain},
		{Op: "chat", BaseURL: base, Params: tools}, {Op: "chat_stream", BaseURL: base, Params: tools},
	}
	res := runNode(t, calls)
	for i, r := range res {
		got := chatOf(t, r)
		if got.Reasoning != gptossReasoning {
			t.Errorf("%d %s: reasoning %q", i, calls[i].Op, got.Reasoning)
		}
		if i < 2 && (!slices.Contains(gptossAnswers, got.Content) || len(got.Calls) != 0 || got.Finish != "stop") {
			t.Errorf("%d %s: %+v, want a default answer", i, calls[i].Op, got)
		}
		if i >= 2 && (len(got.Calls) != 1 || got.Calls[0][0] != "get_weather" || got.Finish != "tool_calls") {
			t.Errorf("%d %s: %+v, want one get_weather call", i, calls[i].Op, got)
		}
		if i%2 == 1 {
			batch := chatOf(t, res[i-1])
			batch.Usage, got.Usage = 0, 0
			if !reflect.DeepEqual(batch, got) {
				t.Errorf("%d: stream %+v, batch %+v", i, got, batch)
			}
		}
	}
}

// TestServeGptOssRenderRoutes: over HTTP, /v1/chat/completions/render gives
// openai/harmony's test_render_functions_with_parameters ids (as its tests
// encode the golden) for that conversation, and /tokenize's chat form is
// vLLM's chat-template refusal.
func TestServeGptOssRenderRoutes(t *testing.T) {
	t.Setenv("VLLM_SYSTEM_START_DATE", "2025-06-28")
	base := strings.TrimSuffix(startGptossServe(t), "/v1")
	root := testenv.RepoRoot(t)
	golden, err := os.ReadFile(filepath.Join(root, "render", "harmony", "testdata", "test_render_functions_with_parameters.txt"))
	if err != nil {
		t.Fatal(err)
	}
	request, err := os.ReadFile(filepath.Join(root, "render", "harmony", "testdata", "vllm_functions_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	tok := testmodel.Tokenizer(t, "gptoss")
	post := func(path string, body []byte) (int, []byte) {
		t.Helper()
		res, err := http.Post(base+path, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, b
	}
	status, body := post("/v1/chat/completions/render", request)
	var gen struct {
		TokenIDs       []int `json:"token_ids"`
		SamplingParams struct {
			StopTokenIDs []int `json:"stop_token_ids"`
		} `json:"sampling_params"`
	}
	if err := json.Unmarshal(body, &gen); status != http.StatusOK || err != nil {
		t.Fatalf("render: %d %s", status, body)
	}
	if want := tok.Encode(string(golden), false); !slices.Equal(gen.TokenIDs, want) {
		t.Errorf("render ids:\n got %v\nwant %v", gen.TokenIDs, want)
	}
	if len(gen.SamplingParams.StopTokenIDs) != 0 {
		t.Errorf("stop_token_ids %v: vLLM adds none for gpt-oss", gen.SamplingParams.StopTokenIDs)
	}
	status, body = post("/tokenize", []byte(`{"messages":[{"role":"user","content":"hi"}]}`))
	if status != http.StatusBadRequest || !strings.Contains(string(body), "default chat template is no longer allowed") {
		t.Errorf("tokenize chat: %d %s", status, body)
	}
}
