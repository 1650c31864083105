package protocol

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/pylax"
)

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := MarshalJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestResponseShapes(t *testing.T) {
	param := "model"
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"tokenize without strs", TokenizeResponse{Count: 2, MaxModelLen: 40960, Tokens: []int{9707, 1879}},
			`{"count":2,"max_model_len":40960,"tokens":[9707,1879],"token_strs":null}`},
		{"tokenize empty", TokenizeResponse{MaxModelLen: 8},
			`{"count":0,"max_model_len":8,"tokens":[],"token_strs":null}`},
		{"tokenize strs unescaped", TokenizeResponse{Count: 1, MaxModelLen: 8, Tokens: []int{151644}, TokenStrs: []string{"<|im_start|>"}},
			`{"count":1,"max_model_len":8,"tokens":[151644],"token_strs":["<|im_start|>"]}`},
		{"detokenize", DetokenizeResponse{Prompt: "a<b>&c"}, `{"prompt":"a<b>&c"}`},
		{"error with param", NewErrorResponse(404, ErrorTypeNotFound, "The model `x` does not exist.", &param),
			`{"error":{"message":"The model ` + "`x`" + ` does not exist.","type":"NotFoundError","param":"model","code":404}}`},
		{"http error", NewHTTPErrorResponse(405, "Method Not Allowed"),
			`{"error":{"message":"Method Not Allowed","type":"Method Not Allowed","param":null,"code":405}}`},
		{"version", VersionResponse{Version: "0.1.0"}, `{"version":"0.1.0"}`},
		{"empty model list", NewModelList(nil), `{"object":"list","data":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := marshal(t, tt.v); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestModelCardMatchesVLLM(t *testing.T) {
	now := time.Unix(1760000000, 0)
	got := marshal(t, NewModelList([]ModelCard{NewModelCard("qwen", "Qwen/Qwen3-8B", 40960, now)}))
	permID := regexp.MustCompile(`"id":"modelperm-[0-9a-f]{32}"`)
	if !permID.MatchString(got) {
		t.Fatalf("permission id not modelperm-<hex uuid>: %s", got)
	}
	got = permID.ReplaceAllString(got, `"id":"modelperm-X"`)
	want := `{"object":"list","data":[{"id":"qwen","object":"model","created":1760000000,"owned_by":"vllm",` +
		`"root":"Qwen/Qwen3-8B","parent":null,"max_model_len":40960,"permission":[{"id":"modelperm-X",` +
		`"object":"model_permission","created":1760000000,"allow_create_engine":false,"allow_sampling":true,` +
		`"allow_logprobs":true,"allow_search_indices":false,"allow_view":true,"allow_fine_tuning":false,` +
		`"organization":"*","group":null,"is_blocking":false}]}]}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	// An adapter's card: vLLM's ModelCard with root, parent and no
	// max_model_len (OpenAIServingModels.show_available_models).
	got = permID.ReplaceAllString(marshal(t, NewLoRAModelCard("sql-lora", "/adapters/sql", "qwen", now)), `"id":"modelperm-X"`)
	want = `{"id":"sql-lora","object":"model","created":1760000000,"owned_by":"vllm",` +
		`"root":"/adapters/sql","parent":"qwen","max_model_len":null,"permission":[{"id":"modelperm-X",` +
		`"object":"model_permission","created":1760000000,"allow_create_engine":false,"allow_sampling":true,` +
		`"allow_logprobs":true,"allow_search_indices":false,"allow_view":true,"allow_fine_tuning":false,` +
		`"organization":"*","group":null,"is_blocking":false}]}`
	if got != want {
		t.Errorf("adapter card:\ngot  %s\nwant %s", got, want)
	}
}

func TestLoRAParent(t *testing.T) {
	served := []string{"qwen", "qwen-alias"}
	for _, tc := range []struct{ base, want string }{
		{"", "qwen"}, {"qwen-alias", "qwen-alias"}, {"qwen", "qwen"},
		{"llama", "qwen"}, // not served: vLLM drops it and names the first served model
	} {
		if got := (LoRAModulePath{Name: "a", Path: "/a", BaseModelName: tc.base}).Parent(served); got != tc.want {
			t.Errorf("base_model_name %q: parent %q, want %q", tc.base, got, tc.want)
		}
	}
}

func TestRandomUUID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := RandomUUID()
		if !regexp.MustCompile(`^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$`).MatchString(id) {
			t.Fatalf("RandomUUID() = %q, not a uuid4 hex", id)
		}
		if seen[id] {
			t.Fatalf("RandomUUID() repeated %q", id)
		}
		seen[id] = true
	}
}

func TestTokenizeRequestJSONRoundTrip(t *testing.T) {
	model := "m"
	yes := true
	tests := []struct {
		name string
		in   TokenizeRequest
		want string
	}{
		{"prompt", TokenizeRequest{Completion: &TokenizeCompletionRequest{Model: &model, Prompt: "a<b", AddSpecialTokens: true, ReturnTokenStrs: &yes}},
			`{"model":"m","prompt":"a<b","add_special_tokens":true,"return_token_strs":true}`},
		{"chat", TokenizeRequest{Chat: &TokenizeChatRequest{Messages: []Message{{Role: "user", HasRole: true, Content: Content{Kind: ContentText, Text: "hi"}}}, AddGenerationPrompt: true}},
			`{"model":null,"messages":[{"role":"user","content":"hi"}],"add_generation_prompt":true,"return_token_strs":null,` +
				`"continue_final_message":false,"add_special_tokens":false,"chat_template":null,"chat_template_kwargs":null,` +
				`"media_io_kwargs":null,"mm_processor_kwargs":null,"tools":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := marshalTokenize(t, tt.in)
			if got != tt.want {
				t.Fatalf("marshal: got  %s\nwant %s", got, tt.want)
			}
			back, err := DecodeTokenizeRequest([]byte(got))
			if err != nil {
				t.Fatal(err)
			}
			if again := marshalTokenize(t, back); again != got {
				t.Errorf("round trip changed the request:\n%s\n%s", got, again)
			}
		})
	}
}

// marshalTokenize writes whichever form of r is set.
func marshalTokenize(t *testing.T, r TokenizeRequest) string {
	t.Helper()
	b, err := tokenizeJSON(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func tokenizeJSON(r TokenizeRequest) ([]byte, error) {
	if r.Chat != nil {
		return MarshalJSON(r.Chat)
	}
	return MarshalJSON(r.Completion)
}

func TestUnmarshalReportsValidationError(t *testing.T) {
	_, err := DecodeDetokenizeRequest([]byte(`{"tokens":[-3]}`))
	var verr *pylax.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("DecodeDetokenizeRequest error = %v (%T), want *ValidationError", err, err)
	}
	if p := verr.Param(); p == nil || *p != "body.tokens.0" {
		t.Errorf("param = %v, want body.tokens.0", p)
	}
	if !strings.HasPrefix(err.Error(), "1 validation error:\n  {'type': 'greater_than_equal'") {
		t.Errorf("message = %q", err.Error())
	}
}

func TestChatKwargsKeepKeyOrder(t *testing.T) {
	body := `{"messages":[{"role":"user","content":"x"}],"chat_template_kwargs":{"z":1,"a":2},"tools":[{"type":"function","function":{"name":"f","parameters":{"b":1,"a":2}}}]}`
	r, err := DecodeTokenizeRequest([]byte(body))
	if err != nil || r.Chat == nil {
		t.Fatalf("DecodeTokenizeRequest: %v, chat=%v", err, r.Chat)
	}
	if got := string(r.Chat.ChatTemplateKwargs.Raw); got != `{"z":1,"a":2}` {
		t.Errorf("chat_template_kwargs = %s", got)
	}
	if got := string(r.Chat.Tools[0].Function.Parameters.Raw); got != `{"b":1,"a":2}` {
		t.Errorf("tools[0] = %s", got)
	}
}

func TestParseJSONBody(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr string // "" for success; "parse" for ErrBodyNotParsable; else "msg@pos"
	}{
		{"object", `{"a":[1,2.5e3,-0,"x\u00e9\n"],"b":{"c":null,"d":true,"e":false}}`, ""},
		{"surrounding whitespace", " \r\n\t{} \n", ""},
		{"bom", "\ufeff{}", ""},
		{"surrogate pair", `"\ud83d\ude00"`, ""},
		{"lone surrogate", `"\ud800"`, ""},
		{"invalid utf8", "{\"a\":\"\xff\"}", "parse"},
		{"too deep", strings.Repeat("[", 2000) + strings.Repeat("]", 2000), "parse"},
		{"nan", `{"a":NaN}`, "Expecting value@5"},
		{"position counts code points", `{"é😀":1,}`, "Expecting property name enclosed in double quotes@8"},
		{"empty after ws", "  ", "Expecting value@2"},
		{"unterminated after backslash", `"ab\`, "Unterminated string starting at@0"},
		{"short unicode escape", `"\u12"`, "Invalid \\uXXXX escape@2"},
		{"bad low surrogate digits", `["\ud800\uzzzz"]`, "Invalid \\uXXXX escape@9"},
		{"minus alone", `-`, "Expecting value@0"},
		{"exponent without digits", `[1e+]`, "Expecting ',' delimiter@2"},
		{"leading zero", `01`, "Extra data@1"},
		{"missing colon at end", `{"a"`, "Expecting ':' delimiter@4"},
		{"array unclosed", `[1`, "Expecting ',' delimiter@2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseJSONBody([]byte(tt.body))
			var got string
			var syn *JSONSyntaxError
			switch {
			case err == nil:
			case errors.Is(err, ErrBodyNotParsable):
				got = "parse"
			case errors.As(err, &syn):
				got = syn.Msg + "@" + strconv.Itoa(syn.Pos)
			default:
				got = "unexpected " + err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("ParseJSONBody(%q) = %q, want %q", tt.body, got, tt.wantErr)
			}
		})
	}
}
