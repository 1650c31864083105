package enginesim

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testmodel"
	"github.com/vrender/vrender/internal/wire"
)

// scripted starts a sim with a script and returns the generate URL.
func scripted(t *testing.T, script string, cfg Config) (*Sim, string) {
	t.Helper()
	m := testmodel.Load(t, "qwen3")
	s, err := ParseScript([]byte(script), m.Tokenizer)
	if err != nil {
		t.Fatalf("ParseScript: %v", err)
	}
	cfg.Script = s
	sim, srv := newServer(t, cfg)
	return sim, srv.URL + "/inference/v1/generate"
}

// events splits an SSE body into its data payloads.
func events(t *testing.T, body string) []string {
	t.Helper()
	if !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("stream does not end with [DONE]: %q", body)
	}
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok {
			t.Fatalf("event without data: %q", ev)
		}
		out = append(out, data)
	}
	return out
}

type testEvent struct {
	RequestID string `json:"request_id"`
	Usage     *struct {
		Prompt     int `json:"prompt_tokens"`
		Completion int `json:"completion_tokens"`
		Total      int `json:"total_tokens"`
	} `json:"usage"`
	Choices []struct {
		Index          int     `json:"index"`
		FinishReason   *string `json:"finish_reason"`
		StopReason     *int    `json:"stop_reason"`
		TokenIDs       []int   `json:"token_ids"`
		WeightVersions []struct {
			End int `json:"end"`
		} `json:"weight_versions"`
		Logprobs *struct {
			Content []struct {
				TokenID int `json:"token_id"`
				Rank    int `json:"rank"`
				Top     []struct {
					TokenID int `json:"token_id"`
					Rank    int `json:"rank"`
				} `json:"top_logprobs"`
			} `json:"content"`
		} `json:"logprobs"`
	} `json:"choices"`
}

func decodeEvents(t *testing.T, body string) []testEvent {
	t.Helper()
	var out []testEvent
	for _, data := range events(t, body) {
		if data == "[DONE]" {
			continue
		}
		var ev testEvent
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		out = append(out, ev)
	}
	return out
}

const pingScript = `{"match": "ping", "token_ids": [10, 11, 12], "eos": true}
{"match": "long", "text": "one two three four five six seven eight nine ten"}
{"match": "bare", "token_ids": [20, 21]}
{"default": true, "token_ids": [30], "eos": true}
`

// promptJSON is the token id list of text, as JSON.
func promptJSON(t *testing.T, text string) string {
	t.Helper()
	return string(wire.AppendInts(nil, testmodel.Load(t, "qwen3").Tokenizer.Encode(text, false)))
}

func TestStreamFramingByteExact(t *testing.T) {
	pingPrompt := promptJSON(t, "ping")
	_, url := scripted(t, pingScript, Config{})
	body := `{"token_ids":` + pingPrompt + `,"sampling_params":{"max_tokens":10},"stream":true,"stream_options":{"include_usage":true}}`
	status, ctype, out := post(t, url, body, "X-Request-Id", "abc")
	if status != 200 || ctype != "text/event-stream; charset=utf-8" {
		t.Fatalf("status %d content-type %q", status, ctype)
	}
	ev := func(tok, finish, wv string) string {
		return `data: {"request_id":"generate-tokens-abc","usage":null,"output_mode":"tokens","choices":[{"index":0,"finish_reason":` +
			finish + `,"stop_reason":null,"token_ids":[` + tok + `],"routed_experts":null,"sampling_mask":null,"weight_versions":` + wv + `,"logprobs":null}]}` + "\n\n"
	}
	want := ev("10", "null", "null") + ev("11", "null", "null") + ev("12", "null", "null") +
		ev("151645", `"stop"`, `[{"version":"default","start":0,"end":4}]`) +
		`data: {"request_id":"generate-tokens-abc","usage":{"prompt_tokens":1,"total_tokens":5,"completion_tokens":4},"output_mode":"tokens","choices":[]}` + "\n\n" +
		"data: [DONE]\n\n"
	if out != want {
		t.Fatalf("stream\n got %q\nwant %q", out, want)
	}
}

func TestNonStreamBodyByteExact(t *testing.T) {
	pingPrompt := promptJSON(t, "ping")
	sim, url := scripted(t, pingScript, Config{ServedModelName: "m"})
	sim.now = func() time.Time { return time.Unix(1700000000, 0) }
	status, ctype, out := post(t, url, `{"request_id":"r1","token_ids":`+pingPrompt+`,"sampling_params":{"max_tokens":10},"return_token_ids":true}`)
	want := `{"request_id":"generate-tokens-r1","model":"m","created":1700000000,` +
		`"usage":{"prompt_tokens":1,"total_tokens":5,"completion_tokens":4,"prompt_tokens_details":null},` +
		`"prompt_logprobs":null,"prompt_token_id_logprobs":null,"prompt_token_ids":` + pingPrompt + `,"mm_placeholders":null,"metrics":null,` +
		`"kv_transfer_params":null,"ec_transfer_params":null,"output_mode":"tokens","choices":[{"index":0,"finish_reason":"stop",` +
		`"stop_reason":null,"token_ids":[10,11,12,151645],"routed_experts":null,"sampling_mask":null,` +
		`"weight_versions":[{"version":"default","start":0,"end":4}],"logprobs":null}]}`
	if status != 200 || ctype != "application/json" || out != want {
		t.Fatalf("%d %s\n got %s\nwant %s", status, ctype, out, want)
	}
}

func TestStreamBehaviour(t *testing.T) {
	pingPrompt := promptJSON(t, "ping")
	_, url := scripted(t, pingScript, Config{})
	type choiceWant struct {
		tokens     []int
		finish     string
		stopReason int // -1: null
	}
	tests := []struct {
		name       string
		prompt     string
		sampling   string
		streamOpts string
		order      []int // choice index of each token-bearing event
		want       []choiceWant
		usage      bool // final usage event expected
		continuous bool
	}{
		{name: "max_tokens cuts with length", prompt: pingPrompt, sampling: `{"max_tokens":2}`,
			want: []choiceWant{{[]int{10, 11}, "length", -1}}},
		{name: "stop_token_ids stop with stop_reason", prompt: pingPrompt, sampling: `{"max_tokens":10,"stop_token_ids":[11]}`,
			want: []choiceWant{{[]int{10, 11}, "stop", 11}}},
		{name: "min_tokens masks stop and eos", prompt: pingPrompt, sampling: `{"max_tokens":10,"min_tokens":5,"stop_token_ids":[11]}`,
			want: []choiceWant{{nil, "stop", -1}}},
		{name: "ignore_eos fills to max_tokens", prompt: pingPrompt, sampling: `{"max_tokens":40,"ignore_eos":true}`,
			want: []choiceWant{{nil, "length", -1}}},
		{name: "script without eos just ends", prompt: promptJSON(t, "bare"), sampling: `{"max_tokens":10}`,
			want: []choiceWant{{[]int{20, 21}, "stop", -1}}},
		{name: "n=2 interleaves", prompt: pingPrompt, sampling: `{"max_tokens":10,"n":2}`,
			order: []int{0, 1, 0, 1, 0, 1, 0, 1},
			want:  []choiceWant{{[]int{10, 11, 12, 151645}, "stop", -1}, {[]int{10, 11, 12, 151645}, "stop", -1}}},
		{name: "include_usage", prompt: pingPrompt, sampling: `{"max_tokens":10}`, streamOpts: `{"include_usage":true}`,
			want: []choiceWant{{[]int{10, 11, 12, 151645}, "stop", -1}}, usage: true},
		{name: "continuous usage", prompt: pingPrompt, sampling: `{"max_tokens":10,"n":2}`,
			streamOpts: `{"include_usage":true,"continuous_usage_stats":true}`,
			want:       []choiceWant{{[]int{10, 11, 12, 151645}, "stop", -1}, {[]int{10, 11, 12, 151645}, "stop", -1}},
			usage:      true, continuous: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"token_ids":` + tc.prompt + `,"sampling_params":` + tc.sampling + `,"stream":true`
			if tc.streamOpts != "" {
				body += `,"stream_options":` + tc.streamOpts
			}
			status, _, out := post(t, url, body+"}")
			if status != 200 {
				t.Fatalf("status %d: %s", status, out)
			}
			evs := decodeEvents(t, out)
			got := make([][]int, len(tc.want))
			finishes := make([]string, len(tc.want))
			stops := make([]int, len(tc.want))
			var order []int
			var final *testEvent
			for i, ev := range evs {
				if len(ev.Choices) == 0 {
					if i != len(evs)-1 || ev.Usage == nil {
						t.Fatalf("choice-less event %d of %d", i, len(evs))
					}
					final = &evs[i]
					continue
				}
				if len(ev.Choices) != 1 {
					t.Fatalf("event with %d choices", len(ev.Choices))
				}
				c := ev.Choices[0]
				order = append(order, c.Index)
				if finishes[c.Index] != "" {
					t.Fatalf("choice %d has an event after its finish", c.Index)
				}
				got[c.Index] = append(got[c.Index], c.TokenIDs...)
				if (ev.Usage != nil) != tc.continuous {
					t.Fatalf("per-event usage %v, want %v", ev.Usage != nil, tc.continuous)
				}
				if ev.Usage != nil && ev.Usage.Completion != len(got[c.Index]) {
					t.Fatalf("continuous usage completion %d, want %d", ev.Usage.Completion, len(got[c.Index]))
				}
				if c.FinishReason != nil {
					finishes[c.Index] = *c.FinishReason
					stops[c.Index] = -1
					if c.StopReason != nil {
						stops[c.Index] = *c.StopReason
					}
					if len(c.WeightVersions) != 1 || c.WeightVersions[0].End != len(got[c.Index]) {
						t.Fatalf("weight_versions %+v on the last event of %d tokens", c.WeightVersions, len(got[c.Index]))
					}
				} else if c.WeightVersions != nil {
					t.Fatalf("weight_versions before the last event")
				}
			}
			total := 0
			for i, w := range tc.want {
				if w.tokens != nil && !equalInts(got[i], w.tokens) {
					t.Errorf("choice %d tokens %v, want %v", i, got[i], w.tokens)
				}
				if finishes[i] != w.finish || stops[i] != w.stopReason {
					t.Errorf("choice %d finish %q stop_reason %d, want %q %d", i, finishes[i], stops[i], w.finish, w.stopReason)
				}
				total += len(got[i])
			}
			if tc.order != nil && !equalInts(order, tc.order) {
				t.Errorf("event order %v, want %v", order, tc.order)
			}
			if (final != nil) != tc.usage {
				t.Fatalf("final usage event present %v, want %v", final != nil, tc.usage)
			}
			if final != nil && (final.Usage.Prompt != 1 || final.Usage.Completion != total || final.Usage.Total != total+1) {
				t.Errorf("final usage %+v, want completion %d", *final.Usage, total)
			}
			switch tc.name {
			case "min_tokens masks stop and eos":
				// 10 and 12 from the script (11 masked), filler, then EOS once 5 tokens are out.
				if len(got[0]) != 6 || got[0][0] != 10 || got[0][1] != 12 || got[0][5] != 151645 {
					t.Errorf("min_tokens output %v", got[0])
				}
			case "ignore_eos fills to max_tokens":
				if len(got[0]) != 40 || !equalInts(got[0][:3], []int{10, 11, 12}) {
					t.Errorf("ignore_eos output %v", got[0])
				}
				for _, id := range got[0] {
					if id == 151645 {
						t.Errorf("ignore_eos output contains EOS: %v", got[0])
					}
				}
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestLogprobsShape(t *testing.T) {
	pingPrompt := promptJSON(t, "ping")
	_, url := scripted(t, pingScript, Config{LogprobsShape: LogprobsShapeGenerate})
	_, _, out := post(t, url, `{"token_ids":`+pingPrompt+`,"sampling_params":{"max_tokens":2,"logprobs":3},"stream":true}`)
	for _, ev := range decodeEvents(t, out) {
		c := ev.Choices[0]
		if c.Logprobs == nil || len(c.Logprobs.Content) != 1 {
			t.Fatalf("logprobs %+v", c.Logprobs)
		}
		e := c.Logprobs.Content[0]
		if e.TokenID != c.TokenIDs[0] || e.Rank != 1 || len(e.Top) != 3 || e.Top[0].TokenID != e.TokenID {
			t.Fatalf("entry %+v for token %d: want the sampled token first with rank 1 and 3 entries", e, c.TokenIDs[0])
		}
		for j, top := range e.Top {
			if top.Rank != j+1 {
				t.Fatalf("top_logprobs ranks %+v", e.Top)
			}
		}
	}
	// logprobs=0 still lists the sampled token (vLLM: max(k, 1) entries).
	_, _, out = post(t, url, `{"token_ids":`+pingPrompt+`,"sampling_params":{"max_tokens":1,"logprobs":0}}`)
	if !strings.Contains(out, `"logprobs":{"content":[{"token_id":10,"logprob":`) ||
		!strings.Contains(out, `"rank":1,"top_logprobs":[{"token_id":10,"logprob":`) {
		t.Fatalf("non-stream logprobs: %s", out)
	}
}

// TestLogprobsShapeOpenAI checks the default shape against what vLLM's
// generate writes (ChatCompletionLogProbs with placeholders): the same
// tokens and values as the generate shape, key for key in vLLM's order.
func TestLogprobsShapeOpenAI(t *testing.T) {
	pingPrompt := promptJSON(t, "ping")
	_, openaiURL := scripted(t, pingScript, Config{})
	_, generateURL := scripted(t, pingScript, Config{LogprobsShape: LogprobsShapeGenerate})
	body := `{"token_ids":` + pingPrompt + `,"sampling_params":{"max_tokens":1,"logprobs":1}}`
	_, _, out := post(t, openaiURL, body)
	want := `"logprobs":{"content":[{"token":"token_id:10","logprob":-0.1054,"bytes":null,"top_logprobs":[` +
		`{"token":"token_id:10","logprob":-0.1054,"bytes":null}]}]}`
	if !strings.Contains(out, want) {
		t.Fatalf("openai-shape logprobs: %s\nwant %s", out, want)
	}
	_, _, gen := post(t, generateURL, body)
	wantGen := `"logprobs":{"content":[{"token_id":10,"logprob":-0.1054,"rank":1,"top_logprobs":[` +
		`{"token_id":10,"logprob":-0.1054,"rank":1}]}]}`
	if !strings.Contains(gen, wantGen) {
		t.Fatalf("generate-shape logprobs: %s\nwant %s", gen, wantGen)
	}
	if _, err := New(testmodel.Load(t, "qwen3"), Config{LogprobsShape: "dict"}); err == nil {
		t.Fatal("an unknown shape was accepted")
	}
}

func TestAbortMidStream(t *testing.T) {
	sim, url := scripted(t, pingScript, Config{TokenLatency: 50 * time.Millisecond})
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(
		`{"token_ids":[8196],"sampling_params":{"max_tokens":100},"stream":true,"stream_options":{"include_usage":true}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "abort-me")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	first, err := rd.ReadString('\n')
	if err != nil || !strings.Contains(first, `"token_ids":[`) {
		t.Fatalf("first event %q: %v", first, err)
	}
	status, _, body := post(t, strings.Replace(url, "generate", "abort_requests", 1), `{"request_ids":["generate-tokens-abort-me"]}`)
	if status != 200 || body != "" {
		t.Fatalf("abort: %d %q", status, body)
	}
	var rest strings.Builder
	for {
		line, err := rd.ReadString('\n')
		rest.WriteString(line)
		if err != nil {
			break
		}
	}
	out := rest.String()
	if !strings.Contains(out, `"finish_reason":"abort","stop_reason":null,"token_ids":[]`) ||
		!strings.HasSuffix(out, "data: [DONE]\n\n") || !strings.Contains(out, `"choices":[]}`) {
		t.Fatalf("after abort: %q", out)
	}
	if got := sim.Aborts(); len(got) != 1 || got[0] != "generate-tokens-abort-me" {
		t.Fatalf("Aborts() = %v", got)
	}
}

func TestClientDisconnectRecordsAbort(t *testing.T) {
	sim, url := scripted(t, pingScript, Config{TokenLatency: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(
		`{"request_id":"gone","token_ids":[8196],"sampling_params":{"max_tokens":100},"stream":true}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	if err := sim.WaitAbort(wctx, "generate-tokens-gone"); err != nil {
		t.Fatal(err)
	}
}

func TestKVTransferPrefill(t *testing.T) {
	_, url := scripted(t, pingScript, Config{})
	_, _, out := post(t, url, `{"token_ids":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17],"sampling_params":{"max_tokens":1},"kv_transfer_params":{"do_remote_decode":true}}`)
	var resp struct {
		KV map[string]any `json:"kv_transfer_params"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatal(err)
	}
	blocks, _ := resp.KV["remote_block_ids"].([]any)
	if resp.KV["do_remote_prefill"] != true || len(blocks) != 2 || resp.KV["remote_engine_id"] == "" || resp.KV["remote_port"] == nil {
		t.Fatalf("kv_transfer_params %v", resp.KV)
	}
	_, _, out = post(t, url, `{"token_ids":[1,2],"sampling_params":{"max_tokens":3},"kv_transfer_params":{"do_remote_prefill":true,"remote_block_ids":[0]}}`)
	if !strings.Contains(out, `"kv_transfer_params":null`) || !strings.Contains(out, `"completion_tokens":2`) {
		t.Fatalf("decode response: %s", out)
	}
}
