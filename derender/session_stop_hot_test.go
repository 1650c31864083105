package derender

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/vrender/vrender/protocol"
)

// TestSessionStopHotPath checks Push's one-token steady state with stop
// strings against the general path (hotOK off) step by step: the same
// deltas, finish and stop reasons, at the same tokens.
func TestSessionStopHotPath(t *testing.T) {
	e, cr := benchEngine(t, 0)
	ids := benchOutput(t, e.model, 600)
	text := e.model.Tokenizer.Decode(ids, false)
	at := func(s string) string {
		if !strings.Contains(text, s) {
			t.Fatalf("%q not in the output", s)
		}
		return s
	}
	never := strings.Repeat("zq", 300)
	cases := []StopConfig{
		{Stop: []string{never}},
		{Stop: []string{at("Step 7: check")}},
		{Stop: []string{at("Step 7: check")}, IncludeInOutput: true},
		{Stop: []string{at("x12 := f(12)")}},
		{Stop: []string{never, at("layout. Step 4"), at("Step 3")}}, // the earlier listed wins where both are new
		{Stop: []string{at("Step 3"), ""}},
		{Stop: []string{at("Step 1: ")}, MinTokens: 3},
		{Stop: []string{at("Step 1: ")}, MinTokens: 30},
		{Stop: []string{at("</think>")}},
		{Stop: []string{at("file layout. Step 9: check the file layout. Step 10")}},
		{Stop: []string{at(`"main.go"`)}},
		{Stop: []string{at(`"main.go"`)}, IncludeInOutput: true, MinTokens: 5},
	}
	for i, cfg := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			hot, slow := stopSteps(t, e, cr, ids, cfg, true), stopSteps(t, e, cr, ids, cfg, false)
			if len(hot) != len(slow) {
				t.Fatalf("%d steps hot, %d general", len(hot), len(slow))
			}
			for k := range hot {
				if hot[k] != slow[k] {
					t.Fatalf("step %d:\n hot     %s\n general %s", k, hot[k], slow[k])
				}
			}
		})
	}
}

// stopSteps pushes ids one token per event and renders each step.
func stopSteps(t *testing.T, e *Engine, cr *protocol.ChatCompletionRequest, ids []int, cfg StopConfig, hot bool) []string {
	t.Helper()
	s, err := e.NewChatSession(cr, SessionConfig{Prompt: benchPrompt, Stop: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if !s.hotOK {
		t.Fatal("session without the steady state")
	}
	s.hotOK = hot
	fin := "length"
	var steps []string
	for i := range ids {
		var f *string
		if i == len(ids)-1 {
			f = &fin
		}
		step := s.Push(ids[i:i+1], nil, f)
		r := fmt.Sprintf("emit=%v matched=%v stop=%s", step.Emit, step.StopMatched, step.StopReason)
		if step.FinishReason != nil {
			r += " finish=" + *step.FinishReason
		}
		if step.Emit {
			d := step.Delta
			d.ToolCalls = append([]protocol.ToolCallDelta(nil), d.ToolCalls...)
			for j := range d.ToolCalls {
				d.ToolCalls[j].ID = nil // random per session
			}
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			r += " " + string(b)
		}
		steps = append(steps, r)
		if s.Done() {
			break
		}
	}
	return steps
}
