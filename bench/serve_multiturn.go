package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/vrender/vrender/tokenizer"
)

// MultiTurnOptions configures the multi-turn dataset: sessions of a
// conversation that grows by a user message and the model's answer each
// turn, as an agent's traffic does, so every turn's prompt is the previous
// one plus a little.
type MultiTurnOptions struct {
	Sessions  int // concurrent conversations
	Turns     int // user turns per session
	SystemLen int // tokens of a system prompt every session shares (0: none)
	FirstLen  int // tokens of each session's first user message
	TurnLen   int // tokens of every later user message
	OutputLen int // max tokens per answer
	// ThinkTime is the pause between an answer and the session's next
	// turn.
	ThinkTime       time.Duration
	Seed            uint64
	RequestIDPrefix string
	// ImageWidth and ImageHeight (both 0: none) give each session a
	// picture of that size before its first message's text, which every
	// later turn sends again with the history: an image conversation.
	// Each session's picture differs (random content) unless ImageShared.
	ImageWidth, ImageHeight int
	// ImageShared sends every session the same picture: a control under
	// which sessions do share the image's blocks.
	ImageShared bool
}

// MultiTurn is a generated multi-turn workload.
type MultiTurn struct {
	Options  MultiTurnOptions
	System   string
	Sessions [][]SampleRequest // per session, the user message of each turn
	// Images are the sessions' pictures as data: URLs (nil: none).
	Images []string
}

// MultiTurnDataset generates the sessions' messages with RandomDataset's
// text generator: a shared system prompt, then per session a first message
// of FirstLen tokens and Turns-1 of TurnLen tokens.
func MultiTurnDataset(tok *tokenizer.Tokenizer, o MultiTurnOptions) (*MultiTurn, error) {
	switch {
	case o.Sessions <= 0 || o.Turns <= 0:
		return nil, fmt.Errorf("multi-turn dataset: sessions (%d) and turns (%d) must be positive", o.Sessions, o.Turns)
	case o.FirstLen <= 0 || (o.Turns > 1 && o.TurnLen <= 0) || o.OutputLen <= 0 || o.SystemLen < 0:
		return nil, errors.New("multi-turn dataset: message and output lengths must be positive")
	case o.ThinkTime < 0:
		return nil, errors.New("multi-turn dataset: think time must not be negative")
	case o.ImageWidth < 0 || o.ImageHeight < 0 || (o.ImageWidth == 0) != (o.ImageHeight == 0):
		return nil, fmt.Errorf("multi-turn dataset: image size %dx%d must be positive", o.ImageWidth, o.ImageHeight)
	}
	mt := &MultiTurn{Options: o, Sessions: make([][]SampleRequest, o.Sessions)}
	if o.SystemLen > 0 {
		sys, err := RandomDataset(tok, RandomDatasetOptions{NumPrompts: 1, InputLen: o.SystemLen, OutputLen: 1, Seed: o.Seed ^ 0x5157})
		if err != nil {
			return nil, err
		}
		mt.System = sys[0].Prompt
	}
	first, err := RandomDataset(tok, RandomDatasetOptions{NumPrompts: o.Sessions, InputLen: o.FirstLen, OutputLen: o.OutputLen, Seed: o.Seed})
	if err != nil {
		return nil, err
	}
	var later []SampleRequest
	if o.Turns > 1 {
		if later, err = RandomDataset(tok, RandomDatasetOptions{NumPrompts: o.Sessions * (o.Turns - 1), InputLen: o.TurnLen,
			OutputLen: o.OutputLen, Seed: o.Seed + 1}); err != nil {
			return nil, err
		}
	}
	for s := range o.Sessions {
		turns := make([]SampleRequest, o.Turns)
		turns[0] = first[s]
		for t := 1; t < o.Turns; t++ {
			turns[t] = later[s*(o.Turns-1)+t-1]
		}
		for t := range turns {
			turns[t].ExpectedOutputLen = o.OutputLen
			turns[t].RequestID = o.RequestIDPrefix + "s" + strconv.Itoa(s) + "-t" + strconv.Itoa(t)
		}
		mt.Sessions[s] = turns
	}
	if o.ImageWidth > 0 {
		mt.Images = make([]string, o.Sessions)
		for s := range o.Sessions {
			seed := o.Seed + 1000 + uint64(s)
			if o.ImageShared {
				seed = o.Seed + 1000
			}
			if mt.Images[s], err = pictureDataURL(o.ImageWidth, o.ImageHeight, seed); err != nil {
				return nil, err
			}
		}
	}
	return mt, nil
}

// chatMessage is one message of a multi-turn request: Content is a
// string, or parts for a message with a picture.
type chatMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// userMessage is a session's user message: the first one carries the
// session's picture, when it has one, before the text.
func (mt *MultiTurn) userMessage(session, turn int, text string) chatMessage {
	if turn > 0 || mt.Images == nil {
		return chatMessage{Role: "user", Content: text}
	}
	return chatMessage{Role: "user", Content: []map[string]any{
		{"type": "image_url", "image_url": map[string]string{"url": mt.Images[session]}},
		{"type": "text", "text": text}}}
}

// turnBody is the chat request of a session's turn: the system prompt,
// every earlier user message with the answer it got, and the new message.
func (mt *MultiTurn) turnBody(model string, history []chatMessage, ignoreEOS bool, extra map[string]any) ([]byte, error) {
	p := map[string]any{
		"model":                 model,
		"messages":              history,
		"stream":                true,
		"stream_options":        map[string]any{"include_usage": true},
		"max_completion_tokens": mt.Options.OutputLen,
	}
	if ignoreEOS {
		p["ignore_eos"] = true
	}
	for k, v := range extra {
		p[k] = v
	}
	return json.Marshal(p)
}

// runMultiTurn runs every session: sessions start at offsets (the request
// rate applies to session starts), each sends its turns one after another,
// waiting for the answer and the think time in between. Outputs come back
// session by session, turn by turn, with the requests they answer.
func runMultiTurn(ctx context.Context, c *streamClient, o ServeOptions, offsets []time.Duration) ([]SampleRequest, []RequestOutput, error) {
	mt := o.MultiTurn
	var sem chan struct{}
	if o.MaxConcurrency > 0 {
		sem = make(chan struct{}, o.MaxConcurrency)
	}
	reqs := make([][]SampleRequest, len(mt.Sessions))
	outs := make([][]RequestOutput, len(mt.Sessions))
	errs := make([]error, len(mt.Sessions))
	var wg sync.WaitGroup
	start := time.Now()
	for s := range mt.Sessions {
		wg.Go(func() {
			if !sleepCtx(ctx, time.Until(start.Add(offsets[s]))) {
				return
			}
			var history []chatMessage
			if mt.System != "" {
				history = append(history, chatMessage{Role: "system", Content: mt.System})
			}
			for t, turn := range mt.Sessions[s] {
				if t > 0 && !sleepCtx(ctx, mt.Options.ThinkTime) {
					return
				}
				history = append(history, mt.userMessage(s, t, turn.Prompt))
				body, err := mt.turnBody(o.Model, history, o.IgnoreEOS, o.ExtraBody)
				if err != nil {
					errs[s] = err
					return
				}
				if sem != nil {
					select {
					case sem <- struct{}{}:
					case <-ctx.Done():
						return
					}
				}
				out := c.do(ctx, body, turn.RequestID, 0, turn.ExpectedOutputLen)
				if sem != nil {
					<-sem
				}
				turn.PromptLen = out.ServerPromptTokens
				out.PromptLen = turn.PromptLen
				reqs[s] = append(reqs[s], turn)
				outs[s] = append(outs[s], out)
				if !out.Success {
					return // the conversation cannot go on without its answer
				}
				history = append(history, chatMessage{Role: "assistant", Content: out.GeneratedText})
			}
		})
	}
	wg.Wait()
	var allReqs []SampleRequest
	var allOuts []RequestOutput
	for s := range reqs {
		if errs[s] != nil {
			return nil, nil, fmt.Errorf("session %d: %w", s, errs[s])
		}
		allReqs = append(allReqs, reqs[s]...)
		allOuts = append(allOuts, outs[s]...)
	}
	return allReqs, allOuts, nil
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// IdealCachedTokens is what a perfect prefix cache saves a multi-turn run:
// every turn after a session's first finds its previous turn's prompt in
// full blocks (at most its own length minus one, as vLLM recomputes a fully
// cached prompt's last token). Prompt lengths are the server's.
func IdealCachedTokens(mt *MultiTurn, reqs []SampleRequest, blockSize int) int64 {
	var ideal int64
	i := 0
	for _, sess := range mt.Sessions {
		prev := 0
		for t := range sess {
			if i >= len(reqs) || reqs[i].RequestID != sess[t].RequestID {
				break // the session ended early (a failed turn)
			}
			cur := reqs[i].PromptLen
			if t > 0 && cur > 0 {
				ideal += int64(min(prev, cur-1) / blockSize * blockSize)
			}
			prev = cur
			i++
		}
	}
	return ideal
}

// EngineCounters are one engine's prefix-cache counters from its /metrics.
type EngineCounters struct {
	URL                         string
	Requests                    float64 // enginesim_requests_total
	PromptTokens                float64 // vllm:prompt_tokens_total
	CacheQueries, CacheHits     float64 // vllm:prefix_cache_queries_total / _hits_total (tokens)
	HasRequests, HasCacheCounts bool
}

// PrefillTokens is the prompt tokens the engine computed.
func (e EngineCounters) PrefillTokens() float64 { return e.CacheQueries - e.CacheHits }

// ScrapeEngineCounters reads each engine's counters.
func ScrapeEngineCounters(ctx context.Context, client *http.Client, urls []string) ([]EngineCounters, error) {
	out := make([]EngineCounters, len(urls))
	for i, u := range urls {
		fams, err := scrapeFamilies(ctx, client, u)
		if err != nil {
			return nil, err
		}
		e := EngineCounters{URL: u}
		e.Requests, e.HasRequests = sumSamples(fams, "enginesim_requests_total")
		e.PromptTokens, _ = sumSamples(fams, "vllm:prompt_tokens_total")
		var ok1, ok2 bool
		e.CacheQueries, ok1 = sumSamples(fams, "vllm:prefix_cache_queries_total")
		e.CacheHits, ok2 = sumSamples(fams, "vllm:prefix_cache_hits_total")
		e.HasCacheCounts = ok1 && ok2
		out[i] = e
	}
	return out, nil
}

// PrefixReport is the multi-turn run's prefix-cache outcome, from the
// engines' counters (the difference of scrapes around the run).
type PrefixReport struct {
	Engines        []EngineCounters
	PromptTokens   float64 // queried tokens over all engines
	CachedTokens   float64
	PrefillTokens  float64 // computed: queried - cached
	HitRate        float64 // cached / queried
	IdealCached    float64
	IdealHitRate   float64 // ideal cached / queried
	OfIdeal        float64 // HitRate / IdealHitRate
	LoadMaxMean    float64 // requests: busiest engine / mean
	PrefillMaxMean float64 // prefill tokens: busiest engine / mean
}

func newPrefixReport(before, after []EngineCounters, ideal int64) *PrefixReport {
	r := &PrefixReport{IdealCached: float64(ideal)}
	var maxReq, sumReq, maxPre, sumPre float64
	for i := range after {
		d := EngineCounters{URL: after[i].URL, Requests: after[i].Requests - before[i].Requests,
			PromptTokens: after[i].PromptTokens - before[i].PromptTokens,
			CacheQueries: after[i].CacheQueries - before[i].CacheQueries, CacheHits: after[i].CacheHits - before[i].CacheHits,
			HasRequests: after[i].HasRequests, HasCacheCounts: after[i].HasCacheCounts}
		r.Engines = append(r.Engines, d)
		r.PromptTokens += d.CacheQueries
		r.CachedTokens += d.CacheHits
		maxReq, sumReq = max(maxReq, d.Requests), sumReq+d.Requests
		maxPre, sumPre = max(maxPre, d.PrefillTokens()), sumPre+d.PrefillTokens()
	}
	r.PrefillTokens = r.PromptTokens - r.CachedTokens
	n := float64(len(after))
	if r.PromptTokens > 0 {
		r.HitRate = r.CachedTokens / r.PromptTokens
		r.IdealHitRate = r.IdealCached / r.PromptTokens
	}
	if r.IdealHitRate > 0 {
		r.OfIdeal = r.HitRate / r.IdealHitRate
	}
	if sumReq > 0 {
		r.LoadMaxMean = maxReq / (sumReq / n)
	}
	if sumPre > 0 {
		r.PrefillMaxMean = maxPre / (sumPre / n)
	}
	return r
}
