package render

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
)

// fixtureModel is a model whose generation_config.json is Qwen3's sampling
// block (temperature 0.6, top_k 20, top_p 0.95).
func fixtureModel(t *testing.T) *model.Model {
	t.Helper()
	data, err := os.ReadFile("testdata/sampling/generation_config.json")
	if err != nil {
		t.Fatal(err)
	}
	var gc map[string]any
	if err := json.Unmarshal(data, &gc); err != nil {
		t.Fatal(err)
	}
	return &model.Model{GenerationConfig: gc, MaxModelLen: 100}
}

func TestLoadSamplingDefaults(t *testing.T) {
	tests := []struct {
		name     string
		source   string
		override string
		want     SamplingDefaults
		wantErr  bool
	}{
		{name: "auto reads the model's generation config", source: "auto",
			want: SamplingDefaults{Temperature: new(0.6), TopK: new(20), TopP: new(0.95)}},
		{name: "empty source is auto", source: "",
			want: SamplingDefaults{Temperature: new(0.6), TopK: new(20), TopP: new(0.95)}},
		{name: "vllm ignores the model's", source: "vllm", want: SamplingDefaults{}},
		{name: "directory replaces the model's and caps max_tokens", source: "testdata/sampling/genconfig_dir",
			want: SamplingDefaults{RepetitionPenalty: new(1.05), Temperature: new(0.7), MinP: new(0.05), MaxTokens: new(128), OverrideMaxTokens: new(128)}},
		{name: "directory read like the model's", source: "testdata/sampling",
			want: SamplingDefaults{Temperature: new(0.6), TopK: new(20), TopP: new(0.95)}},
		{name: "missing directory gives no defaults", source: "testdata/sampling/nonexistent", want: SamplingDefaults{}},
		{name: "override wins over the model's", source: "auto", override: `{"temperature":0.1,"max_new_tokens":50}`,
			want: SamplingDefaults{Temperature: new(0.1), TopK: new(20), TopP: new(0.95), MaxTokens: new(50), OverrideMaxTokens: new(50)}},
		{name: "override applies with vllm", source: "vllm", override: `{"top_k":5,"min_p":0.2}`,
			want: SamplingDefaults{TopK: new(5), MinP: new(0.2)}},
		{name: "null override value is unset", source: "auto", override: `{"temperature":null}`,
			want: SamplingDefaults{TopK: new(20), TopP: new(0.95)}},
		{name: "override not an object", source: "auto", override: `[1]`, wantErr: true},
		{name: "top_k with a fraction", source: "vllm", override: `{"top_k":2.5}`, wantErr: true},
	}
	m := fixtureModel(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			source := tt.source
			var override json.RawMessage
			if tt.override != "" {
				override = json.RawMessage(tt.override)
			}
			got, err := LoadSamplingDefaults(m, source, override)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %s\nwant %s", dump(got), dump(tt.want))
			}
		})
	}
}

func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestMaxTokens(t *testing.T) {
	tests := []struct {
		name      string
		requested *int
		inputLen  int
		defaults  SamplingDefaults
		truncate  *int
		want      int
		wantErr   string
	}{
		{name: "room left when nothing is asked", inputLen: 30, want: 70},
		{name: "request below the room", requested: new(10), inputLen: 30, want: 10},
		{name: "request above the room", requested: new(500), inputLen: 30, want: 70},
		{name: "generation config max_new_tokens when the request has none", inputLen: 30, defaults: SamplingDefaults{MaxTokens: new(20)}, want: 20},
		{name: "request wins over max_new_tokens", requested: new(40), inputLen: 30, defaults: SamplingDefaults{MaxTokens: new(20)}, want: 40},
		{name: "override caps the request", requested: new(40), inputLen: 30, defaults: SamplingDefaults{OverrideMaxTokens: new(25)}, want: 25},
		{name: "truncation shortens the input", inputLen: 90, truncate: new(50), want: 50},
		{name: "truncation -1 is the context", inputLen: 90, truncate: new(-1), want: 10},
		{name: "input fills the context", inputLen: 100, want: 0},
		{name: "input beyond the context", inputLen: 101, wantErr: "Input length (101) exceeds model's maximum context length (100)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MaxTokens(100, tt.requested, tt.inputLen, tt.defaults, tt.truncate)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

// base is what every rendered chat request carries: msgspec writes only
// what differs from SamplingParams' defaults.
const base = `"stop":[],"stop_token_ids":[],"max_tokens":50,"output_kind":2,"skip_clone":true,"bad_words":[],"skip_reading_prefix_cache":false`

func TestChatSamplingParams(t *testing.T) {
	qwen := SamplingDefaults{Temperature: new(0.6), TopK: new(20), TopP: new(0.95)}
	tests := []struct {
		name     string
		body     string // fields besides messages
		defaults SamplingDefaults
		want     string // the sampling_params JSON
		wantErr  string
	}{
		{name: "openai defaults are omitted", want: `{` + base + `}`},
		{name: "generation config defaults", defaults: qwen,
			want: `{"temperature":0.6,"top_p":0.95,"top_k":20,` + base + `}`},
		{name: "request wins over generation config", body: `"temperature":0.3,"top_k":0,"top_p":1`, defaults: qwen,
			want: `{"temperature":0.3,` + base + `}`},
		{name: "null request value falls back to the default", body: `"temperature":null`, defaults: qwen,
			want: `{"temperature":0.6,"top_p":0.95,"top_k":20,` + base + `}`},
		{name: "penalties and n", body: `"presence_penalty":0.5,"frequency_penalty":-1,"repetition_penalty":1.1,"n":3,"min_p":0.05`,
			want: `{"n":3,"presence_penalty":0.5,"frequency_penalty":-1.0,"repetition_penalty":1.1,"min_p":0.05,` + base + `}`},
		{name: "null penalties are zero", body: `"presence_penalty":null,"frequency_penalty":null,"n":null`, want: `{` + base + `}`},
		{name: "stop string becomes a list and sets the hold-back", body: `"stop":"</end>"`,
			want: `{"stop":["</end>"],"stop_token_ids":[],"max_tokens":50,"output_kind":2,"skip_clone":true,"output_text_buffer_length":5,"bad_words":[],"skip_reading_prefix_cache":false}`},
		{name: "stop strings kept in output need no hold-back", body: `"stop":["ab","é"],"include_stop_str_in_output":true`,
			want: `{"stop":["ab","é"],"stop_token_ids":[],"max_tokens":50,"include_stop_str_in_output":true,"output_kind":2,"skip_clone":true,"bad_words":[],"skip_reading_prefix_cache":false}`},
		{name: "server default stop ids merged without duplicates", body: `"stop_token_ids":[5,7]`,
			defaults: SamplingDefaults{StopTokenIDs: []int{7, 9}},
			want:     `{"stop":[],"stop_token_ids":[5,7,9],"max_tokens":50,"output_kind":2,"skip_clone":true,"bad_words":[],"skip_reading_prefix_cache":false}`},
		{name: "server default stop ids alone", defaults: SamplingDefaults{StopTokenIDs: []int{9}},
			want: `{"stop":[],"stop_token_ids":[9],"max_tokens":50,"output_kind":2,"skip_clone":true,"bad_words":[],"skip_reading_prefix_cache":false}`},
		{name: "logprobs true takes top_logprobs", body: `"logprobs":true,"top_logprobs":5`,
			want: `{"stop":[],"stop_token_ids":[],"max_tokens":50,"logprobs":5,"output_kind":2,"skip_clone":true,"bad_words":[],"skip_reading_prefix_cache":false}`},
		{name: "logprobs false sends none", body: `"logprobs":false`, want: `{` + base + `}`},
		{name: "logprob_token_ids replace top logprobs", body: `"logprobs":true,"top_logprobs":2,"logprob_token_ids":[4,5]`,
			want: `{"stop":[],"stop_token_ids":[],"max_tokens":50,"logprob_token_ids":[4,5],"output_kind":2,"skip_clone":true,"bad_words":[],"skip_reading_prefix_cache":false}`},
		{name: "prompt_logprobs skip the prefix cache", body: `"prompt_logprobs":2`,
			want: `{"stop":[],"stop_token_ids":[],"max_tokens":50,"prompt_logprobs":2,"output_kind":2,"skip_clone":true,"bad_words":[],"skip_reading_prefix_cache":true}`},
		{name: "echo asks for prompt logprobs", body: `"echo":true,"logprobs":true,"top_logprobs":1`,
			want: `{"stop":[],"stop_token_ids":[],"max_tokens":50,"logprobs":1,"prompt_logprobs":1,"output_kind":2,"skip_clone":true,"bad_words":[],"skip_reading_prefix_cache":true}`},
		{name: "stream is delta", body: `"stream":true`,
			want: `{"stop":[],"stop_token_ids":[],"max_tokens":50,"output_kind":1,"skip_clone":true,"bad_words":[],"skip_reading_prefix_cache":false}`},
		{name: "logit bias keys become ints clamped to 100", body: `"logit_bias":{"5":150,"-3":-200.5," 7 ":0.25}`,
			want: `{"stop":[],"stop_token_ids":[],"max_tokens":50,"output_kind":2,"skip_clone":true,"logit_bias":{"5":100.0,"-3":-100.0,"7":0.25},"bad_words":[],"skip_reading_prefix_cache":false}`},
		{name: "logit bias key that is not an int", body: `"logit_bias":{"a":1,"2":1,"x1":3}`,
			wantErr: "logit_bias contains key(s) that cannot be converted to integer token IDs: ['a', 'x1'] (parameter=logit_bias, value=['a', 'x1'])"},
		{name: "seed kept, -1 means none", body: `"seed":-1`, want: `{` + base + `}`},
		{name: "seed", body: `"seed":42`, want: `{"seed":42,` + base + `}`},
		{name: "greedy resets top_p, top_k and min_p", body: `"temperature":0`, defaults: SamplingDefaults{TopK: new(20), TopP: new(0.8), MinP: new(0.1)},
			want: `{"temperature":0.0,` + base + `}`},
		{name: "tiny temperature is raised", body: `"temperature":0.001`,
			want: `{"temperature":0.01,` + base + `}`},
		{name: "greedy with n > 1", body: `"temperature":0,"n":2`, wantErr: "n must be 1 when using greedy sampling, got 2."},
		{name: "temperature out of range", body: `"temperature":3`, wantErr: "temperature must be in [0, 2], got 3.0. (parameter=temperature, value=3.0)"},
		{name: "top_p out of range", body: `"top_p":0`, wantErr: "top_p must be in (0, 1], got 0.0. (parameter=top_p, value=0.0)"},
		{name: "top_k below -1", body: `"top_k":-2`, wantErr: "top_k must be 0 (disable), or at least 1, got -2."},
		{name: "min_tokens above max_tokens", body: `"min_tokens":60`, wantErr: "min_tokens must be less than or equal to max_tokens=50, got 60."},
		{name: "presence penalty out of range", body: `"presence_penalty":2.5`, wantErr: "presence_penalty must be in [-2, 2], got 2.5."},
		{name: "empty stop string", body: `"stop":["a",""]`, wantErr: "stop cannot contain an empty string."},
		{name: "empty bad word", body: `"bad_words":["x",""]`, wantErr: "bad_words cannot contain an empty string. Got bad_words=['x', '']"},
		{name: "bad words, allowed ids, ignore_eos, min_tokens, special tokens",
			body: `"bad_words":["no"],"allowed_token_ids":[1,2],"ignore_eos":true,"min_tokens":3,"skip_special_tokens":false,"spaces_between_special_tokens":false`,
			want: `{"stop":[],"stop_token_ids":[],"ignore_eos":true,"max_tokens":50,"min_tokens":3,"skip_special_tokens":false,"spaces_between_special_tokens":false,"output_kind":2,"skip_clone":true,"allowed_token_ids":[1,2],"bad_words":["no"],"skip_reading_prefix_cache":false}`},
		{name: "thinking budget", body: `"thinking_token_budget":100`, want: `{` + base + `,"thinking_token_budget":100}`},
		{name: "thinking budget -1 is unlimited", body: `"thinking_token_budget":-1`, want: `{` + base + `}`},
		{name: "response_format json_object", body: `"response_format":{"type":"json_object"}`,
			want: `{"stop":[],"stop_token_ids":[],"max_tokens":50,"output_kind":2,"skip_clone":true,"structured_outputs":{"json":null,"regex":null,"choice":null,"grammar":null,"json_object":true,"disable_any_whitespace":false,"disable_additional_properties":false,"whitespace_pattern":null,"structural_tag":null},"bad_words":[],"skip_reading_prefix_cache":false}`},
		{name: "response_format json_schema", body: `"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"type":"object","b":1,"a":2}}}`,
			want: `{"stop":[],"stop_token_ids":[],"max_tokens":50,"output_kind":2,"skip_clone":true,"structured_outputs":{"json":{"type":"object","b":1,"a":2},"regex":null,"choice":null,"grammar":null,"json_object":null,"disable_any_whitespace":false,"disable_additional_properties":false,"whitespace_pattern":null,"structural_tag":null},"bad_words":[],"skip_reading_prefix_cache":false}`},
		{name: "response_format structural_tag, legacy form, in model order",
			body: `"response_format":{"extra":"é","triggers":["<a"],"type":"structural_tag","structures":[{"x":1.0,"end":"</a>","begin":"<a>"}]}`,
			want: `{"stop":[],"stop_token_ids":[],"max_tokens":50,"output_kind":2,"skip_clone":true,"structured_outputs":{"json":null,"regex":null,"choice":null,"grammar":null,"json_object":null,"disable_any_whitespace":false,"disable_additional_properties":false,"whitespace_pattern":null,` +
				`"structural_tag":"{\"type\": \"structural_tag\", \"structures\": [{\"begin\": \"<a>\", \"schema\": null, \"end\": \"</a>\", \"x\": 1.0}], \"triggers\": [\"<a\"], \"extra\": \"\\u00e9\"}"},"bad_words":[],"skip_reading_prefix_cache":false}`},
		{name: "response_format structural_tag, format form", body: `"response_format":{"format":{"k":1e2},"type":"structural_tag"}`,
			want: `{"stop":[],"stop_token_ids":[],"max_tokens":50,"output_kind":2,"skip_clone":true,"structured_outputs":{"json":null,"regex":null,"choice":null,"grammar":null,"json_object":null,"disable_any_whitespace":false,"disable_additional_properties":false,"whitespace_pattern":null,` +
				`"structural_tag":"{\"type\": \"structural_tag\", \"format\": {\"k\": 100.0}}"},"bad_words":[],"skip_reading_prefix_cache":false}`},
		{name: "json_schema without a schema leaves no constraint", body: `"response_format":{"type":"json_schema","json_schema":{"name":"n"}}`,
			wantErr: "You must use one kind of structured outputs constraint but none are specified: {'json': None, 'regex': None, 'choice': None, 'grammar': None, 'json_object': None, 'disable_any_whitespace': False, 'disable_additional_properties': False, 'whitespace_pattern': None, 'structural_tag': None, '_backend': None, '_backend_was_auto': False}"},
		{name: "response_format on top of structured_outputs", body: `"structured_outputs":{"regex":"a+"},"response_format":{"type":"json_object"}`,
			wantErr: "You can only use one kind of structured outputs constraint but multiple are specified: {'json': None, 'regex': 'a+', 'choice': None, 'grammar': None, 'json_object': True, 'disable_any_whitespace': False, 'disable_additional_properties': False, 'whitespace_pattern': None, 'structural_tag': None, '_backend': None, '_backend_was_auto': False}"},
		{name: "json_schema numbers as Python writes them", body: `"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"maximum":1e2}}}`,
			want: `{"stop":[],"stop_token_ids":[],"max_tokens":50,"output_kind":2,"skip_clone":true,"structured_outputs":{"json":{"maximum":100.0},"regex":null,"choice":null,"grammar":null,"json_object":null,"disable_any_whitespace":false,"disable_additional_properties":false,"whitespace_pattern":null,"structural_tag":null},"bad_words":[],"skip_reading_prefix_cache":false}`},
		{name: "response_format text changes nothing", body: `"response_format":{"type":"text"}`, want: `{` + base + `}`},
		{name: "structured_outputs choice", body: `"structured_outputs":{"choice":["yes","no"],"disable_any_whitespace":true}`,
			want: `{"stop":[],"stop_token_ids":[],"max_tokens":50,"output_kind":2,"skip_clone":true,"structured_outputs":{"json":null,"regex":null,"choice":["yes","no"],"grammar":null,"json_object":null,"disable_any_whitespace":true,"disable_additional_properties":false,"whitespace_pattern":null,"structural_tag":null},"bad_words":[],"skip_reading_prefix_cache":false}`},
		{name: "extra_args from vllm_xargs and transfer params", body: `"vllm_xargs":{"b":[1,"x"],"a":2.5},"kv_transfer_params":{"do_remote_decode":true},"ec_transfer_params":{}`,
			want: `{"stop":[],"stop_token_ids":[],"max_tokens":50,"output_kind":2,"skip_clone":true,"extra_args":{"b":[1,"x"],"a":2.5,"kv_transfer_params":{"do_remote_decode":true}},"bad_words":[],"skip_reading_prefix_cache":false}`},
		{name: "repetition detection", body: `"repetition_detection":{"max_pattern_size":4,"min_count":3}`,
			want: `{` + base + `,"repetition_detection":{"max_pattern_size":4,"min_pattern_size":0,"min_count":3}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"messages":[{"role":"user","content":"hi"}]`
			if tt.body != "" {
				body += "," + tt.body
			}
			req, err := protocol.DecodeChatCompletionRequest([]byte(body + "}"))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			p, err := ChatSamplingParams(req, 50, tt.defaults)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v\nwant %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := protocol.MarshalJSON(p)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestCompletionSamplingParams(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		maxTokens int
		want      string
	}{
		{name: "logprobs is an int", body: `"logprobs":3`, maxTokens: 16,
			want: `{"stop":[],"stop_token_ids":[],"logprobs":3,"output_kind":2,"skip_clone":true,"bad_words":[],"skip_reading_prefix_cache":false}`},
		{name: "echo without generation asks for one token", body: `"echo":true,"max_tokens":0,"logprobs":1`, maxTokens: 0,
			want: `{"stop":[],"stop_token_ids":[],"max_tokens":1,"logprobs":1,"prompt_logprobs":1,"output_kind":2,"skip_clone":true,"bad_words":[],"skip_reading_prefix_cache":true}`},
		{name: "n and stream", body: `"n":2,"stream":true`, maxTokens: 7,
			want: `{"n":2,"stop":[],"stop_token_ids":[],"max_tokens":7,"output_kind":1,"skip_clone":true,"bad_words":[],"skip_reading_prefix_cache":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := protocol.DecodeCompletionRequest([]byte(`{"prompt":"hi",` + tt.body + `}`))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			p, err := CompletionSamplingParams(req, tt.maxTokens, SamplingDefaults{})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := protocol.MarshalJSON(p)
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestPyJSONDumps(t *testing.T) {
	got, err := pyJSONDumps(json.RawMessage(`{"type":"structural_tag","x":[1,2.50,1e20,"é\n",true,null],"y":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type": "structural_tag", "x": [1, 2.5, 1e+20, "\u00e9\n", true, null], "y": {}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestPyJSONCompact(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"a": 1e2, "b": [1, 2.50, -0.0, 12345678901234567890], "c": "é\u2028\t\u0001", "a": true}`,
			`{"a":true,"b":[1,2.5,-0.0,12345678901234567890],"c":"é` + "\u2028" + `\t\u0001"}`},
		{`  null `, `null`},
		{`[{"x":{}}, []]`, `[{"x":{}},[]]`},
	} {
		got, err := pyJSONCompact(json.RawMessage(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: got %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}
