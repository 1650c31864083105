package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Targets of the serving issue, printed next to the measurements.
const (
	TargetServeTokensPerCore = 50000.0 // streamed output tokens/s per server CPU core
	TargetAddedP99Ms         = 1.0     // p99 latency the server adds per token
)

// metricHeaders names the percentile metrics as vLLM's report does.
var metricHeaders = map[string][2]string{
	"ttft": {"TTFT", "Time to First Token"},
	"tpot": {"TPOT", "Time per Output Token (excl. 1st token)"},
	"itl":  {"ITL", "Inter-token Latency"},
	"e2el": {"E2EL", "End-to-end Latency"},
}

func (m *ServeMetrics) stat(name string) LatencyStat {
	switch name {
	case "ttft":
		return m.TTFT
	case "tpot":
		return m.TPOT
	case "itl":
		return m.ITL
	}
	return m.E2EL
}

// pyCenter centres s in width n padded with c, as Python's "{:c^n}".
func pyCenter(s string, n int, c string) string {
	pad := n - len(s)
	if pad <= 0 {
		return s
	}
	return strings.Repeat(c, pad/2) + s + strings.Repeat(c, pad-pad/2)
}

// percentileWord spells a percentile as vLLM's keys do: 99 -> "99", 99.9 -> "99.9".
func percentileWord(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }

// WriteServeReport prints vLLM's "Serving Benchmark Result" table, then
// vrender's server-side figures when they were measured.
func WriteServeReport(w io.Writer, o ServeOptions, r *ServeResult) error {
	var b bytes.Buffer
	m := &r.Metrics
	row := func(label string, v any) {
		switch v := v.(type) {
		case float64:
			fmt.Fprintf(&b, "%-40s %-10.2f\n", label, v)
		default:
			fmt.Fprintf(&b, "%-40s %-10v\n", label, v)
		}
	}
	b.WriteString(pyCenter(" Serving Benchmark Result ", 50, "=") + "\n")
	row("Successful requests:", m.Completed)
	row("Failed requests:", m.Failed)
	if o.MaxConcurrency > 0 {
		row("Maximum request concurrency:", o.MaxConcurrency)
	}
	if !math.IsInf(o.RequestRate, 1) {
		row("Request rate configured (RPS):", o.RequestRate)
	}
	row("Benchmark duration (s):", r.Duration)
	row("Total input tokens:", m.TotalInput)
	row("Total generated tokens:", m.TotalOutput)
	row("Request throughput (req/s):", m.RequestThroughput)
	if len(o.Goodput) > 0 {
		row("Request goodput (req/s):", m.RequestGoodput)
	}
	row("Output token throughput (tok/s):", m.OutputThroughput)
	row("Peak output token throughput (tok/s):", m.MaxOutputTokensPerS)
	row("Peak concurrent requests:", float64(m.MaxConcurrentRequests))
	row("Total Token throughput (tok/s):", m.TotalTokenThroughput)
	for _, name := range o.PercentileMetrics {
		h := metricHeaders[name]
		s := m.stat(name)
		b.WriteString(pyCenter(h[1], 50, "-") + "\n")
		row("Mean "+h[0]+" (ms):", s.Mean)
		row("Median "+h[0]+" (ms):", s.Median)
		for _, p := range s.Percentiles {
			row("P"+percentileWord(p.P)+" "+h[0]+" (ms):", p.Value)
		}
	}
	if mt := r.MultiTurn; mt != nil {
		b.WriteString(pyCenter(" Multi-turn sessions ", 50, "-") + "\n")
		row("Sessions x turns:", fmt.Sprintf("%dx%d", len(mt.Sessions), mt.Options.Turns))
		row("Think time (ms):", float64(mt.Options.ThinkTime)/1e6)
	}
	if p := r.Prefix; p != nil {
		b.WriteString(pyCenter(" Engine prefix cache ", 50, "-") + "\n")
		row("Prompt tokens queried:", int64(p.PromptTokens))
		row("Prompt tokens cached:", int64(p.CachedTokens))
		row("Prefill tokens computed:", int64(p.PrefillTokens))
		fmt.Fprintf(&b, "%-40s %-10.4f\n", "Cache hit rate:", p.HitRate)
		fmt.Fprintf(&b, "%-40s %-10.4f\n", "Ideal hit rate:", p.IdealHitRate)
		fmt.Fprintf(&b, "%-40s %-10.4f\n", "Hit rate / ideal:", p.OfIdeal)
		row("Engine load max/mean (requests):", p.LoadMaxMean)
		row("Engine load max/mean (prefill tokens):", p.PrefillMaxMean)
		for _, e := range p.Engines {
			fmt.Fprintf(&b, "  %s: %d requests, %d prefill tokens\n", e.URL, int64(e.Requests), int64(e.PrefillTokens()))
		}
	}
	if r.ServerCPU != nil || r.AddedLatency != nil {
		b.WriteString(pyCenter(" vrender server ", 50, "-") + "\n")
	}
	if sc := r.ServerCPU; sc != nil {
		row("Server CPU time (s):", sc.Seconds)
		row("Server CPU cores busy (avg):", sc.Cores)
		fmt.Fprintf(&b, "%-40s %-10.0f (target >= %.0f: %s)\n", "Output tokens/s per server CPU core:",
			sc.OutputTokensPerCS, TargetServeTokensPerCore, verdict(sc.OutputTokensPerCS >= TargetServeTokensPerCore))
	}
	if al := r.AddedLatency; al != nil {
		// Healthy figures are microseconds: three decimals.
		row("Added latency per token, events:", int64(al.Events))
		fmt.Fprintf(&b, "%-40s %-10.3f\n", "Added latency per token, mean (ms):", al.MeanMs)
		fmt.Fprintf(&b, "%-40s %-10.3f\n", "Added latency per token, P50 (ms):", al.P50Ms)
		fmt.Fprintf(&b, "%-40s %-10.3f\n", "Added latency per token, P90 (ms):", al.P90Ms)
		fmt.Fprintf(&b, "%-40s %-10.3f (target <= %.0f ms: %s)\n", "Added latency per token, P99 (ms):",
			al.P99Ms, TargetAddedP99Ms, verdict(al.P99Ms <= TargetAddedP99Ms))
		fmt.Fprintf(&b, "%-40s %-10.3f\n", "Added latency per token, P99.9 (ms):", al.P999Ms)
	}
	if r.ServerCPU != nil || r.AddedLatency != nil {
		row("Benchmark client CPU time (s):", r.ClientCPUSeconds)
	}
	b.WriteString(strings.Repeat("=", 50) + "\n")
	if first := firstError(r.Outputs); first != "" {
		fmt.Fprintf(&b, "first error: %s\n", first)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func firstError(outs []RequestOutput) string {
	for _, o := range outs {
		if !o.Success {
			return o.Error
		}
	}
	return ""
}

// ResultMeta is the run configuration recorded in the result file.
type ResultMeta struct {
	Date         string // YYYYMMDD-HHMMSS
	Label        string // "" = backend
	ModelID      string
	TokenizerID  string
	NumPrompts   int
	Metadata     [][2]string // --metadata KEY=VALUE, in order
	SaveDetailed bool        // keep the per-request arrays
}

// jsonField is one key of an ordered JSON object: vLLM writes its result
// dict in insertion order, and so do we.
type jsonField struct {
	Key   string
	Value any
}

type orderedObject []jsonField

func (o *orderedObject) add(k string, v any) { *o = append(*o, jsonField{k, v}) }

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, fmt.Errorf("result field %s: %w", f.Key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// finite maps NaN and infinities, which JSON cannot hold, to null.
func finite(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return f
}

// ServeResultJSON is the --save-result file: vLLM's keys in vLLM's order,
// then vrender's server-side figures.
func ServeResultJSON(o ServeOptions, r *ServeResult, meta ResultMeta) ([]byte, error) {
	m := &r.Metrics
	var obj orderedObject
	add := obj.add
	label := any(nil)
	if meta.Label != "" {
		label = meta.Label
	}
	add("date", meta.Date)
	add("endpoint_type", r.Backend)
	add("backend", r.Backend)
	add("label", label)
	add("model_id", meta.ModelID)
	add("tokenizer_id", meta.TokenizerID)
	add("num_prompts", meta.NumPrompts)
	for _, kv := range meta.Metadata {
		add(kv[0], kv[1])
	}
	if math.IsInf(o.RequestRate, 1) {
		add("request_rate", "inf")
	} else {
		add("request_rate", o.RequestRate)
	}
	add("burstiness", o.Burstiness)
	if o.MaxConcurrency > 0 {
		add("max_concurrency", o.MaxConcurrency)
	} else {
		add("max_concurrency", nil)
	}
	add("duration", r.Duration)
	add("completed", m.Completed)
	add("failed", m.Failed)
	add("total_input_tokens", m.TotalInput)
	add("total_output_tokens", m.TotalOutput)
	add("request_throughput", m.RequestThroughput)
	if len(o.Goodput) > 0 {
		add("request_goodput", m.RequestGoodput)
	} else {
		add("request_goodput", nil)
	}
	add("output_throughput", m.OutputThroughput)
	add("total_token_throughput", m.TotalTokenThroughput)
	if meta.SaveDetailed {
		obj.addDetails(r)
	}
	add("max_output_tokens_per_s", m.MaxOutputTokensPerS)
	add("max_concurrent_requests", m.MaxConcurrentRequests)
	for _, name := range o.PercentileMetrics {
		s := m.stat(name)
		add("mean_"+name+"_ms", s.Mean)
		add("median_"+name+"_ms", s.Median)
		add("std_"+name+"_ms", s.Std)
		for _, p := range s.Percentiles {
			add("p"+percentileWord(p.P)+"_"+name+"_ms", p.Value)
		}
	}
	obj.addServerFigures(r)
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("bench serve: result JSON: %w", err)
	}
	return data, nil
}

// addDetails adds the per-request arrays of --save-detailed.
func (o *orderedObject) addDetails(r *ServeResult) {
	inputLens := make([]int, len(r.Outputs))
	ttfts := make([]float64, len(r.Outputs))
	itls := make([][]float64, len(r.Outputs))
	texts := make([]string, len(r.Outputs))
	errs := make([]string, len(r.Outputs))
	for i, out := range r.Outputs {
		inputLens[i], ttfts[i], itls[i], texts[i], errs[i] = out.PromptLen, out.TTFT, out.ITL, out.GeneratedText, out.Error
		if itls[i] == nil {
			itls[i] = []float64{}
		}
	}
	o.add("input_lens", inputLens)
	o.add("output_lens", r.Metrics.OutputLens)
	o.add("ttfts", ttfts)
	o.add("itls", itls)
	o.add("generated_texts", texts)
	o.add("errors", errs)
}

// addServerFigures adds vrender's own figures after vLLM's keys: the
// engines' prefix cache, server CPU and the latency the server adds.
func (o *orderedObject) addServerFigures(r *ServeResult) {
	if p := r.Prefix; p != nil {
		o.add("prefix_prompt_tokens", p.PromptTokens)
		o.add("prefix_cached_tokens", p.CachedTokens)
		o.add("prefill_tokens_computed", p.PrefillTokens)
		o.add("prefix_hit_rate", p.HitRate)
		o.add("prefix_ideal_hit_rate", p.IdealHitRate)
		o.add("prefix_hit_rate_of_ideal", p.OfIdeal)
		o.add("engine_load_max_mean", p.LoadMaxMean)
		o.add("engine_prefill_max_mean", p.PrefillMaxMean)
	}
	if sc := r.ServerCPU; sc != nil {
		o.add("server_pids", sc.PIDs)
		o.add("server_cpu_seconds", sc.Seconds)
		o.add("server_cpu_cores", sc.Cores)
		o.add("output_tokens_per_server_cpu_second", sc.OutputTokensPerCS)
		o.add("client_cpu_seconds", r.ClientCPUSeconds)
	}
	if al := r.AddedLatency; al != nil {
		o.add("added_latency_metric", al.MetricName)
		o.add("added_latency_events", al.Events)
		o.add("added_latency_mean_ms", finite(al.MeanMs))
		o.add("added_latency_p50_ms", finite(al.P50Ms))
		o.add("added_latency_p90_ms", finite(al.P90Ms))
		o.add("added_latency_p99_ms", finite(al.P99Ms))
		o.add("added_latency_p99.9_ms", finite(al.P999Ms))
	}
}

// DefaultResultFilename is vLLM's
// {label}-{rate}qps[-concurrency{N}]-{model basename}-{date}.json.
func DefaultResultFilename(label, backend string, rate float64, maxConcurrency int, modelID, date string) string {
	if label == "" {
		label = backend
	}
	conc := ""
	if maxConcurrency > 0 {
		conc = fmt.Sprintf("-concurrency%d", maxConcurrency)
	}
	base := modelID[strings.LastIndex(modelID, "/")+1:]
	return fmt.Sprintf("%s-%sqps%s-%s-%s.json", label, pyFloat(rate), conc, base, date)
}
