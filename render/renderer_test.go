package render

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
)

func userMessage(text string) []protocol.Message {
	b, _ := json.Marshal(map[string]string{"role": "user", "content": text})
	return typedMessages([]json.RawMessage{b})
}

func TestRenderChatTemplateChoice(t *testing.T) {
	base := testmodel.Load(t, "qwen3")
	named := *base
	named.ChatTemplates = map[string]string{
		"default":  "D{{ messages[0].content }}",
		"tool_use": "T{{ (tools or []) | length }}",
	}
	none := *base
	none.ChatTemplates = nil
	multi := *base
	multi.ChatTemplates = map[string]string{"a": "A", "b": "B"}
	tool := decodeTools(t, json.RawMessage(`{"type":"function","function":{"name":"f"}}`))

	tests := []struct {
		name    string
		m       *model.Model
		cfg     Config
		in      ChatInput
		want    string
		wantErr string
	}{
		{"model default", &named, Config{}, ChatInput{Messages: userMessage("x")}, "Dx", ""},
		{"tool_use when tools are given", &named, Config{}, ChatInput{Messages: userMessage("x"), Tools: tool}, "T1", ""},
		{"tools excluded by tool_choice none", &named, Config{ExcludeToolsWhenToolChoiceNone: true},
			ChatInput{Messages: userMessage("x"), Tools: tool, ToolChoice: protocol.ToolChoice{Kind: protocol.ToolChoiceNone}}, "Dx", ""},
		{"server template wins", &named, Config{ChatTemplate: "S{{ messages | length }}"}, ChatInput{Messages: userMessage("x")}, "S1", ""},
		{"untrusted request template", &named, Config{}, ChatInput{Messages: userMessage("x"), ChatTemplate: new("R")}, "",
			"Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template."},
		{"untrusted template in kwargs", &named, Config{}, ChatInput{Messages: userMessage("x"), ChatTemplateKwargs: mustNode(`{"chat_template":"R"}`)}, "",
			"Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template."},
		{"trusted request template", &named, Config{TrustRequestChatTemplate: true}, ChatInput{Messages: userMessage("x"), ChatTemplate: new("R{{ messages[0].content }}")}, "Rx", ""},
		{"request names a model template", &named, Config{TrustRequestChatTemplate: true}, ChatInput{Messages: userMessage("x"), ChatTemplate: new("tool_use")}, "T0", ""},
		{"no template", &none, Config{}, ChatInput{Messages: userMessage("x")}, "",
			"As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one."},
		{"several templates, no default", &multi, Config{}, ChatInput{Messages: userMessage("x")}, "",
			"This model has multiple chat templates with no default specified! Please either pass a chat template or the name of the template you wish to use to the `chat_template` argument. Available template names are ['a', 'b']."},
		{"both prompt flags", &named, Config{}, ChatInput{Messages: userMessage("x"), AddGenerationPrompt: true, ContinueFinalMessage: true}, "",
			"Cannot set both `continue_final_message` and `add_generation_prompt` to True."},
		{"raise_exception message verbatim", &named, Config{ChatTemplate: "{{ raise_exception('No system role, ' + messages[0].role) }}"},
			ChatInput{Messages: userMessage("x")}, "", "No system role, user"},
		{"undefined error as Jinja words it", &named, Config{ChatTemplate: "{{ nope.attr }}"},
			ChatInput{Messages: userMessage("x")}, "", "'nope' is undefined"},
		{"kwargs: defaults, request, reasoning_effort", &named,
			Config{ChatTemplate: "{{ a }}{{ b }}{{ enable_thinking }}{{ reasoning_effort }}", DefaultChatTemplateKwargs: json.RawMessage(`{"a":1,"b":2}`)},
			ChatInput{Messages: userMessage("x"), ChatTemplateKwargs: mustNode(`{"b":3}`), ReasoningEffort: new("none")}, "13Falsenone", ""},
		{"user enable_thinking wins over reasoning_effort", &named, Config{ChatTemplate: "{{ enable_thinking }}"},
			ChatInput{Messages: userMessage("x"), ChatTemplateKwargs: mustNode(`{"enable_thinking":true}`), ReasoningEffort: new("none")}, "True", ""},
		{"tools and documents default to None", &named, Config{ChatTemplate: "{{ tools is none }}{{ documents is none }}{{ bos_token is defined }}{{ eos_token }}"},
			ChatInput{Messages: userMessage("x")}, "TrueTrueFalse<|im_end|>", ""},
		{"tool dump fills defaults", &named, Config{ChatTemplate: "{{ tools | tojson }}"},
			ChatInput{Messages: userMessage("x"), Tools: decodeTools(t, json.RawMessage(`{"function":{"x":1,"name":"f"},"y":2}`))},
			`[{"type": "function", "function": {"name": "f", "description": null, "parameters": null, "x": 1}, "y": 2}]`, ""},
		{"strftime_now reads the clock", &named, Config{ChatTemplate: "{{ strftime_now('%Y-%m-%d') }}", Now: func() time.Time { return time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC) }},
			ChatInput{Messages: userMessage("x")}, "2024-02-29", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(tt.m, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.RenderChat(context.Background(), tt.in)
			if tt.wantErr != "" {
				var br *BadRequestError
				if !errors.As(err, &br) || br.Message != tt.wantErr {
					t.Fatalf("err = %v, want BadRequestError %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Text != tt.want {
				t.Errorf("text = %q, want %q", got.Text, tt.want)
			}
		})
	}
}

func TestTokenizePrompt(t *testing.T) {
	qwen := testmodel.Load(t, "qwen3")
	r, err := New(qwen, Config{})
	if err != nil {
		t.Fatal(err)
	}
	full, err := r.TokenizePrompt("one two three four five", false, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(full) != 5 {
		t.Fatalf("got %d tokens, want 5: %v", len(full), full)
	}
	left, _ := r.TokenizePrompt("one two three four five", false, new(2), "")
	right, _ := r.TokenizePrompt("one two three four five", false, new(2), "right")
	if !slices.Equal(left, full[3:]) || !slices.Equal(right, full[:2]) {
		t.Errorf("left %v right %v of %v", left, right, full)
	}
	if _, err := r.TokenizePrompt("x", false, new(-2), ""); err == nil {
		t.Error("truncate_prompt_tokens -2 accepted")
	}
	if _, err := r.TokenizePrompt("x", false, new(qwen.MaxModelLen+1), ""); err == nil {
		t.Error("truncate_prompt_tokens above max_model_len accepted")
	}

	// DeepSeek-V3's LlamaTokenizerFast adds BOS from add_bos_token although its
	// tokenizer.json post-processor does not.
	ds := testmodel.Load(t, "deepseek_v3")
	rd, err := New(ds, Config{})
	if err != nil {
		t.Fatal(err)
	}
	bos, _ := ds.Tokenizer.TokenToID(ds.TokenizerConfig.BOSToken)
	with, _ := rd.TokenizePrompt("hello", true, nil, "")
	without, _ := rd.TokenizePrompt("hello", false, nil, "")
	if len(with) != len(without)+1 || with[0] != bos || !slices.Equal(with[1:], without) {
		t.Errorf("with special tokens %v, without %v, bos %d", with, without, bos)
	}
}

// TestRenderChatConcurrent renders from many goroutines with one renderer;
// run with -race it checks that requests share no mutable state.
func TestRenderChatConcurrent(t *testing.T) {
	r, err := New(testmodel.Load(t, "qwen3"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	in := benchConversation(t, 12, 20).input()
	in.ContinueFinalMessage, in.AddGenerationPrompt = false, false
	want, err := r.RenderChat(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range 20 {
				got, err := r.RenderChat(context.Background(), in)
				if err == nil && got.Text != want.Text {
					err = errors.New("concurrent render differs")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// mustNode is the tree of a JSON literal of a test table.
func mustNode(s string) *node {
	n, err := parseJSON([]byte(s))
	if err != nil {
		panic(err)
	}
	return n
}

// kwargsNode is chat_template_kwargs as protocol hands it on: the decoded
// object, nil when absent or null.
func kwargsNode(raw []byte) *node {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return mustNode(string(raw))
}
