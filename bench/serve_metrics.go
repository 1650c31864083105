package bench

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// PercentileValue is one requested percentile of a metric, in milliseconds.
type PercentileValue struct {
	P     float64
	Value float64
}

// LatencyStat summarises one latency metric in milliseconds, like vLLM's
// mean/median/std/percentiles_*_ms fields (0 everywhere when no sample).
type LatencyStat struct {
	Mean, Median, Std float64
	Percentiles       []PercentileValue
}

// ServeMetrics is vLLM's BenchmarkMetrics.
type ServeMetrics struct {
	Completed             int
	Failed                int
	TotalInput            int
	TotalOutput           int
	RequestThroughput     float64
	RequestGoodput        float64
	OutputThroughput      float64
	TotalTokenThroughput  float64
	TTFT, TPOT, ITL, E2EL LatencyStat
	MaxOutputTokensPerS   float64 // most output tokens seen in one wall-clock second
	MaxConcurrentRequests int     // requests active in that busiest second
	OutputLens            []int   // per request, 0 for failures
}

// Goodput SLO names vLLM accepts.
var goodputNames = []string{"ttft", "tpot", "e2el"}

// ParseGoodput parses --goodput's "KEY:MS" pairs (ttft, tpot, e2el).
func ParseGoodput(pairs []string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, pair := range pairs {
		for _, kv := range strings.Fields(pair) {
			name, val, ok := strings.Cut(kv, ":")
			v, err := strconv.ParseFloat(val, 64)
			if !ok || err != nil {
				return nil, fmt.Errorf(`--goodput %q: want "KEY:VALUE" pairs, KEY a metric name and VALUE milliseconds`, kv)
			}
			if !slices.Contains(goodputNames, name) {
				return nil, fmt.Errorf("--goodput %q: the service level objective name must be one of %v", kv, goodputNames)
			}
			if v < 0 {
				return nil, fmt.Errorf("--goodput %q: the service level objective value must be non-negative", kv)
			}
			out[name] = v
		}
	}
	return out, nil
}

// CalculateMetrics computes the run's metrics as vLLM's calculate_metrics
// does: output length from the usage chunk (falling back to the number of
// chunks with choices, where vLLM re-tokenises the text), TPOT as
// (latency - TTFT) / (output tokens - 1) over requests with more than one
// token, ITL over every gap, goodput as the requests meeting every SLO
// (TPOT counted 0 for one-token outputs), durations in seconds in and
// milliseconds out.
func CalculateMetrics(reqs []SampleRequest, outs []RequestOutput, dur float64, percentiles []float64, goodput map[string]float64) ServeMetrics {
	m := ServeMetrics{OutputLens: make([]int, len(outs))}
	var ttfts, tpots, itls, e2els []float64
	good := 0
	for i, o := range outs {
		if !o.Success {
			m.Failed++
			continue
		}
		n := o.OutputTokens
		if n == 0 {
			n = o.Chunks
		}
		m.OutputLens[i] = n
		m.TotalOutput += n
		if i < len(reqs) {
			m.TotalInput += reqs[i].PromptLen
		}
		tpot := 0.0
		if n > 1 {
			tpot = (o.Latency - o.TTFT) / float64(n-1)
			tpots = append(tpots, tpot)
		}
		itls = append(itls, o.ITL...)
		ttfts = append(ttfts, o.TTFT)
		e2els = append(e2els, o.Latency)
		m.Completed++
		if meetsSLO(goodput, o.TTFT, tpot, o.Latency) {
			good++
		}
	}
	if dur > 0 {
		m.RequestThroughput = float64(m.Completed) / dur
		m.OutputThroughput = float64(m.TotalOutput) / dur
		m.TotalTokenThroughput = float64(m.TotalInput+m.TotalOutput) / dur
		if len(goodput) > 0 {
			m.RequestGoodput = float64(good) / dur
		}
	}
	m.TTFT = summarizeLatency(ttfts, percentiles)
	m.TPOT = summarizeLatency(tpots, percentiles)
	m.ITL = summarizeLatency(itls, percentiles)
	m.E2EL = summarizeLatency(e2els, percentiles)
	m.MaxOutputTokensPerS, m.MaxConcurrentRequests = peakSecond(outs)
	return m
}

// meetsSLO reports whether a request meets every configured SLO (ms).
func meetsSLO(slo map[string]float64, ttft, tpot, e2el float64) bool {
	if len(slo) == 0 {
		return false
	}
	for name, limit := range slo {
		v := map[string]float64{"ttft": ttft, "tpot": tpot, "e2el": e2el}[name]
		if v*1000 > limit {
			return false
		}
	}
	return true
}

// peakSecond buckets every token's arrival into wall-clock seconds from
// the first send and returns the busiest second's token count and the
// number of requests active during the busiest-concurrency second, as vLLM
// does (each maximum taken separately).
func peakSecond(outs []RequestOutput) (float64, int) {
	first, lastEnd, any := math.Inf(1), math.Inf(-1), false
	for _, o := range outs {
		if o.Success {
			first = min(first, o.StartTime)
			lastEnd = max(lastEnd, o.StartTime+o.Latency)
			any = true
		}
	}
	if !any {
		return 0, 0
	}
	n := int(math.Ceil(lastEnd-first)) + 1
	tokens := make([]float64, n)
	active := make([]int, n)
	for _, o := range outs {
		if !o.Success {
			continue
		}
		t := o.StartTime + o.TTFT
		for k := 0; ; k++ {
			if b := int(t - first); b >= 0 && b < n {
				tokens[b]++
			}
			if k == len(o.ITL) {
				break
			}
			t += o.ITL[k]
		}
		for s := int(o.StartTime - first); s <= int(o.StartTime+o.Latency-first) && s < n; s++ {
			active[s]++
		}
	}
	return slices.Max(tokens), slices.Max(active)
}

// summarize converts seconds to a LatencyStat in milliseconds with numpy's
// mean, population std, and linearly interpolated percentiles.
func summarizeLatency(xs []float64, percentiles []float64) LatencyStat {
	s := LatencyStat{Percentiles: make([]PercentileValue, len(percentiles))}
	for i, p := range percentiles {
		s.Percentiles[i].P = p
	}
	if len(xs) == 0 {
		return s
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	sum := 0.0
	for _, x := range sorted {
		sum += x
	}
	mean := sum / float64(len(sorted))
	ss := 0.0
	for _, x := range sorted {
		ss += (x - mean) * (x - mean)
	}
	s.Mean = mean * 1000
	s.Std = math.Sqrt(ss/float64(len(sorted))) * 1000
	s.Median = percentileSorted(sorted, 50) * 1000
	for i, p := range percentiles {
		s.Percentiles[i].Value = percentileSorted(sorted, p) * 1000
	}
	return s
}

// percentileSorted is numpy.percentile's default (linear) method.
func percentileSorted(sorted []float64, p float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	h := float64(len(sorted)-1) * p / 100
	lo := int(math.Floor(h))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// ParsePercentiles parses --metric-percentiles ("50,90,99").
func ParsePercentiles(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		p, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || p < 0 || p > 100 {
			return nil, fmt.Errorf("--metric-percentiles: %q is not a percentile in [0, 100]", f)
		}
		out = append(out, p)
	}
	return out, nil
}

// Metric names --percentile-metrics accepts.
var percentileMetricNames = []string{"ttft", "tpot", "itl", "e2el"}

// ParsePercentileMetrics parses --percentile-metrics ("ttft,tpot,itl").
func ParsePercentileMetrics(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(percentileMetricNames, f) {
			return nil, fmt.Errorf("--percentile-metrics: %q is not one of %v", f, percentileMetricNames)
		}
		out = append(out, f)
	}
	return out, nil
}
