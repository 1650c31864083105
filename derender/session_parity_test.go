package derender

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/parity"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
)

// TestSessionParity runs every golden case through in-process chat
// sessions, the orchestrator's path (and its one-token hot path): collected
// (non-streaming) the answer must equal expect; streamed, under one chunk,
// one token per event and 20 random chunkings, the deltas must accumulate
// to it (relaxed cases: reasoning and finish_reason only, as the golden
// README says).
func TestSessionParity(t *testing.T) {
	names, sets := parity.Load(t)
	models := map[string]*model.Model{}
	engines := map[string]*Engine{}
	engine := func(t *testing.T, c *parity.Case) *Engine {
		r, tool := c.Parsers()
		cfg := parsers.Config{ReasoningParser: r, ToolParser: tool, EnableAutoToolChoice: c.EnableAutoToolChoice}
		key := fmt.Sprintf("%s/%+v", c.Tokenizer, cfg)
		if e, ok := engines[key]; ok {
			return e
		}
		m, ok := models[c.Tokenizer]
		if !ok {
			var opts model.Options
			if c.Tokenizer == "llama3_1" {
				opts.MaxModelLen = parity.Llama31MaxModelLen
			}
			var err error
			if m, err = model.Load(context.Background(), parity.ModelDir(t, c.Tokenizer), opts); err != nil {
				t.Fatalf("load %s: %v", c.Tokenizer, err)
			}
			models[c.Tokenizer] = m
		}
		e, err := New(m, Config{Parsers: cfg, MaxLogprobs: 20})
		if err != nil {
			t.Fatal(err)
		}
		engines[key] = e
		return e
	}
	tally := parity.NewTally(names)
	for _, file := range names {
		for i := range sets[file] {
			c := &sets[file][i]
			r, tool := c.Parsers()
			if (r != "" && !parsers.HasReasoning(r)) || (tool != "" && !parsers.HasTool(tool)) {
				t.Fatalf("%s/%s: parser %q/%q not registered", file, c.ID, r, tool)
			}
			t.Run(file+"/"+c.ID, func(t *testing.T) {
				defer tally.Record(file, t)
				e := engine(t, c)
				cr, err := protocol.DecodeChatCompletionRequest(c.ChatRequest)
				if err != nil {
					t.Fatalf("chat request: %v", err)
				}
				if got, want := sessionAnswer(t, e, cr, c, []int{len(c.OutputTokenIDs)}, true), c.Want(false); !reflect.DeepEqual(got, want) {
					t.Fatalf("collected:\n got %+v\nwant %+v", got, want)
				}
				for k, cuts := range parity.Chunkings(len(c.OutputTokenIDs), uint64(i)+1) {
					got, want := sessionAnswer(t, e, cr, c, cuts, false), c.Want(true)
					if c.Stream == "relaxed" {
						got = parity.Answer{Reasoning: got.Reasoning, FinishReason: got.FinishReason}
						want = parity.Answer{Reasoning: want.Reasoning, FinishReason: want.FinishReason}
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s stream, chunking %d %v:\n got %+v\nwant %+v", c.Stream, k, cuts, got, want)
					}
				}
			})
		}
	}
	tally.Log(t)
}

// sessionAnswer feeds a case's output to a session in the chunks cuts
// ends and returns its answer: Result when collect, else the accumulated
// deltas.
func sessionAnswer(t *testing.T, e *Engine, cr *protocol.ChatCompletionRequest, c *parity.Case, cuts []int, collect bool) parity.Answer {
	t.Helper()
	s, err := e.NewChatSession(cr, SessionConfig{Prompt: c.PromptTokenIDs, Collect: collect})
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	var content, reasoning strings.Builder
	type call struct{ name, args string }
	var calls []call
	finish := ""
	prev := 0
	for k, cut := range cuts {
		var fr *string
		if k == len(cuts)-1 {
			fr = &c.FinishReasonEngine
		}
		step := s.Push(c.OutputTokenIDs[prev:cut], nil, fr)
		prev = cut
		if !step.Emit {
			continue
		}
		d := &step.Delta
		if d.Content != nil {
			content.WriteString(*d.Content)
		}
		if d.Reasoning != nil {
			reasoning.WriteString(*d.Reasoning)
		}
		for _, tc := range d.ToolCalls {
			for len(calls) <= tc.Index {
				calls = append(calls, call{})
			}
			if tc.Function.Name != nil {
				calls[tc.Index].name = *tc.Function.Name
			}
			if tc.Function.Arguments != nil {
				calls[tc.Index].args += *tc.Function.Arguments
			}
		}
		if step.FinishReason != nil {
			finish = *step.FinishReason
		}
	}
	if !s.Done() {
		t.Fatal("session did not finish")
	}
	if collect {
		ch := s.Result()
		a := parity.Answer{Content: parity.Null(ch.Message.Content), Reasoning: parity.Null(ch.Message.Reasoning),
			FinishReason: *ch.FinishReason}
		for _, tc := range ch.Message.ToolCalls {
			a.Calls = append(a.Calls, tc.Function.Name+" "+tc.Function.Arguments)
		}
		return a
	}
	a := parity.Answer{Content: content.String(), Reasoning: reasoning.String(), FinishReason: finish}
	for _, tc := range calls {
		a.Calls = append(a.Calls, tc.name+" "+tc.args)
	}
	return a
}
