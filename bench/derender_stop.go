package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
)

// Stop benchmark shape (issue 19): 4,000 stop strings of 1,000 characters
// that never match, against none.
const (
	StopBenchStrings = 4000
	StopBenchChars   = 1000
	// TargetStopRatio bounds per-token CPU with those stops over none.
	TargetStopRatio = 1.5
)

// StopResult is per-token CPU of one-token ChatSession pushes with and
// without the stop strings. Setup (building the stop automaton once per
// request) is reported apart: it is per request, not per token.
type StopResult struct {
	Tokens          int     `json:"tokens"`
	NoStopNsPerTok  float64 `json:"no_stop_ns_per_token"`
	StopNsPerTok    float64 `json:"stop_ns_per_token"`
	Ratio           float64 `json:"stop_over_no_stop"`
	SetupNsPerReq   float64 `json:"stop_setup_ns_per_request"`
	NoStopSetupNs   float64 `json:"no_stop_setup_ns_per_request"`
	SameOutputBytes bool    `json:"same_output"`
}

func benchStops() []string {
	r := rand.New(rand.NewPCG(19, 5))
	stops := make([]string, StopBenchStrings)
	var b strings.Builder
	for i := range stops {
		b.Reset()
		for range StopBenchChars {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		stops[i] = b.String()
	}
	return stops
}

// measureStop pushes ids one token at a time through sessions with and
// without the stops, alternating rounds; the ratio is the median of the
// rounds' ratios, the ns figures the fastest round.
func measureStop(ctx context.Context, e *derender.Engine, cr *protocol.ChatCompletionRequest, ids []int, rounds int) (*StopResult, error) {
	stops := benchStops()
	res := &StopResult{Tokens: len(ids), SameOutputBytes: true}
	var with, without, ratios, setupWith, setupWithout []float64
	var want int
	for round := range rounds {
		var pair [2]float64
		for k, cfg := range []derender.StopConfig{{}, {Stop: stops}} {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			t0 := cpuTime()
			s, err := e.NewChatSession(cr, derender.SessionConfig{Prompt: derenderPrompt, Stop: cfg})
			if err != nil {
				return nil, fmt.Errorf("bench derender stop: session: %w", err)
			}
			setup := float64((cpuTime() - t0).Nanoseconds())
			// Collect setup's garbage (the automaton's build) now, so
			// that the collection it causes is not billed to the tokens
			// of whichever round the collector happens to run in.
			runtime.GC()
			t1 := cpuTime()
			n, err := pushAll(s, ids)
			if err != nil {
				return nil, err
			}
			t2 := cpuTime()
			if round == 0 && k == 0 {
				want = n
			} else if n != want {
				res.SameOutputBytes = false
			}
			pair[k] = float64((t2 - t1).Nanoseconds()) / float64(len(ids))
			if k == 0 {
				without, setupWithout = append(without, pair[0]), append(setupWithout, setup)
			} else {
				with, setupWith = append(with, pair[1]), append(setupWith, setup)
			}
		}
		if pair[0] > 0 {
			ratios = append(ratios, pair[1]/pair[0])
		}
	}
	res.NoStopNsPerTok, res.StopNsPerTok = slices.Min(without), slices.Min(with)
	res.SetupNsPerReq, res.NoStopSetupNs = slices.Min(setupWith), slices.Min(setupWithout)
	if len(ratios) > 0 {
		slices.Sort(ratios)
		res.Ratio = ratios[len(ratios)/2]
	}
	return res, nil
}

// pushAll streams ids one token per Push and returns the bytes of
// content and reasoning emitted.
func pushAll(s *derender.ChatSession, ids []int) (int, error) {
	fin := "length"
	var one [1]int
	var scratch []parsers.ToolCallDelta
	n := 0
	for i, id := range ids {
		one[0] = id
		var f *string
		if i == len(ids)-1 {
			f = &fin
		}
		step := s.Push(one[:], nil, f)
		if step.Emit {
			d := derender.ParserDelta(&step.Delta, scratch)
			n += len(d.Content) + len(d.Reasoning)
		}
	}
	if !s.Done() {
		return 0, fmt.Errorf("bench derender stop: session did not finish")
	}
	return n, nil
}

// stopRounds is how many alternating rounds measureStop runs.
const stopRounds = 21
