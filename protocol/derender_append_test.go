package protocol

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randDerenderChatStream(rng *rand.Rand) DerenderChatStreamResponse {
	r := wireGen{rng}
	maybe, str, strs, raw, flp := r.maybe, r.strp, r.strs, r.raw, r.logprob
	ints := func() []int { return r.ints(6) }
	c := ChatCompletionStreamResponse{ID: randWireString(rng), Object: "chat.completion.chunk", Created: rng.Int64N(1 << 40),
		Model: randWireString(rng), SystemFingerprint: str(), Metrics: raw()}
	if maybe() {
		c.Usage = &UsageInfo{PromptTokens: rng.IntN(9000), TotalTokens: rng.IntN(9000), CompletionTokens: rng.IntN(10),
			PromptTokensDetails: raw()}
	}
	if maybe() {
		c.Choices = []ChatStreamChoice{}
		for i := range rng.IntN(3) {
			ch := ChatStreamChoice{Index: i, FinishReason: str(), StopReason: raw(), TokenIDs: ints(),
				Delta: DeltaMessage{Role: str(), Content: str(), Reasoning: str(), ReasoningContent: str()}}
			if maybe() {
				ch.Delta.ToolCalls = []ToolCallDelta{}
				for j := range rng.IntN(3) {
					ch.Delta.ToolCalls = append(ch.Delta.ToolCalls, ToolCallDelta{Index: j, ID: str(), Type: str(),
						Function: FunctionDelta{Name: str(), Arguments: str()}})
				}
			}
			if maybe() {
				ch.Logprobs = &ChatCompletionLogProbs{}
				if maybe() {
					ch.Logprobs.Content = []ChatLogProbsContent{}
					for range rng.IntN(3) {
						e := ChatLogProbsContent{Token: randWireString(rng), Logprob: flp(), Bytes: ints()}
						if maybe() {
							e.TopLogprobs = []ChatLogProb{}
							for range rng.IntN(3) {
								e.TopLogprobs = append(e.TopLogprobs, ChatLogProb{Token: randWireString(rng), Logprob: flp(), Bytes: ints()})
							}
						}
						ch.Logprobs.Content = append(ch.Logprobs.Content, e)
					}
				}
			}
			c.Choices = append(c.Choices, ch)
		}
	}
	s := DerenderStreamState{PrevTokens: strs(), PrefixOffset: rng.IntN(9), ReadOffset: rng.IntN(9), RoleSent: maybe(),
		LogprobContextTokenIDs: ints(), LogprobTextOffset: rng.IntN(99), OutputTokenIDs: ints(), OutputChunkLens: ints(),
		ToolsStreamed: maybe(), LastToolCallIDs: strs()}
	if maybe() {
		s.VrenderCheckpoint = randWireString(rng)
	}
	return DerenderChatStreamResponse{Chunk: c, StreamState: s}
}

// TestDerenderAppendMatchesEncodingJSON is the differential test of the
// streaming chat derender writer against encoding/json, which wrote these
// bodies before.
func TestDerenderAppendMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 3))
	for i := range 3000 {
		r := randDerenderChatStream(rng)
		want, wantErr := oldMarshalJSON(r)
		got, gotErr := r.AppendJSON([]byte("p"))
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("case %d: err = %v, old err = %v", i, gotErr, wantErr)
		}
		if wantErr == nil && string(got) != "p"+string(want) {
			t.Fatalf("case %d:\n got: %s\nwant: p%s", i, got, want)
		}
	}
	for _, f := range []float64{math.Inf(-1), math.NaN()} {
		r := DerenderChatStreamResponse{Chunk: ChatCompletionStreamResponse{Choices: []ChatStreamChoice{{
			Logprobs: &ChatCompletionLogProbs{Content: []ChatLogProbsContent{{Logprob: new(f)}}}}}}}
		if _, err := r.AppendJSON(nil); err == nil {
			t.Errorf("no error for logprob %v", f)
		}
	}
}
