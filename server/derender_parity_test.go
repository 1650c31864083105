package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/internal/parity"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/parsers"
)

type parityCase = parity.Case

// parityConfig is the parser configuration a case was produced with.
func parityConfig(c *parityCase) parsers.Config {
	r, tool := c.Parsers()
	return parsers.Config{ReasoningParser: r, ToolParser: tool, EnableAutoToolChoice: c.EnableAutoToolChoice}
}

// parityModels loads the golden set's tokenizers once per test.
type parityModels struct {
	models map[string]*model.Model
	hs     map[string]http.Handler
	es     map[string]*derender.Engine
}

func (p *parityModels) model(t *testing.T, name string) *model.Model {
	if m, ok := p.models[name]; ok {
		return m
	}
	dir := parity.ModelDir(t, name)
	var opts model.Options
	if name == "llama3_1" {
		opts.MaxModelLen = parity.Llama31MaxModelLen
	}
	m, err := model.Load(context.Background(), dir, opts)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	p.models[name] = m
	return m
}

func (p *parityModels) engine(c *parityCase, cacheSize int) *derender.Engine {
	return p.es[fmt.Sprintf("%s/%+v/%d", c.Tokenizer, parityConfig(c), cacheSize)]
}

func (p *parityModels) handler(t *testing.T, c *parityCase, cacheSize int) http.Handler {
	key := fmt.Sprintf("%s/%+v/%d", c.Tokenizer, parityConfig(c), cacheSize)
	if h, ok := p.hs[key]; ok {
		return h
	}
	m := p.model(t, c.Tokenizer)
	d, err := derender.New(m, derender.Config{Parsers: parityConfig(c), MaxLogprobs: 20, CacheSize: cacheSize})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Model: m, ServedModelNames: []string{"m"}, Logger: discardLogger(), Derender: d})
	if err != nil {
		t.Fatal(err)
	}
	p.hs[key] = h
	p.es[key] = d
	return h
}

func postJSON(t *testing.T, h http.Handler, path string, body any) []byte {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, rec.Code, rec.Body.String())
	}
	return rec.Body.Bytes()
}

// batchAnswer runs the non-streaming endpoint.
func batchAnswer(t *testing.T, h http.Handler, c *parityCase) parity.Answer {
	body := map[string]any{
		"model": "m", "prompt_tokens": len(c.PromptTokenIDs), "prompt_token_ids": c.PromptTokenIDs,
		"chat_request": c.ChatRequest,
		"generate_response": map[string]any{"request_id": "generate-tokens-chatcmpl-" + c.ID,
			"choices": []any{map[string]any{"index": 0, "token_ids": c.OutputTokenIDs, "finish_reason": c.FinishReasonEngine}}},
	}
	var res struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				Reasoning *string `json:"reasoning"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(postJSON(t, h, "/v1/chat/completions/derender", body), &res); err != nil {
		t.Fatal(err)
	}
	msg := res.Choices[0].Message
	a := parity.Answer{Content: parity.Null(msg.Content), Reasoning: parity.Null(msg.Reasoning), FinishReason: res.Choices[0].FinishReason}
	for _, tc := range msg.ToolCalls {
		if len(tc.ID) < len("chatcmpl-tool-")+32 {
			t.Errorf("tool call id %q is not vLLM-shaped", tc.ID)
		}
		a.Calls = append(a.Calls, tc.Function.Name+" "+tc.Function.Arguments)
	}
	return a
}

// streamChunk is the part of a derender stream response a client reads.
type streamChunk struct {
	Chunk struct {
		Choices []struct {
			Delta struct {
				Role      *string `json:"role"`
				Content   *string `json:"content"`
				Reasoning *string `json:"reasoning"`
				ToolCalls []struct {
					Index    int     `json:"index"`
					ID       *string `json:"id"`
					Function struct {
						Name      *string `json:"name"`
						Arguments *string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	} `json:"chunk"`
	StreamState json.RawMessage `json:"stream_state"`
}

// streamAnswer drives the streaming endpoint as vLLM's clients do: one
// call per generate event (the finish reason on the last one, then a
// usage-only event), echoing stream_state and re-sending the prompt and
// chat_request every time. With checkpoint unset the client drops
// vrender_checkpoint from the state (as vLLM's state model does), so the
// history path runs; with it set the client echoes only the checkpoint and
// sends no prompt after the first call.
func streamAnswer(t *testing.T, h http.Handler, c *parityCase, cuts []int, checkpoint bool) parity.Answer {
	var state json.RawMessage = json.RawMessage("null")
	var content, reasoning bytes.Buffer
	type call struct{ name, args string }
	var calls []call
	ids := map[int]string{}
	finish := ""
	send := func(choices []any, usage any) streamChunk {
		body := map[string]any{
			"stream": true, "model": "m", "prompt_tokens": len(c.PromptTokenIDs), "prompt_token_ids": c.PromptTokenIDs,
			"chat_request": c.ChatRequest, "stream_state": state,
			"generate_chunk": map[string]any{"request_id": "generate-tokens-chatcmpl-" + c.ID, "choices": choices, "usage": usage},
		}
		resumed := checkpoint && string(state) != "null"
		if resumed {
			delete(body, "prompt_token_ids")
		}
		var res streamChunk
		if err := json.Unmarshal(postJSON(t, h, "/v1/chat/completions/derender", body), &res); err != nil {
			t.Fatal(err)
		}
		var st map[string]json.RawMessage
		if err := json.Unmarshal(res.StreamState, &st); err != nil {
			t.Fatal(err)
		}
		if _, ok := st["vrender_checkpoint"]; !ok && (checkpoint || len(choices) > 0) {
			t.Fatalf("stream_state without vrender_checkpoint: %s", res.StreamState)
		}
		if resumed && string(st["output_token_ids"]) != "[]" {
			t.Fatalf("checkpoint path echoed output_token_ids %s", st["output_token_ids"])
		}
		if checkpoint {
			state, _ = json.Marshal(map[string]json.RawMessage{"vrender_checkpoint": st["vrender_checkpoint"]})
		} else {
			delete(st, "vrender_checkpoint")
			state, _ = json.Marshal(st)
		}
		return res
	}
	prev := 0
	for k, cut := range cuts {
		var fr any
		if k == len(cuts)-1 {
			fr = c.FinishReasonEngine
		}
		res := send([]any{map[string]any{"index": 0, "token_ids": c.OutputTokenIDs[prev:cut], "finish_reason": fr}}, nil)
		prev = cut
		if len(res.Chunk.Choices) != 1 {
			t.Fatalf("chunk %d: %d choices", k, len(res.Chunk.Choices))
		}
		ch := res.Chunk.Choices[0]
		if (ch.Delta.Role != nil) != (k == 0) {
			t.Fatalf("chunk %d: role %v", k, ch.Delta.Role)
		}
		if ch.Delta.Content != nil {
			content.WriteString(*ch.Delta.Content)
		}
		if ch.Delta.Reasoning != nil {
			reasoning.WriteString(*ch.Delta.Reasoning)
		}
		for _, tc := range ch.Delta.ToolCalls {
			for len(calls) <= tc.Index {
				calls = append(calls, call{})
			}
			if tc.ID != nil {
				if old, ok := ids[tc.Index]; ok && old != *tc.ID {
					t.Fatalf("tool call %d id changed: %s then %s", tc.Index, old, *tc.ID)
				}
				ids[tc.Index] = *tc.ID
			}
			if tc.Function.Name != nil {
				calls[tc.Index].name = *tc.Function.Name
			}
			if tc.Function.Arguments != nil {
				calls[tc.Index].args += *tc.Function.Arguments
			}
		}
		if ch.FinishReason != nil {
			finish = *ch.FinishReason
		}
	}
	n := len(c.OutputTokenIDs)
	res := send([]any{}, map[string]any{"prompt_tokens": len(c.PromptTokenIDs), "completion_tokens": n})
	if len(res.Chunk.Choices) != 0 || res.Chunk.Usage == nil || res.Chunk.Usage.CompletionTokens != n {
		t.Fatalf("usage-only event: %+v", res.Chunk)
	}
	a := parity.Answer{Content: content.String(), Reasoning: reasoning.String(), FinishReason: finish}
	for _, tc := range calls {
		a.Calls = append(a.Calls, tc.name+" "+tc.args)
	}
	return a
}

// TestDerenderParity runs every golden case through the HTTP endpoints:
// non-streaming must equal expect, and the stream (vLLM's stream_state
// protocol) must accumulate to it under every chunking, with the live-state
// cache on and off.
func TestDerenderParity(t *testing.T) {
	names, sets := parity.Load(t)
	p := &parityModels{models: map[string]*model.Model{}, hs: map[string]http.Handler{}, es: map[string]*derender.Engine{}}
	tally := parity.NewTally(names)
	for _, file := range names {
		for i := range sets[file] {
			c := &sets[file][i]
			cfg := parityConfig(c)
			t.Run(file+"/"+c.ID, func(t *testing.T) {
				defer tally.Record(file, t)
				parity.RequireParsers(t, cfg.ReasoningParser, cfg.ToolParser, parsers.HasReasoning, parsers.HasTool)
				for _, mode := range []struct {
					cacheSize  int
					checkpoint bool
				}{{64, false}, {0, false}, {0, true}} {
					cacheSize := mode.cacheSize
					h := p.handler(t, c, cacheSize)
					hits0, misses0 := p.engine(c, cacheSize).CacheStats()
					streams, calls := int64(0), int64(0)
					if got, want := batchAnswer(t, h, c), c.Want(false); !reflect.DeepEqual(got, want) {
						t.Fatalf("non-streaming (cache %d):\n got %+v\nwant %+v", cacheSize, got, want)
					}
					for k, cuts := range parity.Chunkings(len(c.OutputTokenIDs), uint64(i)+1) {
						streams++
						calls += int64(len(cuts))
						got, want := streamAnswer(t, h, c, cuts, mode.checkpoint), c.Want(true)
						if c.Stream == "relaxed" {
							got = parity.Answer{Reasoning: got.Reasoning, FinishReason: got.FinishReason}
							want = parity.Answer{Reasoning: want.Reasoning, FinishReason: want.FinishReason}
						}
						if !reflect.DeepEqual(got, want) {
							t.Fatalf("%s stream (cache %d, checkpoint %v), chunking %d %v:\n got %+v\nwant %+v", c.Stream, cacheSize, mode.checkpoint, k, cuts, got, want)
						}
					}
					// Only each stream's first call (empty history) may miss
					// with the cache on; with it off every call replays.
					hits, misses := p.engine(c, cacheSize).CacheStats()
					hits, misses = hits-hits0, misses-misses0
					if cacheSize > 0 && (misses != streams || hits != calls-streams) {
						t.Fatalf("cache: %d hits, %d misses for %d streams of %d calls", hits, misses, streams, calls)
					}
					if mode.checkpoint && (hits != 0 || misses != streams) {
						// Only the first call of each stream (no checkpoint yet) replays.
						t.Fatalf("checkpoint: %d hits, %d misses for %d streams", hits, misses, streams)
					}
					if cacheSize == 0 && !mode.checkpoint && (hits != 0 || misses != calls) {
						t.Fatalf("no cache: %d hits, %d misses for %d calls", hits, misses, calls)
					}
				}
			})
		}
	}
	tally.Log(t)
}
