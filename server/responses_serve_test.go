package server

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/orchestrator/engine"
)

// /v1/responses end to end over the simulated engine (testScript): the
// response objects and event streams of vLLM's non-Harmony Responses path.

const respWeatherTools = `"tools":[{"type":"function","name":"get_weather","description":"Weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string"}},"required":["city"]}}]`

type respObject struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Status            string          `json:"status"`
	IncompleteDetails json.RawMessage `json:"incomplete_details"`
	MaxOutputTokens   int             `json:"max_output_tokens"`
	Output            []struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		Status    string `json:"status"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Content   []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"output"`
	Usage struct {
		Input  int `json:"input_tokens"`
		Output int `json:"output_tokens"`
		Total  int `json:"total_tokens"`
	} `json:"usage"`
}

// summary is the output as "type:text" strings.
func (r *respObject) summary() []string {
	var out []string
	for _, it := range r.Output {
		switch it.Type {
		case "function_call":
			out = append(out, "function_call:"+it.Name+":"+it.Arguments)
		default:
			text := ""
			for _, c := range it.Content {
				text += c.Text
			}
			out = append(out, it.Type+":"+text)
		}
	}
	return out
}

func TestResponsesAnswer(t *testing.T) {
	env := newOpenAIEnv(t, "")
	status, b := env.post(t, "/v1/responses", `{"model":"qwen","input":"What is 2+2?","instructions":"Be brief."}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, b)
	}
	got := regexp.MustCompile(`"(id|created_at)":("[a-z]+_[0-9a-f]{32}"|\d+)`).ReplaceAllString(string(b), `"$1":X`)
	got = regexp.MustCompile(`"(input_tokens|output_tokens|total_tokens|max_output_tokens)":\d+`).ReplaceAllString(got, `"$1":N`)
	want := `{"id":X,"created_at":X,"incomplete_details":null,"instructions":"Be brief.","metadata":null,"model":"qwen",` +
		`"object":"response","output":[` +
		`{"id":X,"summary":[],"type":"reasoning","content":[{"text":"\nLet me think about 2+2.\n","type":"reasoning_text"}],"encrypted_content":null,"status":null},` +
		`{"id":X,"content":[{"annotations":[],"text":"\n\n2+2 = 4. Ünïcödé ✓ 😀","type":"output_text","logprobs":null}],"role":"assistant","status":"completed","type":"message"}],` +
		`"parallel_tool_calls":true,"temperature":1.0,"tool_choice":"none","tools":[],"top_p":1.0,"background":false,` +
		`"max_output_tokens":N,"max_tool_calls":null,"previous_response_id":null,"prompt":null,"reasoning":null,` +
		`"service_tier":"auto","status":"completed","text":null,"top_logprobs":null,"truncation":"disabled",` +
		`"usage":{"input_tokens":N,"input_tokens_details":{"cached_tokens":0,"input_tokens_per_turn":[],"cached_tokens_per_turn":[]},` +
		`"output_tokens":N,"output_tokens_details":{"reasoning_tokens":0,"tool_output_tokens":0,"output_tokens_per_turn":[],"tool_output_tokens_per_turn":[]},` +
		`"total_tokens":N},"user":null,"input_messages":null,"output_messages":null}`
	if got != want {
		t.Errorf("response\n got %s\nwant %s", got, want)
	}
	var r respObject
	_ = json.Unmarshal(b, &r)
	if !strings.HasPrefix(r.ID, "resp_") || !strings.HasPrefix(r.Output[0].ID, "rs_") || !strings.HasPrefix(r.Output[1].ID, "msg_") ||
		r.Usage.Total != r.Usage.Input+r.Usage.Output || r.Usage.Input == 0 {
		t.Errorf("ids or usage: %s", b)
	}

	// The length limit: status incomplete.
	_, b = env.post(t, "/v1/responses", `{"model":"qwen","input":"Hi","max_output_tokens":3}`)
	_ = json.Unmarshal(b, &r)
	if r.Status != "incomplete" || string(r.IncompleteDetails) != `{"reason":"max_output_tokens"}` || r.MaxOutputTokens != 3 || r.Usage.Output != 3 {
		t.Errorf("incomplete response %s", b)
	}
}

func TestResponsesFunctionCallAndToolResultTurn(t *testing.T) {
	env := newOpenAIEnv(t, "")
	status, b := env.post(t, "/v1/responses", `{"model":"qwen","input":"What is the weather in Paris?",`+respWeatherTools+`}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, b)
	}
	var r respObject
	_ = json.Unmarshal(b, &r)
	want := []string{"reasoning:\nThe user wants weather.\n", `function_call:get_weather:{"city": "Paris", "unit": "celsius"}`}
	if strings.Join(r.summary(), "|") != strings.Join(want, "|") {
		t.Fatalf("output %q", r.summary())
	}
	fc := r.Output[1]
	if !strings.HasPrefix(fc.ID, "fc_") || fc.CallID == "" || fc.Status != "completed" {
		t.Errorf("function call item %+v", fc)
	}
	// The tool-result turn: the call and its output go back as input items.
	turn := `{"model":"qwen",` + respWeatherTools + `,"input":[{"role":"user","content":"What is the weather in Paris?"},
		{"type":"function_call","call_id":"` + fc.CallID + `","name":"get_weather","arguments":"{\"city\": \"Paris\"}"},
		{"type":"function_call_output","call_id":"` + fc.CallID + `","output":"22 degrees and sunny"}]}`
	status, b = env.post(t, "/v1/responses", turn)
	if status != 200 {
		t.Fatalf("tool-result turn: %d %s", status, b)
	}
	_ = json.Unmarshal(b, &r)
	if r.Status != "completed" || len(r.Output) == 0 {
		t.Errorf("tool-result turn %s", b)
	}
	reqs := env.sim.Requests()
	prompt := testmodel.Load(t, "qwen3").Tokenizer.Decode(reqs[len(reqs)-1].TokenIDs, false)
	if !strings.Contains(prompt, "22 degrees and sunny") || !strings.Contains(prompt, `"name": "get_weather"`) {
		t.Errorf("the engine's prompt misses the tool turn: %q", prompt)
	}
}

// streamTypes is the stream's event types, runs of one delta type folded.
func streamTypes(events []sseEvent) []string {
	var out []string
	for _, ev := range events {
		if n := len(out); n > 0 && out[n-1] == ev.name && strings.HasSuffix(ev.name, ".delta") {
			continue
		}
		out = append(out, ev.name)
	}
	return out
}

func TestResponsesStreamEventOrder(t *testing.T) {
	env := newOpenAIEnv(t, "")
	cases := []struct {
		name, body string
		want       []string
		output     []string
	}{
		{"text", `{"model":"qwen","stream":true,"input":"What is 2+2?"}`, []string{
			"response.created", "response.in_progress",
			"response.output_item.added", "response.content_part.added", "response.reasoning_text.delta",
			"response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
			"response.output_item.added", "response.content_part.added", "response.output_text.delta",
			"response.output_text.done", "response.content_part.done", "response.output_item.done",
			"response.completed"}, []string{"reasoning:\nLet me think about 2+2.\n", "message:\n\n2+2 = 4. Ünïcödé ✓ 😀"}},
		{"two calls", `{"model":"qwen","stream":true,"input":"Weather in two cities?",` + respWeatherTools + `}`, []string{
			"response.created", "response.in_progress",
			"response.output_item.added", "response.content_part.added", "response.reasoning_text.delta",
			"response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
			"response.output_item.added", "response.function_call_arguments.delta",
			"response.function_call_arguments.done", "response.output_item.done",
			"response.output_item.added", "response.function_call_arguments.delta",
			"response.function_call_arguments.done", "response.output_item.done",
			"response.completed"}, []string{"reasoning:\nTwo calls.\n", `function_call:get_weather:{"city": "Paris"}`,
			`function_call:get_weather:{"city": "Rome"}`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			events := env.namedEvents(t, "/v1/responses", tc.body)
			if got := streamTypes(events); strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("events\n got %q\nwant %q", got, tc.want)
			}
			outputIndex := map[string]int{}
			for i, ev := range events {
				var d struct {
					Seq         int    `json:"sequence_number"`
					OutputIndex *int   `json:"output_index"`
					ItemID      string `json:"item_id"`
				}
				_ = json.Unmarshal([]byte(ev.data), &d)
				if d.Seq != i {
					t.Errorf("event %d (%s) has sequence_number %d", i, ev.name, d.Seq)
				}
				if d.ItemID != "" && d.OutputIndex != nil {
					if oi, ok := outputIndex[d.ItemID]; ok && oi != *d.OutputIndex {
						t.Errorf("item %s moves from output_index %d to %d", d.ItemID, oi, *d.OutputIndex)
					}
					outputIndex[d.ItemID] = *d.OutputIndex
				}
			}
			var done struct {
				Response respObject `json:"response"`
			}
			if err := json.Unmarshal([]byte(events[len(events)-1].data), &done); err != nil {
				t.Fatal(err)
			}
			if got := done.Response.summary(); strings.Join(got, "|") != strings.Join(tc.output, "|") || done.Response.Status != "completed" {
				t.Errorf("response.completed output %q status %s", got, done.Response.Status)
			}
			var created struct {
				Response respObject `json:"response"`
			}
			_ = json.Unmarshal([]byte(events[0].data), &created)
			if created.Response.Status != "in_progress" || created.Response.ID != done.Response.ID || len(created.Response.Output) != 0 {
				t.Errorf("response.created %s", events[0].data)
			}
		})
	}
	// Byte shapes of the item events.
	events := env.namedEvents(t, "/v1/responses", `{"model":"qwen","stream":true,"input":"What is 2+2?"}`)
	id := regexp.MustCompile(`"(id|item_id)":"[0-9a-f]{32}"`)
	norm := func(s string) string { return id.ReplaceAllString(s, `"$1":"I"`) }
	for i, want := range map[int]string{
		2: `{"item":{"id":"I","summary":[],"type":"reasoning","content":null,"encrypted_content":null,"status":"in_progress"},"output_index":0,"sequence_number":2,"type":"response.output_item.added"}`,
		3: `{"content_index":0,"item_id":"I","output_index":0,"part":{"text":"","type":"reasoning_text"},"sequence_number":3,"type":"response.content_part.added"}`,
		4: `{"content_index":0,"delta":"\n","item_id":"I","output_index":0,"sequence_number":4,"type":"response.reasoning_text.delta"}`,
	} {
		if got := norm(events[i].data); got != want {
			t.Errorf("event %d\n got %s\nwant %s", i, got, want)
		}
	}
	var textDone, itemDone string
	for _, ev := range events {
		switch ev.name {
		case "response.output_text.done":
			textDone = norm(ev.data)
		case "response.output_item.done":
			itemDone = norm(ev.data)
		}
	}
	if !regexp.MustCompile(`^\{"content_index":0,"item_id":"I","logprobs":\[\],"output_index":1,"sequence_number":\d+,"text":"\\n\\n2\+2 = 4. Ünïcödé ✓ 😀","type":"response.output_text.done"\}$`).MatchString(textDone) {
		t.Errorf("output_text.done %s", textDone)
	}
	if !regexp.MustCompile(`^\{"item":\{"id":"I","content":\[\{"annotations":\[\],"text":"\\n\\n2\+2 = 4. Ünïcödé ✓ 😀","type":"output_text","logprobs":null\}\],"role":"assistant","status":"completed","type":"message","annotations":\[\],"logprobs":\[\]\},"output_index":1,"sequence_number":\d+,"type":"response.output_item.done"\}$`).MatchString(itemDone) {
		t.Errorf("output_item.done %s", itemDone)
	}
}

// Built-in tools are accepted and reach no template, as on vLLM's
// non-Harmony path: the answer is the one without them, and the response
// echoes them.
func TestResponsesBuiltinToolsIgnored(t *testing.T) {
	env := newOpenAIEnv(t, "")
	status, b := env.post(t, "/v1/responses", `{"model":"qwen","input":"What is 2+2?","tools":[{"type":"web_search"},{"type":"file_search","vector_store_ids":["vs"]}]}`)
	if status != 200 || !strings.Contains(string(b), `"tools":[{"type":"web_search"},{"type":"file_search","vector_store_ids":["vs"]}]`) {
		t.Fatalf("%d %s", status, b)
	}
	reqs := env.sim.Requests()
	with := reqs[len(reqs)-1].TokenIDs
	env.post(t, "/v1/responses", `{"model":"qwen","input":"What is 2+2?"}`)
	reqs = env.sim.Requests()
	if without := reqs[len(reqs)-1].TokenIDs; len(with) != len(without) {
		t.Errorf("prompt with built-in tools has %d tokens, without %d", len(with), len(without))
	}
}

func TestResponsesErrors(t *testing.T) {
	env := newOpenAIEnv(t, "")
	cases := []struct {
		name, body string
		status     int
		want       string
	}{
		{"previous response", `{"model":"qwen","input":"hi","previous_response_id":"resp_1"}`, 404,
			`{"error":{"message":"Response with id 'resp_1' not found.","type":"invalid_request_error","param":"response_id","code":404}}`},
		{"unknown model", `{"model":"nope","input":"hi"}`, 404, `{"error":{"message":"The model ` + "`nope`" + ` does not exist.","type":"NotFoundError"`},
		{"input missing", `{"model":"qwen"}`, 400, `{"error":{"message":`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, b := env.post(t, "/v1/responses", tc.body)
			if status != tc.status || !strings.HasPrefix(string(b), tc.want) {
				t.Errorf("got %d %s", status, b)
			}
		})
	}
}

// include message.output_text.logprobs: the answer's output_text carries
// every token's logprob (with bytes); streamed text events carry their
// engine event's (token, logprob, top_logprobs).
func TestResponsesLogprobs(t *testing.T) {
	env := newOpenAIEnv(t, "")
	body := `{"model":"qwen","input":"What is 2+2?","include":["message.output_text.logprobs"],"top_logprobs":2`
	_, b := env.post(t, "/v1/responses", body+`}`)
	var full struct {
		TopLogprobs *int `json:"top_logprobs"`
		Output      []struct {
			Content []struct {
				Logprobs []struct {
					Token string `json:"token"`
					Bytes []int  `json:"bytes"`
					Top   []struct {
						Token string `json:"token"`
					} `json:"top_logprobs"`
				} `json:"logprobs"`
			} `json:"content"`
		} `json:"output"`
	}
	if err := json.Unmarshal(b, &full); err != nil {
		t.Fatal(err)
	}
	lps := full.Output[1].Content[0].Logprobs
	if full.TopLogprobs == nil || *full.TopLogprobs != 2 || len(lps) == 0 || len(lps[0].Top) != 2 || lps[0].Bytes == nil {
		t.Fatalf("answer logprobs: %s", b)
	}
	events := env.namedEvents(t, "/v1/responses", body+`,"stream":true}`)
	deltas := 0
	for _, ev := range events {
		if ev.name != "response.output_text.delta" {
			continue
		}
		var d struct {
			Delta    string `json:"delta"`
			Logprobs []struct {
				Token   string   `json:"token"`
				Logprob *float64 `json:"logprob"`
				Top     []struct {
					Token string `json:"token"`
				} `json:"top_logprobs"`
			} `json:"logprobs"`
		}
		_ = json.Unmarshal([]byte(ev.data), &d)
		if len(d.Logprobs) == 0 || d.Logprobs[0].Logprob == nil || len(d.Logprobs[0].Top) != 2 || strings.Contains(ev.data, `"bytes"`) {
			t.Errorf("delta logprobs: %s", ev.data)
		}
		deltas++
	}
	var done struct {
		Response json.RawMessage `json:"response"`
	}
	_ = json.Unmarshal([]byte(events[len(events)-1].data), &done)
	var streamed struct {
		Output []struct {
			Content []struct {
				Logprobs []json.RawMessage `json:"logprobs"`
			} `json:"content"`
		} `json:"output"`
	}
	_ = json.Unmarshal(done.Response, &streamed)
	if deltas == 0 || len(streamed.Output) < 2 || len(streamed.Output[1].Content[0].Logprobs) != len(lps) {
		t.Errorf("%d deltas; completed response logprobs: %s", deltas, done.Response)
	}
}

// A stop string ends the answer and aborts the engine request, as for chat.
func TestResponsesStopStringAbortsEngine(t *testing.T) {
	env := newOpenAIEnv(t, "")
	status, b := env.post(t, "/v1/responses", `{"model":"qwen","input":"stopme","stop":["beta"],"request_id":"resp_stop"}`)
	var r respObject
	_ = json.Unmarshal(b, &r)
	if status != 200 || r.ID != "resp_stop" || strings.Join(r.summary(), "|") != "reasoning:\nok\n|message:\n\nAlpha " {
		t.Fatalf("%d %s", status, b)
	}
	reqs := env.sim.Requests()
	if last := reqs[len(reqs)-1]; len(last.SamplingParams.Stop) != 0 {
		t.Errorf("engine got stop strings %q", last.SamplingParams.Stop)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := env.sim.WaitAbort(ctx, engine.EngineRequestID("resp_stop")); err != nil {
		t.Errorf("engine request not aborted after the stop string: %v (aborts %q)", err, env.sim.Aborts())
	}
}

// Required and named tool_choice are constrained as for chat: the parser's
// structural tag reaches the engine (vLLM's preprocess_chat runs
// adjust_request on Responses requests too).
func TestResponsesToolChoiceConstrainsEngine(t *testing.T) {
	env := newOpenAIEnv(t, "")
	chatTools := `"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string"}},"required":["city"]}}}]`
	for _, tc := range []struct{ name, respChoice, chatChoice string }{
		{"required", `"required"`, `"required"`},
		{"named", `{"type":"function","name":"get_weather"}`, `{"type":"function","function":{"name":"get_weather"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, b := env.post(t, "/v1/responses", `{"model":"qwen","input":"What is the weather in Paris?",`+respWeatherTools+`,"tool_choice":`+tc.respChoice+`,"text":{"format":{"type":"json_object"}}}`)
			if status != 200 {
				t.Fatalf("%d %s", status, b)
			}
			var r respObject
			_ = json.Unmarshal(b, &r)
			if got := r.summary(); len(got) != 2 || !strings.HasPrefix(got[1], "function_call:get_weather:") {
				t.Errorf("output %q", got)
			}
			if !strings.Contains(string(b), `"text":null`) {
				t.Errorf("text is echoed though adjust_request cleared it: %s", b)
			}
			reqs := env.sim.Requests()
			so := reqs[len(reqs)-1].SamplingParams.StructuredOutputs
			env.post(t, "/v1/chat/completions", `{"model":"qwen","messages":[{"role":"user","content":"What is the weather in Paris?"}],`+chatTools+`,"tool_choice":`+tc.chatChoice+`}`)
			reqs = env.sim.Requests()
			chat := reqs[len(reqs)-1].SamplingParams.StructuredOutputs
			if so == nil || so.StructuralTag == nil || chat == nil || chat.StructuralTag == nil || *so.StructuralTag != *chat.StructuralTag || so.JSON != nil {
				t.Errorf("engine structured outputs %+v, chat's %+v", so, chat)
			}
		})
	}
}

// A tool_choice object other than a named function (here allowed_tools)
// passes validation and is parsed as vLLM's _extract_tool_calls parses a
// choice that is neither auto, required nor named: no call, the text kept.
// The template still gets the tools.
func TestResponsesAllowedToolsChoiceParsesNoCall(t *testing.T) {
	env := newOpenAIEnv(t, "")
	status, b := env.post(t, "/v1/responses", `{"model":"qwen","input":"What is the weather in Paris?",`+respWeatherTools+
		`,"tool_choice":{"type":"allowed_tools","mode":"auto","tools":[{"type":"function","name":"get_weather"}]}}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, b)
	}
	var r respObject
	_ = json.Unmarshal(b, &r)
	got := strings.Join(r.summary(), "|")
	if strings.Contains(got, "function_call:") || !strings.Contains(got, "<tool_call>") {
		t.Errorf("output %q, want the tool call's text and no call", r.summary())
	}
	reqs := env.sim.Requests()
	prompt := testmodel.Load(t, "qwen3").Tokenizer.Decode(reqs[len(reqs)-1].TokenIDs, false)
	if !strings.Contains(prompt, `"name": "get_weather"`) {
		t.Errorf("the template got no tools: %q", prompt)
	}
}
