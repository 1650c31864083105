package derender

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/tokenizer"
)

// completionSkip is skip_special_tokens of a completion_request (default
// true).
func completionSkip(p *protocol.CompletionDecodeParams) bool {
	return p == nil || p.SkipSpecialTokens == nil || *p.SkipSpecialTokens
}

// Completion is the non-streaming completions derender: no parsing ever,
// choices flattened with a running index, usage summed.
func (e *Engine) Completion(ctx context.Context, req *protocol.DerenderCompletionRequest, model string) (*protocol.CompletionResponse, error) {
	if len(req.GenerateResponses) == 0 {
		return nil, badRequest("generate_responses must not be empty")
	}
	gens := make([]*protocol.GenerateResponse, len(req.GenerateResponses))
	for i := range req.GenerateResponses {
		gens[i] = &req.GenerateResponses[i]
	}
	if err := e.checkBounds(gens); err != nil {
		return nil, err
	}
	if err := checkPromptTokens(req.PromptTokens...); err != nil {
		return nil, err
	}
	opts := tokenizer.DetokOptions{SkipSpecialTokens: completionSkip(req.CompletionRequest)}
	first := gens[0]
	res := &protocol.CompletionResponse{ID: first.RequestID, Object: "text_completion", Created: e.now().Unix(),
		Model: model, Choices: []protocol.CompletionChoice{}, KVTransferParams: first.KVTransferParams}
	for _, g := range gens[1:] {
		if !sameJSON(g.KVTransferParams, first.KVTransferParams) {
			res.KVTransferParams = nil
		}
	}
	promptTotal, completionTotal, index := 0, 0, 0
	st := e.stages.Load()
	for i, g := range gens {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		prompt := g.PromptTokenIDs
		if req.PromptTokenIDs != nil && req.PromptTokenIDs[i] != nil {
			prompt = req.PromptTokenIDs[i]
		}
		for _, c := range g.Choices {
			if len(c.TokenIDs) == 0 {
				return nil, badRequest("choice %d in response %s has empty or null token_ids", c.Index, g.RequestID)
			}
			start := st.Start()
			text := tokenizer.NewDetokenizer(e.model.Tokenizer, opts, prompt).Push(c.TokenIDs)
			st.Since(telemetry.StageDetokenize, start)
			res.Choices = append(res.Choices, protocol.CompletionChoice{Index: index, Text: text,
				Logprobs: completionLogprobs(e.resolveLogprobs(c.Logprobs, nil), 0), FinishReason: c.FinishReason,
				StopReason: json.RawMessage("null")})
			completionTotal += len(c.TokenIDs)
			index++
		}
		if req.PromptTokens != nil {
			promptTotal += req.PromptTokens[i]
		}
	}
	res.Usage = protocol.NewUsage(promptTotal, completionTotal)
	return res, nil
}

// sameJSON reports whether two raw JSON values (absent meaning null) are
// the same value as comparing them decoded into Go values did: key order,
// repeated keys and number spelling aside, numbers compared as float64.
// A number beyond float64's range made the decode fail, so such values
// are the same only byte for byte.
func sameJSON(a, b json.RawMessage) bool {
	na, okA := goComparable(a)
	nb, okB := goComparable(b)
	switch {
	case okA && okB:
		return sameNode(na, nb)
	case !okA && !okB:
		return bytes.Equal(a, b)
	}
	return false
}

// goComparable parses raw, false where a Go decode into any would have
// failed.
func goComparable(raw []byte) (*wire.Node, bool) {
	if len(raw) == 0 {
		return wire.NullNode, true
	}
	n, err := wire.Parse(raw)
	return n, err == nil && numbersFit(n)
}

func numbersFit(n *wire.Node) bool {
	switch n.Kind {
	case wire.Number:
		_, err := strconv.ParseFloat(n.S, 64)
		return err == nil
	case wire.Array:
		for _, c := range n.Arr {
			if !numbersFit(c) {
				return false
			}
		}
	case wire.Object:
		for _, c := range n.Vals {
			if !numbersFit(c) {
				return false
			}
		}
	}
	return true
}

func sameNode(x, y *wire.Node) bool {
	if x.Kind != y.Kind {
		return false
	}
	switch x.Kind {
	case wire.Bool:
		return x.B == y.B
	case wire.String:
		return x.S == y.S
	case wire.Number:
		fx, _ := strconv.ParseFloat(x.S, 64)
		fy, _ := strconv.ParseFloat(y.S, 64)
		return math.Float64bits(fx) == math.Float64bits(fy) // -0 is not 0: they were written apart
	case wire.Array:
		if len(x.Arr) != len(y.Arr) {
			return false
		}
		for i := range x.Arr {
			if !sameNode(x.Arr[i], y.Arr[i]) {
				return false
			}
		}
	case wire.Object:
		if len(x.Keys) != len(y.Keys) {
			return false
		}
		for i, k := range x.Keys {
			v, ok := y.Get(k)
			if !ok || !sameNode(x.Vals[i], v) {
				return false
			}
		}
	}
	return true
}

// CompletionStream derenders one generate stream event for completions;
// text_offset stays absolute through logprob_text_offset.
func (e *Engine) CompletionStream(ctx context.Context, req *protocol.DerenderCompletionStreamRequest, model string) (*protocol.DerenderCompletionStreamResponse, error) {
	chunk := &req.GenerateChunk
	if len(chunk.Choices) > 1 {
		return nil, badRequest("derender_completion_stream expects at most one choice per chunk")
	}
	if err := e.checkStreamChunk(chunk); err != nil {
		return nil, err
	}
	if err := checkUsageCount("prompt_tokens", req.PromptTokens); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	state := protocol.DerenderStreamState{}
	if req.StreamState != nil {
		state = *req.StreamState
	}
	prompt := req.PromptTokenIDs
	if prompt == nil {
		prompt = chunk.PromptTokenIDs
	}
	d, err := e.resumeDetok(&state, req.StreamState == nil, prompt,
		tokenizer.DetokOptions{SkipSpecialTokens: completionSkip(req.CompletionRequest)})
	if err != nil {
		return nil, err
	}
	res := &protocol.DerenderCompletionStreamResponse{Chunk: protocol.CompletionStreamResponse{
		ID: chunk.RequestID, Object: "text_completion", Created: e.now().Unix(), Model: model,
		Choices: []protocol.CompletionStreamChoice{}, Usage: streamUsage(chunk.Usage, req.PromptTokens), Metrics: chunk.Metrics,
	}}
	st := e.stages.Load()
	for _, c := range chunk.Choices {
		start := st.Start()
		text := d.Push(c.TokenIDs)
		st.Since(telemetry.StageDetokenize, start)
		lp := completionLogprobs(e.resolveLogprobs(c.Logprobs, state.LogprobContextTokenIDs), state.LogprobTextOffset)
		state.LogprobContextTokenIDs = contextTail(state.LogprobContextTokenIDs, c.TokenIDs)
		state.LogprobTextOffset += utf8.RuneCountInString(text)
		res.Chunk.Choices = append(res.Chunk.Choices, protocol.CompletionStreamChoice{Index: c.Index, Text: text,
			Logprobs: lp, FinishReason: c.FinishReason, StopReason: json.RawMessage("null")})
	}
	setDetokState(&state, d)
	res.StreamState = normalizeState(state)
	return res, nil
}
