package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
)

// The encoders below are the ones the append writers replaced (encoding/json
// over plain mirrors of the types, with the hand-written SamplingParams
// object inside it), kept as the differential oracle: every response body
// must stay byte for byte what they wrote.

func oldMarshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return wire.UnescapeLineSeparators(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

type oldSampling struct{ p SamplingParams }

func (o oldSampling) MarshalJSON() ([]byte, error) { return oldMarshalSamplingParams(o.p) }

// oldStructured is StructuredOutputsParams as it was when json was kept as
// text: render put the Python-compact form of the client's value there
// (pylax.AppendPyCompact, now done by AppendJSON). Its JSON shadows the
// embedded one and, as the first field, keeps its place.
type oldStructured struct {
	JSON json.RawMessage `json:"json"`
	StructuredOutputsParams
}

func oldStructuredOf(s *StructuredOutputsParams) *oldStructured {
	var js json.RawMessage
	if s.JSON != nil {
		js = pylax.AppendPyCompact(nil, s.JSON)
	}
	return &oldStructured{js, *s}
}

type oldGenerateRequest struct {
	RequestID             string          `json:"request_id"`
	TokenIDs              []int           `json:"token_ids"`
	TokenOffsets          [][2]int        `json:"token_offsets"`
	Features              json.RawMessage `json:"features"`
	ContentParts          json.RawMessage `json:"content_parts"`
	SamplingParams        oldSampling     `json:"sampling_params"`
	Model                 *string         `json:"model"`
	ReasoningEnded        *bool           `json:"reasoning_ended"`
	ReasoningParserKwargs json.RawMessage `json:"reasoning_parser_kwargs"`
	ReturnTokenIDs        *bool           `json:"return_token_ids"`
	OutputMode            string          `json:"output_mode"`
	Stream                *bool           `json:"stream"`
	StreamOptions         *StreamOptions  `json:"stream_options"`
	CacheSalt             *string         `json:"cache_salt"`
	Priority              int64           `json:"priority"`
	KVTransferParams      json.RawMessage `json:"kv_transfer_params"`
	ECTransferParams      json.RawMessage `json:"ec_transfer_params"`
}

func oldMarshalGenerateRequest(g GenerateRequest) ([]byte, error) {
	if g.TokenIDs == nil {
		g.TokenIDs = []int{}
	}
	for _, raw := range []*json.RawMessage{&g.Features, &g.ContentParts, &g.ReasoningParserKwargs,
		&g.KVTransferParams, &g.ECTransferParams} {
		if len(*raw) == 0 {
			*raw = nil
		}
	}
	return oldMarshalJSON(oldGenerateRequest{g.RequestID, g.TokenIDs, g.TokenOffsets, g.Features, g.ContentParts,
		oldSampling{g.SamplingParams}, g.Model, g.ReasoningEnded, g.ReasoningParserKwargs, g.ReturnTokenIDs,
		g.OutputMode, g.Stream, g.StreamOptions, g.CacheSalt, g.Priority, g.KVTransferParams, g.ECTransferParams})
}

type oldTokenizeResponse struct {
	Count       int      `json:"count"`
	MaxModelLen int      `json:"max_model_len"`
	Tokens      []int    `json:"tokens"`
	TokenStrs   []string `json:"token_strs"`
}

// oldMarshalSamplingParams is the encoder SamplingParams.AppendJSON
// replaced, kept as the differential oracle.
func oldMarshalSamplingParams(p SamplingParams) ([]byte, error) {
	w := &oldObjectWriter{}
	w.buf.WriteByte('{')
	if p.N != 1 {
		w.key("n").WriteString(strconv.Itoa(p.N))
	}
	w.float("presence_penalty", p.PresencePenalty, 0)
	w.float("frequency_penalty", p.FrequencyPenalty, 0)
	w.float("repetition_penalty", p.RepetitionPenalty, 1)
	w.float("temperature", p.Temperature, 1)
	w.float("top_p", p.TopP, 1)
	if p.TopK != 0 {
		w.key("top_k").WriteString(strconv.Itoa(p.TopK))
	}
	w.float("min_p", p.MinP, 0)
	if p.Seed != nil {
		w.key("seed").WriteString(strconv.FormatInt(*p.Seed, 10))
	}
	if p.Stop != nil {
		w.value("stop", p.Stop)
	}
	if p.StopTokenIDs != nil {
		w.value("stop_token_ids", p.StopTokenIDs)
	}
	w.boolean("ignore_eos", p.IgnoreEOS, false)
	switch {
	case p.MaxTokens == nil:
		w.key("max_tokens").WriteString("null")
	case *p.MaxTokens != 16 || p.ExplicitMaxTokens:
		w.key("max_tokens").WriteString(strconv.Itoa(*p.MaxTokens))
	}
	if p.MinTokens != 0 {
		w.key("min_tokens").WriteString(strconv.Itoa(p.MinTokens))
	}
	if p.Logprobs != nil {
		w.key("logprobs").WriteString(strconv.Itoa(*p.Logprobs))
	}
	if p.PromptLogprobs != nil {
		w.key("prompt_logprobs").WriteString(strconv.Itoa(*p.PromptLogprobs))
	}
	if p.LogprobTokenIDs != nil {
		w.value("logprob_token_ids", p.LogprobTokenIDs)
	}
	w.boolean("flat_logprobs", p.FlatLogprobs, false)
	w.boolean("detokenize", p.Detokenize, true)
	w.boolean("skip_special_tokens", p.SkipSpecialTokens, true)
	w.boolean("spaces_between_special_tokens", p.SpacesBetweenSpecialTokens, true)
	w.boolean("include_stop_str_in_output", p.IncludeStopStrInOutput, false)
	if p.OutputKind != OutputKindCumulative {
		w.key("output_kind").WriteString(strconv.Itoa(int(p.OutputKind)))
	}
	w.boolean("skip_clone", p.SkipClone, false)
	if p.OutputTextBufferLength != 0 {
		w.key("output_text_buffer_length").WriteString(strconv.Itoa(p.OutputTextBufferLength))
	}
	if p.StructuredOutputs != nil {
		w.value("structured_outputs", oldStructuredOf(p.StructuredOutputs))
	}
	if p.LogitBias != nil {
		// json.dumps writes the int keys as strings.
		w.key("logit_bias").WriteByte('{')
		for i, lb := range p.LogitBias {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			fmt.Fprintf(&w.buf, "%q:%s", strconv.FormatInt(lb.TokenID, 10), pyJSONFloat(lb.Bias))
		}
		w.buf.WriteByte('}')
	}
	if p.AllowedTokenIDs != nil {
		w.value("allowed_token_ids", p.AllowedTokenIDs)
	}
	if p.ExtraArgs != nil {
		w.key("extra_args").Write(p.ExtraArgs)
	}
	if p.RoutedExpertsPromptStart != 0 {
		w.key("routed_experts_prompt_start").WriteString(strconv.Itoa(p.RoutedExpertsPromptStart))
	}
	if p.BadWords != nil {
		w.value("bad_words", p.BadWords)
	}
	if p.SkipReadingPrefixCache != nil {
		w.key("skip_reading_prefix_cache").WriteString(strconv.FormatBool(*p.SkipReadingPrefixCache))
	}
	if p.ThinkingTokenBudget != nil {
		w.key("thinking_token_budget").WriteString(strconv.Itoa(*p.ThinkingTokenBudget))
	}
	if p.RepetitionDetection != nil {
		w.key("repetition_detection").Write(p.RepetitionDetection)
	}
	w.buf.WriteByte('}')
	return w.buf.Bytes(), w.err
}

// oldObjectWriter writes a JSON object member by member.
type oldObjectWriter struct {
	buf bytes.Buffer
	n   int
	err error
}

func (w *oldObjectWriter) key(name string) *bytes.Buffer {
	if w.n > 0 {
		w.buf.WriteByte(',')
	}
	w.n++
	w.buf.WriteByte('"')
	w.buf.WriteString(name)
	w.buf.WriteString(`":`)
	return &w.buf
}

func (w *oldObjectWriter) float(name string, v, def float64) {
	if v != def {
		w.key(name).WriteString(pyJSONFloat(v))
	}
}

func (w *oldObjectWriter) boolean(name string, v, def bool) {
	if v != def {
		w.key(name).WriteString(strconv.FormatBool(v))
	}
}

func (w *oldObjectWriter) value(name string, v any) {
	b, err := oldMarshalJSON(v)
	if err != nil && w.err == nil {
		w.err = err
	}
	w.key(name).Write(b)
}

func randGenerateRequest(rng *rand.Rand) GenerateRequest {
	r := wireGen{rng}
	maybe, str, boolp, strs, raw, intp := r.maybe, r.strp, r.boolp, r.strs, r.raw, r.intp
	ints := func() []int { return r.ints(20) }
	node := func(raw json.RawMessage) *wire.Node {
		n, err := wire.Parse(raw)
		if err != nil {
			return nil // nil and absent members
		}
		return n
	}
	floats := []float64{0, 1, 0.7, -2, 1e-7, 1e22, 123456789.125, math.Inf(1), math.NaN(), 0.1 + 0.2}
	fl := func() float64 { return floats[rng.IntN(len(floats))] }
	p := NewSamplingParams()
	if maybe() {
		p.N = rng.IntN(5)
		p.PresencePenalty, p.FrequencyPenalty, p.RepetitionPenalty = fl(), fl(), fl()
		p.Temperature, p.TopP, p.TopK, p.MinP = fl(), fl(), rng.IntN(50)-1, fl()
		if maybe() {
			p.Seed = new(rng.Int64() - rng.Int64())
		}
		p.Stop, p.StopTokenIDs, p.IgnoreEOS = strs(), ints(), maybe()
		p.MaxTokens, p.ExplicitMaxTokens = intp(), maybe()
		if maybe() {
			p.MaxTokens = new(16)
		}
		p.MinTokens, p.Logprobs, p.PromptLogprobs, p.LogprobTokenIDs = rng.IntN(3), intp(), intp(), ints()
		p.FlatLogprobs, p.Detokenize, p.SkipSpecialTokens = maybe(), maybe(), maybe()
		p.SpacesBetweenSpecialTokens, p.IncludeStopStrInOutput = maybe(), maybe()
		p.OutputKind, p.SkipClone, p.OutputTextBufferLength = RequestOutputKind(rng.IntN(3)), maybe(), rng.IntN(3)
		if maybe() {
			p.StructuredOutputs = &StructuredOutputsParams{JSON: node(raw()), Regex: str(), Choice: strs(), Grammar: str(),
				JSONObject: boolp(), DisableAnyWhitespace: maybe(), DisableAdditionalProperties: maybe(),
				WhitespacePattern: str(), StructuralTag: str()}
		}
		if maybe() {
			p.LogitBias = []LogitBias{}
			for range rng.IntN(4) {
				p.LogitBias = append(p.LogitBias, LogitBias{TokenID: rng.Int64N(1 << 40), Bias: fl()})
			}
		}
		p.AllowedTokenIDs, p.ExtraArgs, p.RoutedExpertsPromptStart = ints(), raw(), rng.IntN(3)
		p.BadWords, p.SkipReadingPrefixCache, p.ThinkingTokenBudget, p.RepetitionDetection = strs(), boolp(), intp(), raw()
	}
	g := GenerateRequest{RequestID: randWireString(rng), TokenIDs: ints(), Features: raw(), ContentParts: raw(),
		SamplingParams: p, Model: str(), ReasoningEnded: boolp(), ReasoningParserKwargs: raw(), ReturnTokenIDs: boolp(),
		OutputMode: OutputModeTokens, Stream: boolp(), CacheSalt: str(), Priority: rng.Int64() - rng.Int64(),
		KVTransferParams: raw(), ECTransferParams: raw()}
	if maybe() {
		g.TokenOffsets = [][2]int{}
		for range rng.IntN(3) {
			g.TokenOffsets = append(g.TokenOffsets, [2]int{rng.IntN(100), rng.IntN(100)})
		}
	}
	if maybe() {
		g.StreamOptions = &StreamOptions{IncludeUsage: boolp(), ContinuousUsageStats: boolp()}
	}
	if maybe() {
		g.OutputMode = randWireString(rng)
	}
	return g
}

// TestAppendJSONMatchesOldEncoder is the differential test of the append
// writers against the encoders they replaced, on random values that reach
// every field and escaping rule.
func TestAppendJSONMatchesOldEncoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 2))
	for i := range 3000 {
		g := randGenerateRequest(rng)
		want, wantErr := oldMarshalGenerateRequest(g)
		got, gotErr := g.AppendJSON([]byte("prefix"))
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("case %d: err = %v, old err = %v", i, gotErr, wantErr)
		}
		if wantErr == nil && string(got) != "prefix"+string(want) {
			t.Fatalf("case %d:\n got: %s\nwant: prefix%s", i, got, want)
		}
		viaMarshal, err := MarshalJSON(g)
		if wantErr == nil && (err != nil || string(viaMarshal) != string(want)) {
			t.Fatalf("case %d: MarshalJSON = %s, %v\nwant: %s", i, viaMarshal, err, want)
		}
		list, err := GenerateRequests{g, g}.AppendJSON(nil)
		oldList, oldErr := oldMarshalJSON([]oldMarshaled{{g}, {g}})
		if wantErr == nil && (err != nil || oldErr != nil || string(list) != string(oldList)) {
			t.Fatalf("case %d: list = %s, %v\nwant: %s, %v", i, list, err, oldList, oldErr)
		}

		tr := TokenizeResponse{Count: rng.IntN(10), MaxModelLen: rng.IntN(1 << 20), Tokens: g.TokenIDs, TokenStrs: g.SamplingParams.Stop}
		oldTR := oldTokenizeResponse(tr)
		if oldTR.Tokens == nil {
			oldTR.Tokens = []int{}
		}
		wantTR, _ := oldMarshalJSON(oldTR)
		if gotTR, _ := tr.AppendJSON(nil); string(gotTR) != string(wantTR) {
			t.Fatalf("case %d: tokenize\n got: %s\nwant: %s", i, gotTR, wantTR)
		}
		dr := DetokenizeResponse{Prompt: g.RequestID}
		wantDR, _ := oldMarshalJSON(struct {
			Prompt string `json:"prompt"`
		}{dr.Prompt})
		if gotDR, _ := dr.AppendJSON(nil); string(gotDR) != string(wantDR) {
			t.Fatalf("case %d: detokenize\n got: %s\nwant: %s", i, gotDR, wantDR)
		}
	}
}

type oldMarshaled struct{ g GenerateRequest }

func (o oldMarshaled) MarshalJSON() ([]byte, error) { return oldMarshalGenerateRequest(o.g) }

// TestAppendRawRefusesInvalid: an invalid raw member is an error, as it was
// for encoding/json, never a broken body.
func TestAppendRawRefusesInvalid(t *testing.T) {
	g := GenerateRequest{KVTransferParams: json.RawMessage(`{"a":`)}
	if _, err := g.AppendJSON(nil); err == nil {
		t.Fatal("no error for an invalid raw member")
	}
	if _, err := oldMarshalGenerateRequest(g); err == nil {
		t.Fatal("old encoder accepted it")
	}
}

// BenchmarkEncodeGenerateRequest is the render response of a 9k-token
// prompt, through the append writer and through the encoder it replaced.
func BenchmarkEncodeGenerateRequest(b *testing.B) {
	g := GenerateRequest{RequestID: "chatcmpl-0123456789abcdef0123456789abcdef", TokenIDs: make([]int, 9000),
		SamplingParams: NewSamplingParams(), Model: new("m"), OutputMode: OutputModeTokens}
	for i := range g.TokenIDs {
		g.TokenIDs[i] = (i * 7919) % 151000
	}
	g.SamplingParams.MaxTokens = new(32000)
	g.SamplingParams.OutputKind = OutputKindFinalOnly
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf, _ = g.AppendJSON(buf[:0])
		}
	})
	b.Run("old", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = oldMarshalGenerateRequest(g)
		}
	})
}
