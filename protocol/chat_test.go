package protocol

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
)

// Decoding a chat or completion body never panics, and either succeeds or
// fails with a *ValidationError whose message reads as vLLM's.
func FuzzChatCompletionRequest(f *testing.F) {
	for _, s := range []string{
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"function":{"name":"f"}}}`,
		`{"messages":[],"stop":["a",1],"logit_bias":{"1":"x"},"n":1.5,"seed":1e30,"thinking_token_budget":true}`,
		`{"messages":[],"structured_outputs":{"json":{"type":"object"}},"response_format":{"type":"json_schema"}}`,
		`{"messages":[],"top_logprobs":-3,"prompt_logprobs":"x","stream_options":{"include_usage":1},"stream":0}`,
		`{"prompt":[[1,2],[3]],"max_tokens":null,"vllm_xargs":{"a":[1,"b",{}]},"repetition_detection":{"max_pattern_size":-1}}`,
		`[]`, `null`, `{"messages":{"a":1}}`, `{"prompt":["a",[1]]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return // the server rejects these before decoding
		}
		for _, decode := range []func([]byte) error{
			func(b []byte) error { _, err := DecodeChatCompletionRequest(b); return err },
			func(b []byte) error { _, err := DecodeCompletionRequest(b); return err },
		} {
			err := decode(data)
			if err == nil {
				continue
			}
			var verr *pylax.ValidationError
			if !errors.As(err, &verr) || len(verr.Errors) == 0 {
				t.Fatalf("%q: err = %#v, want a *ValidationError", data, err)
			}
			if msg := verr.Message(); !strings.Contains(msg, " validation error") {
				t.Fatalf("%q: message %q", data, msg)
			}
		}
	})
}

func TestChatCompletionRequestDefaults(t *testing.T) {
	r, err := DecodeChatCompletionRequest([]byte(`{"messages":[{"role":"user","content":"hi"}],"unknown":{"x":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case string(r.ToolChoice.AppendJSON(nil)) != `"none"`, r.ToolChoice.String() != "none", r.ToolChoice.Kind == ToolChoiceNamed:
		t.Errorf("tool_choice = %s", r.ToolChoice.AppendJSON(nil))
	case r.N == nil || *r.N != 1, r.Logprobs == nil || *r.Logprobs, r.TopLogprobs == nil || *r.TopLogprobs != 0:
		t.Errorf("n/logprobs defaults wrong: %+v", r)
	case !r.AddGenerationPrompt, r.ContinueFinalMessage, r.AddSpecialTokens, !r.SkipSpecialTokens, !r.SpacesBetweenSpecial:
		t.Errorf("flag defaults wrong: %+v", r)
	case r.Stop == nil || len(r.Stop) != 0, r.StopTokenIDs == nil || len(r.StopTokenIDs) != 0, r.BadWords == nil:
		t.Errorf("list defaults wrong: %+v", r)
	case r.LengthPenalty != 1, !r.IncludeReasoning, r.ParallelToolCalls == nil || !*r.ParallelToolCalls:
		t.Errorf("other defaults wrong: %+v", r)
	case r.ReturnTokensAsTokenIDs != nil, r.ReturnTokenIDs != nil, r.ReturnTokenOffsets == nil || *r.ReturnTokenOffsets:
		t.Errorf("return_* defaults wrong: %+v", r)
	}
	named, err := DecodeChatCompletionRequest([]byte(`{"messages":[],"tools":[{"function":{"name":"f"}}],"tool_choice":{"function":{"name":"f"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if tc := named.ToolChoice; tc.Kind != ToolChoiceNamed || tc.Name != "f" || tc.String() != "" {
		t.Errorf("named tool choice = %s", tc.AppendJSON(nil))
	}
}

func TestSamplingParamsJSON(t *testing.T) {
	p := NewSamplingParams()
	if b, _ := MarshalJSON(p); string(b) != `{}` {
		t.Errorf("defaults marshal to %s, want {} (msgspec omit_defaults)", b)
	}
	none := (*int)(nil)
	p.MaxTokens = none
	p.Temperature = 1e-5
	p.TopP = 1e16
	p.FrequencyPenalty = 1
	p.LogitBias = []LogitBias{{TokenID: 3, Bias: -0.5}}
	p.ExtraArgs = json.RawMessage(`{"a":1}`)
	b, err := MarshalJSON(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"frequency_penalty":1.0,"temperature":1e-05,"top_p":1e+16,"max_tokens":null,"logit_bias":{"3":-0.5},"extra_args":{"a":1}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestGenerateRequestJSON(t *testing.T) {
	stream := false
	g := GenerateRequest{RequestID: "chatcmpl-1", SamplingParams: NewSamplingParams(), Stream: &stream, OutputMode: OutputModeTokens}
	b, err := MarshalJSON(g)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"request_id":"chatcmpl-1","token_ids":[],"token_offsets":null,"features":null,"content_parts":null,"sampling_params":{},` +
		`"model":null,"reasoning_ended":null,"reasoning_parser_kwargs":null,"return_token_ids":null,"output_mode":"tokens","stream":false,` +
		`"stream_options":null,"cache_salt":null,"priority":0,"kv_transfer_params":null,"ec_transfer_params":null}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestFinalizeErrors(t *testing.T) {
	for _, tt := range []struct {
		edit func(*SamplingParams)
		want string
	}{
		{func(p *SamplingParams) { p.N = 0 }, "n must be at least 1, got 0."},
		{func(p *SamplingParams) { p.N = 20000 }, "n must be at most 16384, got 20000. To increase this limit, set the VLLM_MAX_N_SEQUENCES environment variable."},
		{func(p *SamplingParams) { p.RepetitionPenalty = 0 }, "repetition_penalty must be greater than zero, got 0.0."},
		{func(p *SamplingParams) { p.Temperature = -1 }, "temperature must be non-negative, got -1.0. (parameter=temperature, value=-1.0)"},
		{func(p *SamplingParams) { p.MinP = 2 }, "min_p must be in [0, 1], got 2.0."},
		{func(p *SamplingParams) { v := 0; p.MaxTokens = &v }, "max_tokens must be at least 1, got 0. (parameter=max_tokens, value=0)"},
		{func(p *SamplingParams) { p.MinTokens = -1 }, "min_tokens must be greater than or equal to 0, got -1."},
		{func(p *SamplingParams) { v := -2; p.Logprobs = &v }, "logprobs must be non-negative or -1, got -2. (parameter=logprobs, value=-2)"},
		{func(p *SamplingParams) { v := -3; p.PromptLogprobs = &v }, "prompt_logprobs must be non-negative or -1, got -3. (parameter=prompt_logprobs, value=-3)"},
	} {
		p := NewSamplingParams()
		tt.edit(&p)
		if err := p.Finalize(16384); err == nil || err.Error() != tt.want {
			t.Errorf("err = %v\nwant %s", err, tt.want)
		}
	}
}
