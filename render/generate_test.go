package render

import (
	"context"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/protocol"
)

// qwenGenerator renders with the real Qwen3 tokenizer and template, its
// context cut to maxModelLen so that length limits are easy to reach.
func qwenGenerator(t testing.TB, maxModelLen int, cfg GeneratorConfig, rcfg Config) *Generator {
	t.Helper()
	m := *testmodel.Load(t, "qwen3") // only the context length differs
	m.MaxModelLen = maxModelLen
	r, err := New(&m, rcfg)
	if err != nil {
		t.Fatal(err)
	}
	return NewGenerator(r, m.MaxModelLen, cfg)
}

// "What is 2+2?" as Qwen3's template renders it: 15 tokens.
var qwenTwoPlusTwo = []int{151644, 872, 198, 3838, 374, 220, 17, 10, 17, 30, 151645, 198, 151644, 77091, 198}

const twoPlusTwo = `{"messages":[{"role":"user","content":"What is 2+2?"}]`

func TestRenderChatRequest(t *testing.T) {
	g := qwenGenerator(t, 40, GeneratorConfig{}, Config{})
	req, err := protocol.DecodeChatCompletionRequest([]byte(twoPlusTwo + `,"model":"m","stream":true,"stream_options":{"include_usage":true},"cache_salt":"s","priority":-3}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.RenderChat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Request
	if !regexp.MustCompile(`^chatcmpl-[0-9a-f]{32}$`).MatchString(got.RequestID) {
		t.Errorf("request_id = %q", got.RequestID)
	}
	if !reflect.DeepEqual(got.TokenIDs, qwenTwoPlusTwo) {
		t.Errorf("token_ids = %v", got.TokenIDs)
	}
	if *got.SamplingParams.MaxTokens != 40-len(qwenTwoPlusTwo) {
		t.Errorf("max_tokens = %d, want the room left (%d)", *got.SamplingParams.MaxTokens, 40-len(qwenTwoPlusTwo))
	}
	if got.SamplingParams.OutputKind != protocol.OutputKindDelta {
		t.Errorf("output_kind = %d, want DELTA for a stream", got.SamplingParams.OutputKind)
	}
	if got.Model == nil || *got.Model != "m" || !*got.Stream || got.StreamOptions == nil || !*got.StreamOptions.IncludeUsage ||
		*got.CacheSalt != "s" || got.Priority != -3 || got.OutputMode != "tokens" {
		t.Errorf("echoed fields wrong: %+v", got)
	}
	if res.Prompt.Text != "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n" {
		t.Errorf("prompt text = %q", res.Prompt.Text)
	}
}

func TestRenderChatErrors(t *testing.T) {
	tests := []struct {
		name      string
		cfg       GeneratorConfig
		rcfg      Config
		body      string // appended to the two-plus-two request
		wantMsg   string
		wantParam string
	}{
		{name: "beam search", body: `"use_beam_search":true`, wantMsg: "Beam search is not supported by the render endpoint"},
		{name: "auto tool choice without the flags", body: `"tools":[{"type":"function","function":{"name":"f"}}]`,
			wantMsg: `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`},
		{name: "required without a parser", body: `"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required"`,
			wantMsg: `tool_choice="required" requires --tool-call-parser to be set`},
		{name: "named function without a parser", body: `"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"f"}}`,
			cfg: GeneratorConfig{EnableAutoToolChoice: true}, wantMsg: `tool_choice=function "f" requires --tool-call-parser to be set`},
		{name: "a parser without auto tool choice is not used", body: `"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required"`,
			cfg: GeneratorConfig{ToolCallParser: "hermes"}, wantMsg: `tool_choice="required" requires --tool-call-parser to be set`},
		{name: "request template untrusted", body: `"chat_template":"{{ 'x' }}"`,
			wantMsg: "Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template."},
		{name: "template in kwargs untrusted", body: `"chat_template_kwargs":{"chat_template":"x"}`,
			wantMsg: "Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template."},
		{name: "max_tokens above the context", body: `"max_tokens":41`,
			wantMsg:   "max_tokens=41 cannot be greater than max_model_len=max_total_tokens=40. Please request fewer output tokens. (parameter=max_tokens, value=41)",
			wantParam: "max_tokens"},
		{name: "max_completion_tokens named when given", body: `"max_tokens":1,"max_completion_tokens":41`,
			wantMsg:   "max_completion_tokens=41 cannot be greater than max_model_len=max_total_tokens=40. Please request fewer output tokens. (parameter=max_completion_tokens, value=41)",
			wantParam: "max_completion_tokens"},
		{name: "prompt longer than the room left", body: `"max_tokens":30`,
			wantMsg: "This model's maximum context length is 40 tokens. However, you requested 30 output tokens and your prompt contains at least 11 input tokens, " +
				"for a total of at least 41 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=11)",
			wantParam: "input_tokens"},
		{name: "truncation above the input budget", body: `"max_tokens":30,"truncate_prompt_tokens":11`,
			wantMsg:   "truncate_prompt_tokens=11 cannot be greater than max_model_len - max_tokens = 10. Please request a smaller truncation size. (parameter=truncate_prompt_tokens, value=11)",
			wantParam: "truncate_prompt_tokens"},
		{name: "empty render", cfg: GeneratorConfig{TrustRequestChatTemplate: true}, rcfg: Config{TrustRequestChatTemplate: true},
			body: `"chat_template":"{{ '' }}"`, wantMsg: "No token_ids rendered"},
		{name: "template raises", cfg: GeneratorConfig{TrustRequestChatTemplate: true}, rcfg: Config{TrustRequestChatTemplate: true},
			body: `"chat_template":"{{ raise_exception('no way') }}"`, wantMsg: "no way"},
		{name: "sampling params refused", body: `"temperature":5`,
			wantMsg: "temperature must be in [0, 2], got 5.0. (parameter=temperature, value=5.0)", wantParam: "temperature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := qwenGenerator(t, 40, tt.cfg, tt.rcfg)
			req, err := protocol.DecodeChatCompletionRequest([]byte(twoPlusTwo + "," + tt.body + "}"))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			_, err = g.RenderChat(context.Background(), req)
			var bad *BadRequestError
			if !errors.As(err, &bad) {
				t.Fatalf("err = %v, want a BadRequestError", err)
			}
			if bad.Message != tt.wantMsg || bad.Param != tt.wantParam {
				t.Errorf("got  %q (param %q)\nwant %q (param %q)", bad.Message, bad.Param, tt.wantMsg, tt.wantParam)
			}
		})
	}
}

func TestRenderChatTruncation(t *testing.T) {
	g := qwenGenerator(t, 40, GeneratorConfig{}, Config{})
	for _, tt := range []struct {
		body string
		want []int
	}{
		{`"truncate_prompt_tokens":4`, qwenTwoPlusTwo[len(qwenTwoPlusTwo)-4:]},
		{`"truncate_prompt_tokens":4,"truncation_side":"right"`, qwenTwoPlusTwo[:4]},
		// -1 keeps what fits beside max_tokens: 40 - 30 = 10 tokens.
		{`"truncate_prompt_tokens":-1,"max_tokens":30`, qwenTwoPlusTwo[len(qwenTwoPlusTwo)-10:]},
	} {
		req, err := protocol.DecodeChatCompletionRequest([]byte(twoPlusTwo + "," + tt.body + "}"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := g.RenderChat(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", tt.body, err)
		}
		if !reflect.DeepEqual(res.Request.TokenIDs, tt.want) {
			t.Errorf("%s: token_ids = %v, want %v", tt.body, res.Request.TokenIDs, tt.want)
		}
	}
}

func TestRenderCompletion(t *testing.T) {
	g := qwenGenerator(t, 40, GeneratorConfig{}, Config{})
	tests := []struct {
		name    string
		body    string
		want    [][]int
		wantMax []int
		wantErr string
	}{
		{name: "one text", body: `{"prompt":"What is 2+2?"}`, want: [][]int{{3838, 374, 220, 17, 10, 17, 30}}, wantMax: []int{16}},
		{name: "texts", body: `{"prompt":["hello","world"],"max_tokens":5}`, want: [][]int{{14990}, {14615}}, wantMax: []int{5, 5}},
		{name: "token ids", body: `{"prompt":[1,2,3],"max_tokens":null}`, want: [][]int{{1, 2, 3}}, wantMax: []int{16}},
		{name: "lists of token ids", body: `{"prompt":[[1,2],[3]],"max_tokens":38}`, want: [][]int{{1, 2}, {3}}, wantMax: []int{38, 38}},
		{name: "token ids truncated from the left", body: `{"prompt":[1,2,3,4],"truncate_prompt_tokens":2}`, want: [][]int{{3, 4}}, wantMax: []int{16}},
		{name: "suffix", body: `{"prompt":"x","suffix":"y"}`, wantErr: "suffix is not currently supported"},
		{name: "an empty prompt among others", body: `{"prompt":["a",""]}`, wantErr: "No token_ids rendered"},
		{name: "token prompt too long reports its length", body: `{"prompt":[1,2,3,4,5,6],"max_tokens":36}`,
			wantErr: "This model's maximum context length is 40 tokens. However, you requested 36 output tokens and your prompt contains 6 input tokens, " +
				"for a total of 42 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=6)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := protocol.DecodeCompletionRequest([]byte(tt.body))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			got, err := g.RenderCompletion(context.Background(), req)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v\nwant %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d requests, want %d", len(got), len(tt.want))
			}
			for i, gr := range got {
				if !reflect.DeepEqual(gr.TokenIDs, tt.want[i]) || *gr.SamplingParams.MaxTokens != tt.wantMax[i] {
					t.Errorf("prompt %d: token_ids %v max_tokens %d; want %v, %d", i, gr.TokenIDs, *gr.SamplingParams.MaxTokens, tt.want[i], tt.wantMax[i])
				}
				if !regexp.MustCompile(`^cmpl-[0-9a-f]{32}$`).MatchString(gr.RequestID) {
					t.Errorf("request_id = %q", gr.RequestID)
				}
			}
		})
	}
}

// Any decodable chat request renders or is refused with a 400; nothing
// panics and nothing else fails.
func FuzzRenderChatRequest(f *testing.F) {
	for _, s := range []string{
		twoPlusTwo + `}`,
		twoPlusTwo + `,"max_tokens":39,"truncate_prompt_tokens":-1}`,
		twoPlusTwo + `,"logit_bias":{"x":1},"temperature":0,"n":3}`,
		twoPlusTwo + `,"response_format":{"type":"structural_tag","structures":[]},"stop":["ab"],"seed":-1}`,
		`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}],"continue_final_message":true,"add_generation_prompt":false}`,
	} {
		f.Add([]byte(s))
	}
	g := qwenGenerator(f, 40, GeneratorConfig{}, Config{})
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := protocol.DecodeChatCompletionRequest(data)
		if err != nil {
			return
		}
		_, err = g.RenderChat(context.Background(), req)
		var bad *BadRequestError
		if err != nil && !errors.As(err, &bad) {
			t.Fatalf("%q: err = %#v, want nil or a BadRequestError", data, err)
		}
	})
}

// A text longer than the input budget times Qwen3's longest token (128
// characters) is refused before tokenizing, with vLLM's character message.
func TestRenderTextTooLong(t *testing.T) {
	g := qwenGenerator(t, 40, GeneratorConfig{}, Config{})
	if g.maxCharsPerToken != 128 {
		t.Fatalf("maxCharsPerToken = %d, want 128", g.maxCharsPerToken)
	}
	long := strings.Repeat("a", 1300)
	req, err := protocol.DecodeChatCompletionRequest([]byte(`{"messages":[{"role":"user","content":"` + long + `"}],"max_tokens":30}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.RenderChat(context.Background(), req)
	want := "This model's maximum context length is 40 tokens. However, you requested 30 output tokens and your prompt contains 1350 characters " +
		"(more than 1280 characters, which is the upper bound for 10 input tokens). Please reduce the length of the input prompt or the number of " +
		"requested output tokens. (parameter=input_text, value=1350)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	creq, err := protocol.DecodeCompletionRequest([]byte(`{"prompt":"` + long + `","max_tokens":30}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.RenderCompletion(context.Background(), creq)
	want = strings.ReplaceAll(want, "1350", "1300")
	if err == nil || err.Error() != want {
		t.Errorf("completion err = %v\nwant %s", err, want)
	}
	// Characters are counted, not bytes: 1,000 two-byte characters pass the
	// check (and fail on their tokens).
	creq, err = protocol.DecodeCompletionRequest([]byte(`{"prompt":"` + strings.Repeat("é", 1000) + `","max_tokens":30}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.RenderCompletion(context.Background(), creq)
	if err == nil || strings.Contains(err.Error(), "characters") {
		t.Errorf("1,000 two-byte characters: err = %v, want the token-count error", err)
	}
}
