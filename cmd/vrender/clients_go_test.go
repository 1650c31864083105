package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/shared"

	"github.com/vrender/vrender/internal/testenv"
)

func goClient(baseURL string) openai.Client {
	return openai.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey("none"), option.WithMaxRetries(0))
}

func weatherTool() openai.ChatCompletionToolUnionParam {
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        "get_weather",
		Description: openai.String("Current weather"),
		Parameters: shared.FunctionParameters{
			"type": "object",
			"properties": map[string]any{
				"city": map[string]any{"type": "string"},
				"unit": map[string]any{"type": "string", "enum": []string{"celsius", "fahrenheit"}},
			},
			"required": []string{"city"},
		},
	})
}

func chatParams(prompt string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    "qwen",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
	}
}

// reasoningOf reads vLLM's non-standard "reasoning" field.
func reasoningOf(extra map[string]respjson.Field) string {
	f, ok := extra["reasoning"]
	if !ok {
		return ""
	}
	var s *string
	if err := json.Unmarshal([]byte(f.Raw()), &s); err != nil || s == nil {
		return ""
	}
	return *s
}

// goStream collects a streamed chat with the SDK's accumulator, plus the
// reasoning deltas it does not know about.
type goStream struct {
	acc       openai.ChatCompletionAccumulator
	reasoning map[int64]string
	chunks    int
	roleFirst bool
	err       error
}

func streamChat(ctx context.Context, c openai.Client, p openai.ChatCompletionNewParams) *goStream {
	s := &goStream{reasoning: map[int64]string{}}
	st := c.Chat.Completions.NewStreaming(ctx, p)
	for st.Next() {
		ch := st.Current()
		if s.chunks == 0 && len(ch.Choices) > 0 && ch.Choices[0].Delta.Role == "assistant" {
			s.roleFirst = true
		}
		s.chunks++
		s.acc.AddChunk(ch)
		for _, c := range ch.Choices {
			s.reasoning[c.Index] += reasoningOf(c.Delta.JSON.ExtraFields)
		}
	}
	s.err = st.Err()
	return s
}

func TestOpenAIGoClient(t *testing.T) {
	st := startClientStack(t)
	ctx := context.Background()
	c := goClient(st.baseURL)

	t.Run("models", func(t *testing.T) {
		page, err := c.Models.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) != 1 || page.Data[0].ID != "qwen" {
			t.Fatalf("models = %+v", page.Data)
		}
	})

	t.Run("chat", func(t *testing.T) {
		res, err := c.Chat.Completions.New(ctx, chatParams("What is 2+2?"))
		if err != nil {
			t.Fatal(err)
		}
		ch := res.Choices[0]
		if ch.Message.Content != wantDefaultContent || reasoningOf(ch.Message.JSON.ExtraFields) != wantDefaultReasoning ||
			ch.FinishReason != "stop" {
			t.Errorf("content %q reasoning %q finish %q", ch.Message.Content, reasoningOf(ch.Message.JSON.ExtraFields), ch.FinishReason)
		}
		if res.Usage.CompletionTokens == 0 || res.Usage.TotalTokens != res.Usage.PromptTokens+res.Usage.CompletionTokens {
			t.Errorf("usage = %+v", res.Usage)
		}
	})

	t.Run("chat stream with usage", func(t *testing.T) {
		p := chatParams("What is 2+2?")
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		s := streamChat(ctx, c, p)
		if s.err != nil {
			t.Fatal(s.err)
		}
		if !s.roleFirst {
			t.Error("first chunk does not carry role assistant")
		}
		got := s.acc.Choices[0]
		if got.Message.Content != wantDefaultContent || s.reasoning[0] != wantDefaultReasoning || got.FinishReason != "stop" {
			t.Errorf("stream content %q reasoning %q finish %q", got.Message.Content, s.reasoning[0], got.FinishReason)
		}
		if s.acc.Usage.CompletionTokens == 0 {
			t.Errorf("no usage chunk: %+v", s.acc.Usage)
		}
	})

	toolCases := []struct {
		name       string
		prompt     string
		choice     openai.ChatCompletionToolChoiceOptionUnionParam
		wantCalls  []string // arguments, in order
		structured bool     // the engine request carries structured_outputs
	}{
		{name: "auto single", prompt: "What is the weather in Paris?", choice: openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("auto")},
			wantCalls: []string{wantWeatherArgs}},
		{name: "auto parallel", prompt: "weather in two cities", wantCalls: []string{`{"city": "Paris"}`, `{"city": "Rome"}`}},
		{name: "none", prompt: "What is the weather in Paris?", choice: openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}},
		{name: "required", prompt: "Tell me something.", choice: openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")},
			structured: true},
		{name: "named", prompt: "Tell me something.", structured: true,
			choice: openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"})},
	}
	for _, tc := range toolCases {
		t.Run("tools "+tc.name, func(t *testing.T) {
			p := chatParams(tc.prompt)
			p.Tools = []openai.ChatCompletionToolUnionParam{weatherTool()}
			p.ToolChoice = tc.choice
			res, err := c.Chat.Completions.New(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if so := st.lastStructuredOutputs(t); (so != "null") != tc.structured {
				t.Errorf("engine structured_outputs = %s, want structured %v", so, tc.structured)
			}
			calls := res.Choices[0].Message.ToolCalls
			s := streamChat(ctx, c, p)
			if s.err != nil {
				t.Fatal(s.err)
			}
			streamed := s.acc.Choices[0].Message.ToolCalls
			if tc.structured {
				// The simulator's schema-shaped JSON decides the arguments; the name is fixed.
				if len(calls) == 0 || calls[0].Function.Name != "get_weather" || !strings.Contains(calls[0].Function.Arguments, `"city"`) {
					t.Fatalf("calls = %+v", calls)
				}
			} else if len(calls) != len(tc.wantCalls) {
				t.Fatalf("got %d calls %+v, want %d", len(calls), calls, len(tc.wantCalls))
			}
			for i, want := range tc.wantCalls {
				if calls[i].Function.Name != "get_weather" || calls[i].Function.Arguments != want || !strings.HasPrefix(calls[i].ID, "chatcmpl-tool-") {
					t.Errorf("call %d = %+v, want arguments %s", i, calls[i], want)
				}
			}
			// vLLM keeps "stop" for a named tool_choice (the golden set agrees).
			wantFinish := "stop"
			if len(calls) > 0 && tc.name != "named" {
				wantFinish = "tool_calls"
			}
			if res.Choices[0].FinishReason != wantFinish || s.acc.Choices[0].FinishReason != wantFinish {
				t.Errorf("finish %q (stream %q), want %q", res.Choices[0].FinishReason, s.acc.Choices[0].FinishReason, wantFinish)
			}
			if len(streamed) != len(calls) {
				t.Fatalf("stream has %d calls, batch %d", len(streamed), len(calls))
			}
			for i := range calls {
				if streamed[i].Function.Name != calls[i].Function.Name || streamed[i].Function.Arguments != calls[i].Function.Arguments {
					t.Errorf("stream call %d = %+v, batch %+v", i, streamed[i].Function, calls[i].Function)
				}
			}
			if tc.name == "none" && !strings.Contains(res.Choices[0].Message.Content, "<tool_call>") {
				t.Errorf("tool_choice none: content %q should keep the raw call text", res.Choices[0].Message.Content)
			}
		})
	}

	t.Run("n=2", func(t *testing.T) {
		p := chatParams("What is 2+2?")
		p.N = openai.Int(2)
		res, err := c.Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Choices) != 2 || res.Choices[0].Index != 0 || res.Choices[1].Index != 1 {
			t.Fatalf("choices = %+v", res.Choices)
		}
		s := streamChat(ctx, c, p)
		if s.err != nil || len(s.acc.Choices) != 2 {
			t.Fatalf("stream: %v, %d choices", s.err, len(s.acc.Choices))
		}
		for i := range 2 {
			if s.acc.Choices[i].Message.Content != res.Choices[i].Message.Content {
				t.Errorf("choice %d: stream %q, batch %q", i, s.acc.Choices[i].Message.Content, res.Choices[i].Message.Content)
			}
		}
	})

	t.Run("stop string across tokens", func(t *testing.T) {
		for _, include := range []bool{false, true} {
			p := chatParams("stopme please")
			p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{clientStop}}
			want := wantStoppedBefore
			if include {
				p.SetExtraFields(map[string]any{"include_stop_str_in_output": true})
				want += clientStop
			}
			res, err := c.Chat.Completions.New(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			s := streamChat(ctx, c, p)
			if s.err != nil {
				t.Fatal(s.err)
			}
			for name, ch := range map[string]openai.ChatCompletionChoice{"batch": res.Choices[0], "stream": s.acc.Choices[0]} {
				if ch.Message.Content != want || ch.FinishReason != "stop" {
					t.Errorf("include=%v %s: content %q finish %q, want %q", include, name, ch.Message.Content, ch.FinishReason, want)
				}
			}
			if so := st.sim.Requests(); len(so[len(so)-1].SamplingParams.Stop) != 0 {
				t.Errorf("stop strings reached the engine: %v", so[len(so)-1].SamplingParams.Stop)
			}
		}
	})

	t.Run("echo", func(t *testing.T) {
		// vLLM repeats the final message when it has the response role
		// (continue_final_message: the assistant's own partial answer).
		p := chatParams("What is 2+2?")
		p.Messages = append(p.Messages, openai.AssistantMessage("Partial answer: "))
		p.SetExtraFields(map[string]any{"echo": true, "add_generation_prompt": false, "continue_final_message": true})
		res, err := c.Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		s := streamChat(ctx, c, p)
		if s.err != nil {
			t.Fatal(s.err)
		}
		got, streamed := res.Choices[0].Message.Content, s.acc.Choices[0].Message.Content
		if !strings.HasPrefix(got, "Partial answer: ") || len(got) == len("Partial answer: ") || streamed != got {
			t.Errorf("echo: batch %q, stream %q", got, streamed)
		}
		// A last message of another role echoes nothing.
		p = chatParams("What is 2+2?")
		p.SetExtraFields(map[string]any{"echo": true})
		res, err = c.Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if res.Choices[0].Message.Content != wantDefaultContent {
			t.Errorf("echo of a user message: %q", res.Choices[0].Message.Content)
		}
	})

	t.Run("max_completion_tokens 16", func(t *testing.T) {
		// 16 is SamplingParams' declared default, which the render endpoint
		// leaves out; the engine must still be told.
		p := chatParams("What is 2+2?")
		p.MaxCompletionTokens = openai.Int(16)
		res, err := c.Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if res.Usage.CompletionTokens != 16 || res.Choices[0].FinishReason != "length" {
			t.Errorf("%d tokens, finish %q; want 16, length", res.Usage.CompletionTokens, res.Choices[0].FinishReason)
		}
	})

	t.Run("logprobs", func(t *testing.T) {
		p := chatParams("What is 2+2?")
		p.Logprobs = openai.Bool(true)
		p.TopLogprobs = openai.Int(2)
		res, err := c.Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		lp := res.Choices[0].Logprobs.Content
		if len(lp) == 0 || len(lp) != int(res.Usage.CompletionTokens) {
			t.Fatalf("%d logprobs for %d tokens", len(lp), res.Usage.CompletionTokens)
		}
		for _, e := range lp {
			if len(e.TopLogprobs) != 2 || e.Logprob > 0 {
				t.Fatalf("logprob entry %+v", e)
			}
		}
	})

	errCases := []struct {
		name   string
		url    string
		params func() openai.ChatCompletionNewParams
		status int
	}{
		{name: "unknown model", url: st.baseURL, status: http.StatusNotFound, params: func() openai.ChatCompletionNewParams {
			p := chatParams("hi")
			p.Model = "nope"
			return p
		}},
		{name: "invalid params", url: st.baseURL, status: http.StatusBadRequest, params: func() openai.ChatCompletionNewParams {
			p := chatParams("hi")
			p.TopLogprobs = openai.Int(5) // without logprobs: vLLM refuses
			p.N = openai.Int(0)
			return p
		}},
		{name: "engine down", url: st.downURL, status: http.StatusServiceUnavailable, params: func() openai.ChatCompletionNewParams { return chatParams("hi") }},
	}
	for _, tc := range errCases {
		t.Run("error "+tc.name, func(t *testing.T) {
			tcClient := goClient(tc.url)
			_, err := tcClient.Chat.Completions.New(ctx, tc.params())
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status || apiErr.Message == "" {
				t.Fatalf("err = %v, want an API error with status %d", err, tc.status)
			}
			s := streamChat(ctx, goClient(tc.url), tc.params())
			if !errors.As(s.err, &apiErr) || apiErr.StatusCode != tc.status {
				t.Fatalf("stream err = %v, want an API error with status %d", s.err, tc.status)
			}
		})
	}

	t.Run("engine drops mid-stream", func(t *testing.T) {
		s := streamChat(ctx, c, chatParams("dropme now"))
		if s.err == nil || s.chunks == 0 {
			t.Fatalf("want chunks then an error event, got %d chunks, err %v", s.chunks, s.err)
		}
	})

	t.Run("client disconnect aborts the engine request", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		p := chatParams("think slowly")
		stream := c.Chat.Completions.NewStreaming(ctx, p, option.WithHeader("X-Request-Id", "go-client-disconnect"))
		for n := 0; n < 3 && stream.Next(); n++ {
		}
		cancel()
		stream.Close()
		st.waitAbort(t, "go-client-disconnect")
	})
}

// toolStacks are the parser stacks the issue asks the clients to be tried
// with for required and named tool_choice, each behind `serve --engine sim`
// (the in-process simulator follows the structural tag render builds).
var toolStacks = []struct{ model, parser string }{
	{"qwen3", "hermes"}, {"qwen3", "qwen3_coder"}, {"llama3_1", "llama3_json"},
}

// startSimServe starts `vrender serve --engine sim` for a model and tool
// parser and returns its OpenAI base URL.
func startSimServe(t *testing.T, modelName, parser string) string {
	t.Helper()
	dir := testenv.ModelDir(t, modelName)
	addr, _, _ := startServe(t, "--engine", "sim", "--host", "127.0.0.1", "--port", "0", "--served-model-name", "m",
		"--tool-call-parser", parser, "--enable-auto-tool-choice", dir)
	return "http://" + addr + "/v1"
}

// Required and named tool_choice return the call with every stack,
// streamed and not; finish_reason is tool_calls for required and stop for
// a named choice, as vLLM answers.
func TestOpenAIGoClientRequiredNamedStacks(t *testing.T) {
	ctx := context.Background()
	for _, stack := range toolStacks {
		t.Run(stack.parser, func(t *testing.T) {
			c := goClient(startSimServe(t, stack.model, stack.parser))
			for _, tc := range []struct {
				name, finish string
				choice       openai.ChatCompletionToolChoiceOptionUnionParam
			}{
				{"required", "tool_calls", openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}},
				{"named", "stop", openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_weather"})},
			} {
				t.Run(tc.name, func(t *testing.T) {
					p := chatParams("Tell me something.")
					p.Model = "m"
					p.Tools = []openai.ChatCompletionToolUnionParam{weatherTool()}
					p.ToolChoice = tc.choice
					res, err := c.Chat.Completions.New(ctx, p)
					if err != nil {
						t.Fatal(err)
					}
					calls := res.Choices[0].Message.ToolCalls
					if len(calls) == 0 || calls[0].Function.Name != "get_weather" || !strings.Contains(calls[0].Function.Arguments, `"city"`) {
						t.Fatalf("calls = %+v (content %q)", calls, res.Choices[0].Message.Content)
					}
					s := streamChat(ctx, c, p)
					if s.err != nil {
						t.Fatal(s.err)
					}
					streamed := s.acc.Choices[0].Message.ToolCalls
					if len(streamed) != len(calls) || streamed[0].Function.Name != calls[0].Function.Name ||
						streamed[0].Function.Arguments != calls[0].Function.Arguments {
						t.Fatalf("stream calls %+v, batch %+v", streamed, calls)
					}
					if res.Choices[0].FinishReason != tc.finish || s.acc.Choices[0].FinishReason != tc.finish {
						t.Errorf("finish %q (stream %q), want %q", res.Choices[0].FinishReason, s.acc.Choices[0].FinishReason, tc.finish)
					}
				})
			}
		})
	}
}
