package protocol

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func (g wireGen) usage() *UsageInfo {
	if g.maybe() {
		return nil
	}
	return &UsageInfo{PromptTokens: g.rng.IntN(9000), TotalTokens: g.rng.IntN(9000), CompletionTokens: g.rng.IntN(10),
		PromptTokensDetails: g.raw()}
}

func (g wireGen) chatLogprobs() *ChatCompletionLogProbs {
	if g.maybe() {
		return nil
	}
	l := &ChatCompletionLogProbs{}
	if g.maybe() {
		l.Content = []ChatLogProbsContent{}
		for range g.rng.IntN(3) {
			e := ChatLogProbsContent{Token: g.str(), Logprob: g.logprob(), Bytes: g.ints(4)}
			if g.maybe() {
				e.TopLogprobs = []ChatLogProb{}
				for range g.rng.IntN(3) {
					e.TopLogprobs = append(e.TopLogprobs, ChatLogProb{Token: g.str(), Logprob: g.logprob(), Bytes: g.ints(4)})
				}
			}
			l.Content = append(l.Content, e)
		}
	}
	return l
}

func (g wireGen) completionLogprobs() *CompletionLogProbs {
	if g.maybe() {
		return nil
	}
	l := &CompletionLogProbs{TextOffset: g.ints(5), Tokens: g.strs()}
	if g.maybe() {
		l.TokenLogprobs = []*float64{}
		for range g.rng.IntN(4) {
			l.TokenLogprobs = append(l.TokenLogprobs, g.logprob())
		}
	}
	if g.maybe() {
		l.TopLogprobs = []*OrderedLogprobDict{}
		for range g.rng.IntN(4) {
			var d *OrderedLogprobDict
			if g.maybe() {
				d = &OrderedLogprobDict{}
				for range g.rng.IntN(4) {
					d.Set(g.str(), g.logprob())
				}
			}
			l.TopLogprobs = append(l.TopLogprobs, d)
		}
	}
	return l
}

func (g wireGen) chatMessage() ChatMessage {
	m := ChatMessage{Role: g.str(), Content: g.strp(), Refusal: g.strp(), Annotations: g.raw(), Audio: g.raw(),
		FunctionCall: g.raw(), Reasoning: g.strp(), ReasoningContent: g.raw()}
	if g.maybe() {
		m.ToolCalls = []ToolCall{}
		for range g.rng.IntN(3) {
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: g.str(), Type: g.str(), Function: FunctionCall{Name: g.str(), Arguments: g.str()}})
		}
	}
	return m
}

func randChatResponse(g wireGen) *ChatCompletionResponse {
	r := &ChatCompletionResponse{ID: g.str(), Object: "chat.completion", Created: g.rng.Int64N(1 << 40), Model: g.str(),
		ServiceTier: g.strp(), SystemFingerprint: g.strp(), Usage: g.usage(), PromptLogprobs: g.raw(),
		PromptTokenIDs: g.ints(6), KVTransferParams: g.raw(), Metrics: g.raw()}
	if g.maybe() {
		r.Choices = []ChatCompletionChoice{}
		for i := range g.rng.IntN(3) {
			r.Choices = append(r.Choices, ChatCompletionChoice{Index: i, Message: g.chatMessage(), Logprobs: g.chatLogprobs(),
				FinishReason: g.strp(), StopReason: g.raw(), TokenIDs: g.ints(6)})
		}
	}
	return r
}

func randServedChatResponse(g wireGen) *ServedChatResponse {
	r := &ServedChatResponse{ID: g.str(), Object: "chat.completion", Created: g.rng.Int64N(1 << 40), Model: g.str(),
		ServiceTier: g.strp(), SystemFingerprint: g.strp(), Usage: g.usage(), PromptLogprobs: g.raw(),
		PromptTokenIDs: g.ints(6), PromptText: g.strp(), KVTransferParams: g.raw()}
	if g.maybe() {
		r.Choices = []ServedChatChoice{}
		for i := range g.rng.IntN(3) {
			r.Choices = append(r.Choices, ServedChatChoice{Index: i, Message: g.chatMessage(), Logprobs: g.chatLogprobs(),
				FinishReason: g.strp(), StopReason: g.raw(), TokenIDs: g.ints(6), RoutedExperts: g.strp()})
		}
	}
	return r
}

func randCompletionResponse(g wireGen) *CompletionResponse {
	r := &CompletionResponse{ID: g.str(), Object: "text_completion", Created: g.rng.Int64N(1 << 40), Model: g.str(),
		ServiceTier: g.strp(), SystemFingerprint: g.strp(), Usage: g.usage(), KVTransferParams: g.raw()}
	if g.maybe() {
		r.Choices = []CompletionChoice{}
		for i := range g.rng.IntN(3) {
			r.Choices = append(r.Choices, CompletionChoice{Index: i, Text: g.str(), Logprobs: g.completionLogprobs(),
				FinishReason: g.strp(), StopReason: g.raw(), TokenIDs: g.ints(6), PromptLogprobs: g.raw(), PromptTokenIDs: g.ints(6)})
		}
	}
	return r
}

func randServedCompletionResponse(g wireGen) *ServedCompletionResponse {
	r := &ServedCompletionResponse{ID: g.str(), Object: "text_completion", Created: g.rng.Int64N(1 << 40), Model: g.str(),
		ServiceTier: g.strp(), SystemFingerprint: g.strp(), Usage: g.usage(), KVTransferParams: g.raw()}
	if g.maybe() {
		r.Choices = []ServedCompletionChoice{}
		for i := range g.rng.IntN(3) {
			r.Choices = append(r.Choices, ServedCompletionChoice{Index: i, Text: g.str(), Logprobs: g.completionLogprobs(),
				FinishReason: g.strp(), StopReason: g.raw(), TokenIDs: g.ints(6), PromptLogprobs: g.raw(),
				PromptTokenIDs: g.ints(6), RoutedExperts: g.strp()})
		}
	}
	return r
}

func randDerenderCompletionStream(g wireGen) *DerenderCompletionStreamResponse {
	c := CompletionStreamResponse{ID: g.str(), Object: "text_completion", Created: g.rng.Int64N(1 << 40), Model: g.str(),
		Usage: g.usage(), Metrics: g.raw()}
	if g.maybe() {
		c.Choices = []CompletionStreamChoice{}
		for i := range g.rng.IntN(3) {
			c.Choices = append(c.Choices, CompletionStreamChoice{Index: i, Text: g.str(), Logprobs: g.completionLogprobs(),
				FinishReason: g.strp(), StopReason: g.raw(), TokenIDs: g.ints(6)})
		}
	}
	return &DerenderCompletionStreamResponse{Chunk: c, StreamState: randDerenderChatStream(g.rng).StreamState}
}

func randErrorResponse(g wireGen) ErrorResponse {
	return ErrorResponse{Error: ErrorInfo{Message: g.str(), Type: g.str(), Param: g.strp(), Code: g.rng.IntN(600)}}
}

// oldOrderedLogprobDict is the dict's encoder before its append writer:
// each key and value through encoding/json.
func oldOrderedLogprobDict(d *OrderedLogprobDict) ([]byte, error) {
	if d == nil {
		return []byte("null"), nil
	}
	buf := []byte{'{'}
	for i, k := range d.Keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		kb, err := oldMarshalJSON(k)
		if err != nil {
			return nil, err
		}
		vb, err := oldMarshalJSON(d.Values[i])
		if err != nil {
			return nil, err
		}
		buf = append(append(append(buf, kb...), ':'), vb...)
	}
	return append(buf, '}'), nil
}

// TestResponseAppendMatchesEncodingJSON is the differential test of the
// response writers against encoding/json, which wrote these bodies
// before. encoding/json reaches OrderedLogprobDict through its
// MarshalJSON (now the append writer), which is checked against its old
// encoder on its own.
func TestResponseAppendMatchesEncodingJSON(t *testing.T) {
	g := wireGen{rand.New(rand.NewPCG(13, 4))}
	for i := range 3000 {
		for _, v := range []Appender{randChatResponse(g), randServedChatResponse(g), randCompletionResponse(g),
			randServedCompletionResponse(g), randDerenderCompletionStream(g), randErrorResponse(g)} {
			want, wantErr := oldMarshalJSON(v)
			got, gotErr := v.AppendJSON([]byte("p"))
			if (wantErr == nil) != (gotErr == nil) {
				t.Fatalf("case %d %T: err = %v, old err = %v", i, v, gotErr, wantErr)
			}
			if wantErr == nil && string(got) != "p"+string(want) {
				t.Fatalf("case %d %T:\n got: %s\nwant: p%s", i, v, got, want)
			}
		}
		if l := g.completionLogprobs(); l != nil {
			for _, d := range append(l.TopLogprobs, nil) {
				want, _ := oldOrderedLogprobDict(d)
				if got, _ := d.AppendJSON(nil); string(got) != string(want) {
					t.Fatalf("case %d: dict\n got: %s\nwant: %s", i, got, want)
				}
			}
		}
	}
	bad := new(math.Inf(-1))
	for _, v := range []Appender{
		&CompletionResponse{Choices: []CompletionChoice{{Logprobs: &CompletionLogProbs{TokenLogprobs: []*float64{bad}}}}},
		&ServedChatResponse{Choices: []ServedChatChoice{{Logprobs: &ChatCompletionLogProbs{Content: []ChatLogProbsContent{{Logprob: bad}}}}}},
		&DerenderCompletionStreamResponse{Chunk: CompletionStreamResponse{Choices: []CompletionStreamChoice{{Logprobs: &CompletionLogProbs{
			TopLogprobs: []*OrderedLogprobDict{{Keys: []string{"a"}, Values: []*float64{new(math.NaN())}}}}}}}},
	} {
		if _, err := v.AppendJSON(nil); err == nil {
			t.Errorf("%T: no error for a non-finite logprob", v)
		}
	}
}

// BenchmarkEncodeDerenderResponse encodes a non-streaming chat derender
// answer with logprobs: the append writer against encoding/json.
func BenchmarkEncodeDerenderResponse(b *testing.B) {
	content := "The weather in Paris is sunny, 21 °C. <tool_call>"
	lp := &ChatCompletionLogProbs{Content: []ChatLogProbsContent{}}
	for i := range 64 {
		lp.Content = append(lp.Content, ChatLogProbsContent{Token: "tok", Logprob: new(-0.25 * float64(i)), Bytes: []int{116, 111, 107},
			TopLogprobs: []ChatLogProb{{Token: "a", Logprob: new(-1.5), Bytes: []int{97}}, {Token: "b", Logprob: new(-2.5), Bytes: []int{98}}}})
	}
	r := &ChatCompletionResponse{ID: "chatcmpl-123", Object: "chat.completion", Created: 1700000000, Model: "m",
		Choices: []ChatCompletionChoice{{Message: ChatMessage{Role: "assistant", Content: &content,
			ToolCalls: []ToolCall{{ID: "call_1", Type: "function", Function: FunctionCall{Name: "get_weather", Arguments: `{"city": "Paris"}`}}}},
			Logprobs: lp, FinishReason: new("tool_calls"), TokenIDs: make([]int, 64)}},
		Usage: NewUsage(9000, 64), PromptTokenIDs: make([]int, 9000)}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf, _ = r.AppendJSON(buf[:0])
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = oldMarshalJSON(r)
		}
	})
}

// TestResponseTailKeys pins the members vLLM bf578e1's ChatCompletionResponse
// and CompletionResponse end with (model_dump writes every field, None as
// null): prompt_text (chat), kv_transfer_params, ec_transfer_params, metrics.
func TestResponseTailKeys(t *testing.T) {
	const transfer = `"kv_transfer_params":null,"ec_transfer_params":null,"metrics":null}`
	for _, tt := range []struct {
		v    Appender
		tail string
	}{
		{&ChatCompletionResponse{}, `"prompt_token_ids":null,"prompt_text":null,` + transfer},
		{&ServedChatResponse{}, `"prompt_token_ids":null,"prompt_text":null,` + transfer},
		{&CompletionResponse{}, `"usage":null,` + transfer},
		{&ServedCompletionResponse{}, `"usage":null,` + transfer},
	} {
		got, err := tt.v.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(string(got), tt.tail) {
			t.Errorf("%T: %s, want it to end %s", tt.v, got, tt.tail)
		}
	}
}
