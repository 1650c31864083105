package server

import (
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/protocol"
)

// loraModules are three adapters: one without a base model, one naming
// the second served name, one naming a model that is not served (vLLM
// then lists the first served name as its parent).
var loraModules = []protocol.LoRAModulePath{
	{Name: "sql-lora", Path: "/adapters/sql"},
	{Name: "chat-lora", Path: "/adapters/chat", BaseModelName: "tiny-alias"},
	{Name: "odd-lora", Path: "/adapters/odd", BaseModelName: "llama"},
}

// TestModelsListsLoRAAdapters: /v1/models lists the adapters after the
// served names, as OpenAIServingModels.show_available_models does: id the
// adapter's name, root its path, parent its base model, no max_model_len.
func TestModelsListsLoRAAdapters(t *testing.T) {
	h, _ := testServer(t, func(c *Config) { c.LoRAModules = loraModules })
	perm := `\[\{"id":"modelperm-[0-9a-f]{32}","object":"model_permission","created":\d+,"allow_create_engine":false,"allow_sampling":true,"allow_logprobs":true,"allow_search_indices":false,"allow_view":true,"allow_fine_tuning":false,"organization":"\*","group":null,"is_blocking":false\}\]`
	card := func(id, root, parent, maxLen string) string {
		return `\{"id":"` + id + `","object":"model","created":\d+,"owned_by":"vllm","root":"` + root + `","parent":` + parent +
			`,"max_model_len":` + maxLen + `,"permission":` + perm + `\}`
	}
	httpCase{method: "GET", path: "/v1/models", wantStatus: 200, wantRegexp: true,
		wantBody: `\{"object":"list","data":\[` + strings.Join([]string{
			card("tiny", "org/tiny", "null", "128"),
			card("tiny-alias", "org/tiny", "null", "128"),
			card("sql-lora", "/adapters/sql", `"tiny"`, "null"),
			card("chat-lora", "/adapters/chat", `"tiny-alias"`, "null"),
			card("odd-lora", "/adapters/odd", `"tiny"`, "null"),
		}, ",") + `\]\}`}.run(t, h)
}

// TestEndpointsAcceptLoRAAdapters: every endpoint that checks "model"
// accepts an adapter's name, as vLLM's _check_model does; the rendered
// GenerateRequest carries it (the engine resolves the adapter by it), the
// derender answers echo it, and an unknown model is still vLLM's 404.
func TestEndpointsAcceptLoRAAdapters(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	h, err := New(Config{Model: m, ServedModelNames: []string{"qwen"}, LoRAModules: loraModules[:1], Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	cases := []struct {
		name, path, body, want string
	}{
		{"tokenize", "/tokenize", `{"model":"sql-lora","prompt":"hi"}`, `"tokens":[6023]`},
		{"tokenize chat", "/tokenize", `{"model":"sql-lora",` + msgs + `}`, `"count":`},
		{"detokenize", "/detokenize", `{"model":"sql-lora","tokens":[6023]}`, `{"prompt":"hi"}`},
		{"chat render", "/v1/chat/completions/render", `{"model":"sql-lora",` + msgs + `}`, `"model":"sql-lora"`},
		{"completion render", "/v1/completions/render", `{"model":"sql-lora","prompt":"hi"}`, `"model":"sql-lora"`},
		{"messages render", "/v1/messages/render", `{"model":"sql-lora","max_tokens":8,` + msgs + `}`, `"model":"sql-lora"`},
		{"responses render", "/v1/responses/render", `{"model":"sql-lora","input":"hi"}`, `"model":"sql-lora"`},
		{"count tokens", "/v1/messages/count_tokens", `{"model":"sql-lora",` + msgs + `}`, `"input_tokens":`},
		{"chat derender", "/v1/chat/completions/derender", `{"model":"sql-lora","chat_request":` + chatReq + `,"generate_response":` + gen1 + `}`,
			`"model":"sql-lora"`},
		{"completion derender", "/v1/completions/derender", `{"model":"sql-lora","generate_responses":[` + gen1 + `]}`, `"model":"sql-lora"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(h, tc.path, tc.body)
			if status != 200 || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %s, want 200 with %s", status, body, tc.want)
			}
			unknown := strings.Replace(tc.body, `"model":"sql-lora"`, `"model":"nope-lora"`, 1)
			status, body = post(h, tc.path, unknown)
			if status != 404 || !strings.Contains(body, "The model `nope-lora` does not exist.") {
				t.Fatalf("unknown model: %d %s, want vLLM's 404", status, body)
			}
		})
	}
	// Without an engine the served endpoints answer 503 for an adapter
	// too, not 404: the name is known.
	if status, body := post(h, "/v1/chat/completions", `{"model":"sql-lora",`+msgs+`}`); status != 503 {
		t.Errorf("chat completions without engine: %d %s, want 503", status, body)
	}
}

func TestNewRejectsBadLoRAModules(t *testing.T) {
	for _, mods := range [][]protocol.LoRAModulePath{
		{{Name: "a", Path: "/a"}, {Name: "a", Path: "/b"}},
		{{Name: "tiny-alias", Path: "/a"}},
		{{Name: "a", Path: ""}},
	} {
		if _, err := New(Config{Model: tinyModel(t), ServedModelNames: []string{"tiny", "tiny-alias"}, LoRAModules: mods}); err == nil {
			t.Errorf("New accepted LoRAModules %+v", mods)
		}
	}
}
