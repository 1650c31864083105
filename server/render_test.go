package server

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/render"
)

// hex32 matches vLLM's random_uuid().
const hex32 = `[0-9a-f]{32}`

// regexpBody quotes a JSON body for wantRegexp, with {{ID}} standing for a
// random uuid.
func regexpBody(body string) string {
	return strings.ReplaceAll(regexp.QuoteMeta(body), `\{\{ID\}\}`, hex32)
}

func TestChatRenderEndpoint(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	d, err := render.LoadSamplingDefaults(m, render.GenerationConfigVLLM, []byte(`{"temperature":0.6,"top_k":20,"top_p":0.95}`))
	if err != nil {
		t.Fatal(err)
	}
	newHandler := func(gcfg render.GeneratorConfig, rcfg render.Config) http.Handler {
		r, err := render.New(m, rcfg)
		if err != nil {
			t.Fatal(err)
		}
		gcfg.Defaults = d
		h, err := New(Config{Model: m, ServedModelNames: []string{"m"}, Logger: discardLogger(),
			Generator: render.NewGenerator(r, m.MaxModelLen, gcfg)})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h := newHandler(render.GeneratorConfig{}, render.Config{})
	maxLen := strconv.Itoa(m.MaxModelLen)
	const user = `"messages":[{"role":"user","content":"What is 2+2?"}]`
	ids := `[151644,872,198,3838,374,220,17,10,17,30,151645,198,151644,77091,198]`
	badRequest := func(msg, param string) string {
		p := "null"
		if param != "" {
			p = `"` + param + `"`
		}
		return `{"error":{"message":"` + msg + `","type":"BadRequestError","param":` + p + `,"code":400}}`
	}
	cases := []httpCase{
		{name: "the spec's example", method: "POST", path: "/v1/chat/completions/render",
			body: `{"model":"m",` + user + `,"max_tokens":64}`, wantStatus: 200, wantRegexp: true,
			wantBody: regexpBody(`{"request_id":"chatcmpl-{{ID}}","token_ids":` + ids + `,"token_offsets":null,"features":null,"content_parts":null,` +
				`"sampling_params":{"temperature":0.6,"top_p":0.95,"top_k":20,"stop":[],"stop_token_ids":[],"max_tokens":64,"output_kind":2,"skip_clone":true,"bad_words":[],"skip_reading_prefix_cache":false},` +
				`"model":"m","reasoning_ended":null,"reasoning_parser_kwargs":null,"return_token_ids":null,"output_mode":"tokens",` +
				`"stream":false,"stream_options":null,"cache_salt":null,"priority":0,"kv_transfer_params":null,"ec_transfer_params":null}`)},
		{name: "no model, stream, every sampling field", method: "POST", path: "/v1/chat/completions/render",
			body: `{` + user + `,"stream":true,"stream_options":{"include_usage":true},"temperature":0.2,"top_p":0.5,"top_k":-1,"min_p":0.1,` +
				`"repetition_penalty":1.2,"presence_penalty":0.1,"frequency_penalty":0.2,"n":2,"seed":7,"stop":["\n\n"],"stop_token_ids":[151643],` +
				`"max_completion_tokens":100,"max_tokens":5,"logprobs":true,"top_logprobs":2,"ignore_eos":true,"min_tokens":1,"logit_bias":{"100":-5},` +
				`"allowed_token_ids":[1,2],"bad_words":["bad"],"include_stop_str_in_output":true,"skip_special_tokens":false,` +
				`"spaces_between_special_tokens":false,"thinking_token_budget":10,"kv_transfer_params":{"do_remote_decode":true},` +
				`"vllm_xargs":{"k":"v"},"cache_salt":"salt","priority":3,"request_id":"mine","unknown_field":1}`,
			wantStatus: 200, wantRegexp: true,
			wantBody: regexpBody(`{"request_id":"chatcmpl-{{ID}}","token_ids":` + ids + `,"token_offsets":null,"features":null,"content_parts":null,` +
				`"sampling_params":{"n":2,"presence_penalty":0.1,"frequency_penalty":0.2,"repetition_penalty":1.2,"temperature":0.2,"top_p":0.5,"top_k":-1,"min_p":0.1,` +
				`"seed":7,"stop":["\n\n"],"stop_token_ids":[151643],"ignore_eos":true,"max_tokens":100,"min_tokens":1,"logprobs":2,` +
				`"skip_special_tokens":false,"spaces_between_special_tokens":false,"include_stop_str_in_output":true,"output_kind":1,"skip_clone":true,` +
				`"logit_bias":{"100":-5.0},"allowed_token_ids":[1,2],"extra_args":{"k":"v","kv_transfer_params":{"do_remote_decode":true}},` +
				`"bad_words":["bad"],"skip_reading_prefix_cache":false,"thinking_token_budget":10},` +
				`"model":null,"reasoning_ended":null,"reasoning_parser_kwargs":null,"return_token_ids":null,"output_mode":"tokens",` +
				`"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":false},"cache_salt":"salt","priority":3,` +
				`"kv_transfer_params":null,"ec_transfer_params":null}`)},
		{name: "unknown model", method: "POST", path: "/v1/chat/completions/render", body: `{"model":"x",` + user + `}`,
			wantStatus: 404, wantBody: `{"error":{"message":"The model ` + "`x`" + ` does not exist.","type":"NotFoundError","param":"model","code":404}}`},
		{name: "beam search", method: "POST", path: "/v1/chat/completions/render", body: `{` + user + `,"use_beam_search":true}`,
			wantStatus: 400, wantBody: badRequest("Beam search is not supported by the render endpoint", "")},
		{name: "auto tool choice", method: "POST", path: "/v1/chat/completions/render",
			body:       `{` + user + `,"tools":[{"type":"function","function":{"name":"get_weather"}}]}`,
			wantStatus: 400, wantBody: badRequest(`\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`, "")},
		{name: "required tool choice", method: "POST", path: "/v1/chat/completions/render",
			body:       `{` + user + `,"tools":[{"type":"function","function":{"name":"get_weather"}}],"tool_choice":"required"}`,
			wantStatus: 400, wantBody: badRequest(`tool_choice=\"required\" requires --tool-call-parser to be set`, "")},
		{name: "tool choice none renders", method: "POST", path: "/v1/chat/completions/render",
			body:       `{` + user + `,"tools":[{"type":"function","function":{"name":"get_weather"}}],"tool_choice":"none","max_tokens":1}`,
			wantStatus: 200, wantRegexp: true, wantBody: `\{"request_id":"chatcmpl-` + hex32 + `","token_ids":\[151644,8948,198,.*`},
		{name: "untrusted template", method: "POST", path: "/v1/chat/completions/render", body: `{` + user + `,"chat_template":"{{ 1 }}"}`,
			wantStatus: 400, wantBody: badRequest("Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.", "")},
		{name: "prompt beyond the context", method: "POST", path: "/v1/chat/completions/render", body: `{` + user + `,"max_tokens":` + strconv.Itoa(m.MaxModelLen-5) + `}`,
			wantStatus: 400, wantBody: badRequest("This model's maximum context length is "+maxLen+" tokens. However, you requested "+strconv.Itoa(m.MaxModelLen-5)+
				" output tokens and your prompt contains at least 6 input tokens, for a total of at least "+strconv.Itoa(m.MaxModelLen+1)+
				" tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=6)", "input_tokens")},
		{name: "no room for any input", method: "POST", path: "/v1/chat/completions/render", body: `{` + user + `,"max_tokens":` + maxLen + `}`,
			wantStatus: 400, wantBody: badRequest("This model's maximum context length is "+maxLen+" tokens. However, you requested "+maxLen+
				" output tokens and your prompt contains 62 characters (more than 0 characters, which is the upper bound for 0 input tokens). "+
				"Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_text, value=62)", "input_text")},
		{name: "both generation flags", method: "POST", path: "/v1/chat/completions/render",
			body:       `{` + user + `,"continue_final_message":true,"add_generation_prompt":true}`,
			wantStatus: 400, wantBody: `{"error":{"message":"1 validation error:\n  {'type': 'value_error', 'loc': 'body', 'msg': 'Value error, Cannot set both ` +
				"`continue_final_message` and `add_generation_prompt`" + ` to True.', 'input': '<dict of 3 items>', 'ctx': {'error': VLLMValidationError('Cannot set both ` +
				"`continue_final_message` and `add_generation_prompt`" + ` to True.')}}","type":"Bad Request","param":"body","code":400}}`},
		{name: "tool_choice without tools", method: "POST", path: "/v1/chat/completions/render", body: `{` + user + `,"tool_choice":"auto"}`,
			wantStatus: 400, wantBody: `{"error":{"message":"1 validation error:\n  {'type': 'value_error', 'loc': 'body', 'msg': 'Value error, When using ` +
				"`tool_choice`, `tools`" + ` must be set. (parameter=tool_choice)', 'input': '<dict of 2 items>', 'ctx': {'error': VLLMValidationError('When using ` +
				"`tool_choice`, `tools`" + ` must be set.')}}","type":"Bad Request","param":"tool_choice","code":400}}`},
		{name: "field errors", method: "POST", path: "/v1/chat/completions/render", body: `{"max_tokens":"x","temperature":[1]}`,
			wantStatus: 400, wantBody: `{"error":{"message":"3 validation errors:\n` +
				`  {'type': 'missing', 'loc': 'body.messages', 'msg': 'Field required', 'input': '<dict of 2 items>'}\n` +
				`  {'type': 'int_parsing', 'loc': 'body.max_tokens', 'msg': 'Input should be a valid integer, unable to parse string as an integer', 'input': 'x'}\n` +
				`  {'type': 'float_type', 'loc': 'body.temperature', 'msg': 'Input should be a valid number', 'input': '<list of 1 items>'}",` +
				`"type":"Bad Request","param":"body.messages","code":400}}`},
		{name: "completion render", method: "POST", path: "/v1/completions/render", body: `{"prompt":["What is 2+2?","hi"],"max_tokens":3,"model":"m"}`,
			wantStatus: 200, wantRegexp: true,
			wantBody: regexpBody(`[{"request_id":"cmpl-{{ID}}","token_ids":[3838,374,220,17,10,17,30],"token_offsets":null,"features":null,"content_parts":null,` +
				`"sampling_params":{"temperature":0.6,"top_p":0.95,"top_k":20,"stop":[],"stop_token_ids":[],"max_tokens":3,"output_kind":2,"skip_clone":true,"bad_words":[],"skip_reading_prefix_cache":false},` +
				`"model":"m","reasoning_ended":null,"reasoning_parser_kwargs":null,"return_token_ids":null,"output_mode":"tokens","stream":false,"stream_options":null,` +
				`"cache_salt":null,"priority":0,"kv_transfer_params":null,"ec_transfer_params":null},` +
				`{"request_id":"cmpl-{{ID}}","token_ids":[6023],"token_offsets":null,"features":null,"content_parts":null,` +
				`"sampling_params":{"temperature":0.6,"top_p":0.95,"top_k":20,"stop":[],"stop_token_ids":[],"max_tokens":3,"output_kind":2,"skip_clone":true,"bad_words":[],"skip_reading_prefix_cache":false},` +
				`"model":"m","reasoning_ended":null,"reasoning_parser_kwargs":null,"return_token_ids":null,"output_mode":"tokens","stream":false,"stream_options":null,` +
				`"cache_salt":null,"priority":0,"kv_transfer_params":null,"ec_transfer_params":null}]`)},
		{name: "completion prompt mixing texts and ids", method: "POST", path: "/v1/completions/render", body: `{"prompt":["What is 2+2?",[1,2]]}`,
			wantStatus: 400, wantBody: `{"error":{"message":"5 validation errors:\n` +
				`  {'type': 'int_parsing', 'loc': 'body.prompt.0', 'msg': 'Input should be a valid integer, unable to parse string as an integer', 'input': 'What is 2+2?'}\n` +
				`  {'type': 'int_type', 'loc': 'body.prompt.1', 'msg': 'Input should be a valid integer', 'input': '<list of 2 items>'}\n` +
				`  {'type': 'list_type', 'loc': 'body.prompt.0', 'msg': 'Input should be a valid list', 'input': 'What is 2+2?'}\n` +
				`  {'type': 'string_type', 'loc': 'body.prompt', 'msg': 'Input should be a valid string', 'input': '<list of 2 items>'}\n` +
				`  {'type': 'string_type', 'loc': 'body.prompt.1', 'msg': 'Input should be a valid string', 'input': '<list of 2 items>'}","type":"Bad Request","param":"body.prompt.0","code":400}}`},
		{name: "completion suffix", method: "POST", path: "/v1/completions/render", body: `{"prompt":"x","suffix":"y"}`,
			wantStatus: 400, wantBody: badRequest("suffix is not currently supported", "")},
		{name: "completion unknown model", method: "POST", path: "/v1/completions/render", body: `{"prompt":"x","model":"y"}`,
			wantStatus: 404, wantBody: `{"error":{"message":"The model ` + "`y`" + ` does not exist.","type":"NotFoundError","param":"model","code":404}}`},
		{name: "completion without a prompt", method: "POST", path: "/v1/completions/render", body: `{"prompt":""}`,
			wantStatus: 400, wantBody: `{"error":{"message":"1 validation error:\n  {'type': 'value_error', 'loc': 'body', 'msg': 'Value error, Either prompt or prompt_embeds must be provided and non-empty. (parameter=prompt)', ` +
				`'input': '<dict of 1 items>', 'ctx': {'error': VLLMValidationError('Either prompt or prompt_embeds must be provided and non-empty.')}}","type":"Bad Request","param":"prompt","code":400}}`},
		{name: "completion with an empty text", method: "POST", path: "/v1/completions/render", body: `{"prompt":["a",""]}`,
			wantStatus: 400, wantBody: badRequest("No token_ids rendered", "")},
		{name: "tokenize chat form", method: "POST", path: "/tokenize", body: `{` + user + `,"return_token_strs":true}`,
			wantStatus: 200, wantBody: `{"count":15,"max_model_len":` + maxLen + `,"tokens":` + ids +
				`,"token_strs":["<|im_start|>","user","Ċ","What","Ġis","Ġ","2","+","2","?","<|im_end|>","Ċ","<|im_start|>","assistant","Ċ"]}`},
		{name: "tokenize chat form without generation prompt", method: "POST", path: "/tokenize",
			body:       `{` + user + `,"add_generation_prompt":false}`,
			wantStatus: 200, wantBody: `{"count":12,"max_model_len":` + maxLen + `,"tokens":[151644,872,198,3838,374,220,17,10,17,30,151645,198],"token_strs":null}`},
		{name: "tokenize chat form untrusted template", method: "POST", path: "/tokenize", body: `{` + user + `,"chat_template":"x"}`,
			wantStatus: 400, wantBody: badRequest("Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.", "")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}

	trusted := newHandler(render.GeneratorConfig{TrustRequestChatTemplate: true, EnableAutoToolChoice: true, ToolCallParser: "hermes"},
		render.Config{TrustRequestChatTemplate: true})
	for _, c := range []httpCase{
		{name: "trusted request template", method: "POST", path: "/v1/chat/completions/render",
			body: `{` + user + `,"chat_template":"{{ messages[0]['content'] }}","max_tokens":2}`, wantStatus: 200, wantRegexp: true,
			wantBody: `\{"request_id":"chatcmpl-` + hex32 + `","token_ids":\[3838,374,220,17,10,17,30\],.*`},
		{name: "template error", method: "POST", path: "/v1/chat/completions/render",
			body:       `{` + user + `,"chat_template":"{{ raise_exception('Only user turns') }}"}`,
			wantStatus: 400, wantBody: badRequest("Only user turns", "")},
		{name: "auto tool choice with a parser", method: "POST", path: "/v1/chat/completions/render",
			body:       `{` + user + `,"tools":[{"type":"function","function":{"name":"get_weather"}}],"max_tokens":1}`,
			wantStatus: 200, wantRegexp: true, wantBody: `\{"request_id":"chatcmpl-` + hex32 + `".*`},
		{name: "tokenize chat with a trusted template", method: "POST", path: "/tokenize",
			body:       `{` + user + `,"chat_template":"{{ messages[0]['content'] }}"}`,
			wantStatus: 200, wantBody: `{"count":7,"max_model_len":` + maxLen + `,"tokens":[3838,374,220,17,10,17,30],"token_strs":null}`},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, trusted) })
	}
}

// BenchmarkChatRenderHTTP measures a whole /v1/chat/completions/render
// request in process on Qwen3: decoding and validation, template, tokenize,
// sampling params, JSON out.
func BenchmarkChatRenderHTTP(b *testing.B) {
	h := realServer(b, testmodel.Load(b, "qwen3"))
	for _, turns := range []int{1, 40} {
		var msgs []string
		for i := range turns {
			msgs = append(msgs, `{"role":"user","content":`+strconv.Quote(benchText(400))+`}`,
				`{"role":"assistant","content":"Answer number `+strconv.Itoa(i)+`."}`)
		}
		body := []byte(`{"model":"m","messages":[` + strings.Join(msgs, ",") + `],"max_tokens":64,"temperature":0.7}`)
		b.Run(strconv.Itoa(2*turns)+"msgs", func(b *testing.B) { benchServe(b, h, "/v1/chat/completions/render", body) })
	}
}
