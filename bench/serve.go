package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ServeOptions configures `vrender bench serve`, a load generator for
// OpenAI-compatible streaming endpoints that reports what vLLM's
// `vllm bench serve` reports.
type ServeOptions struct {
	BaseURL  string // http://host:port
	Endpoint string // /v1/chat/completions or /v1/completions
	Model    string // "model" sent in each request
	Requests []SampleRequest

	RequestRate       float64 // requests/s; +Inf sends all at once
	Burstiness        float64 // gamma shape of the arrival gaps (1 = Poisson)
	MaxConcurrency    int     // 0 = unlimited
	Seed              uint64
	IgnoreEOS         bool
	ExtraBody         map[string]any
	Headers           map[string]string
	APIKey            string
	NumWarmups        int
	ReadyCheckTimeout time.Duration // 0 skips the initial test request
	KeepDetails       bool          // keep generated texts (--save-detailed)

	Goodput           map[string]float64 // SLOs in ms: ttft, tpot, e2el
	PercentileMetrics []string
	MetricPercentiles []float64

	ServerPIDs []int  // processes whose CPU time the run charges (/proc/PID/stat)
	ProcRoot   string // "" = /proc
	MetricsURL string // Prometheus endpoint(s) with AddedLatencyMetric, comma separated (summed: the replicas behind a load balancer); "" skips it

	// MultiTurn, when set, replaces Requests' one-shot prompts with
	// sessions of growing conversations (chat endpoint only); Requests
	// then holds each session's first turn, for the ready check.
	MultiTurn *MultiTurn
	// EngineMetricsURLs are the engines' /metrics, scraped around a
	// multi-turn run for their prefix-cache counters; KVBlockSize is their
	// block size, for the ideal hit rate.
	EngineMetricsURLs []string
	KVBlockSize       int

	Progress io.Writer // periodic progress lines; nil for none
	Log      io.Writer // notes and warnings; nil discards
}

// ServerCPU is the CPU the server processes used during the run.
type ServerCPU struct {
	PIDs              []int
	Seconds           float64 // user+system, all PIDs
	Cores             float64 // Seconds / run duration: average cores busy
	OutputTokensPerCS float64 // output tokens per server CPU second = tokens/s per fully used core
}

// AddedLatency is the server's own per-token latency histogram, the
// difference of two scrapes around the run.
type AddedLatency struct {
	Events                      float64
	MeanMs                      float64
	P50Ms, P90Ms, P99Ms, P999Ms float64 // p99.9 shows the tail the mean hints at
	ScrapeURL                   string
	MetricName                  string
}

// ServeResult is the outcome of a run.
type ServeResult struct {
	Backend          string
	Duration         float64 // seconds, first send to last response
	Outputs          []RequestOutput
	Metrics          ServeMetrics
	ClientCPUSeconds float64
	ServerCPU        *ServerCPU    // nil without ServerPIDs
	AddedLatency     *AddedLatency // nil when not scraped
	Prefix           *PrefixReport // multi-turn runs with EngineMetricsURLs
	MultiTurn        *MultiTurn
}

// RunServe runs the benchmark: an initial test request (retried until the
// server answers or ReadyCheckTimeout passes), warm-ups, then every request
// at its arrival time under the concurrency limit, and the metrics.
func RunServe(ctx context.Context, o ServeOptions) (*ServeResult, error) {
	if len(o.Requests) == 0 {
		return nil, errors.New("bench serve: no requests")
	}
	backend, err := BackendFor(o.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("bench serve: %w", err)
	}
	if o.Burstiness == 0 {
		o.Burstiness = 1
	}
	if o.MultiTurn != nil && backend != BackendChat {
		return nil, errors.New("bench serve: the multi-turn dataset needs the chat endpoint")
	}
	offsets, err := ArrivalOffsets(len(o.Requests), o.RequestRate, o.Burstiness, o.Seed)
	if err != nil {
		return nil, fmt.Errorf("bench serve: %w", err)
	}
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	bodies := make([][]byte, len(o.Requests))
	for i, r := range o.Requests {
		if bodies[i], err = RequestBody(backend, o.Model, r, o.IgnoreEOS, o.ExtraBody); err != nil {
			return nil, fmt.Errorf("bench serve: %w", err)
		}
	}

	conc := o.MaxConcurrency
	if conc <= 0 {
		conc = len(o.Requests)
	}
	transport := NewServeTransport(conc)
	defer transport.CloseIdleConnections()
	c := &streamClient{
		http:     &http.Client{Transport: transport},
		url:      o.BaseURL + o.Endpoint,
		chat:     backend == BackendChat,
		apiKey:   o.APIKey,
		headers:  o.Headers,
		keepText: o.KeepDetails,
	}
	// vLLM's session timeout: a run never hangs longer than six hours.
	ctx, cancel := context.WithTimeout(ctx, 6*time.Hour)
	defer cancel()

	if o.ReadyCheckTimeout > 0 {
		fmt.Fprintln(logw, "Starting initial single prompt test run...")
		if err := waitReady(ctx, c, bodies[0], o.Requests[0], o.ReadyCheckTimeout); err != nil {
			return nil, err
		}
		fmt.Fprintln(logw, "Initial test run completed.")
	}
	if o.NumWarmups > 0 {
		warmUp(ctx, c, o, bodies[0], conc, logw)
	}

	fmt.Fprintln(logw, "Starting main benchmark run...")
	fmt.Fprintf(logw, "Traffic request rate: %s\nBurstiness factor: %s (%s)\nMaximum request concurrency: %s\n",
		pyFloat(o.RequestRate), pyFloat(o.Burstiness), distributionName(o.Burstiness), maxConcurrencyText(o.MaxConcurrency))

	res := &ServeResult{Backend: backend}
	before, err := readMeters(ctx, o, logw)
	if err != nil {
		return nil, err
	}
	reqs := o.Requests
	start := time.Now()
	c.epoch = start
	if o.MultiTurn != nil {
		res.MultiTurn = o.MultiTurn
		c.keepText = true // the answers go into the next turn
		if reqs, res.Outputs, err = runMultiTurn(ctx, c, o, offsets); err != nil {
			return nil, fmt.Errorf("bench serve: %w", err)
		}
	} else {
		idx := make([]int, len(o.Requests))
		for i := range idx {
			idx[i] = i
		}
		res.Outputs = runAll(ctx, c, idx, func(i int) ([]byte, SampleRequest) { return bodies[i], o.Requests[i] }, offsets, o.MaxConcurrency, o.Progress)
	}
	res.Duration = time.Since(start).Seconds()
	if err := before.subtractFrom(ctx, o, reqs, res, logw); err != nil {
		return nil, err
	}

	res.Metrics = CalculateMetrics(reqs, res.Outputs, res.Duration, o.MetricPercentiles, o.Goodput)
	if sc := res.ServerCPU; sc != nil {
		if res.Duration > 0 {
			sc.Cores = sc.Seconds / res.Duration
		}
		if sc.Seconds > 0 {
			sc.OutputTokensPerCS = float64(res.Metrics.TotalOutput) / sc.Seconds
		}
	}
	return res, nil
}

// warmUp sends the first prompt o.NumWarmups times, each under an id of its
// own: a server may refuse a request id that is already in flight.
func warmUp(ctx context.Context, c *streamClient, o ServeOptions, body []byte, conc int, logw io.Writer) {
	fmt.Fprintf(logw, "Warming up with %d requests...\n", o.NumWarmups)
	warm := make([]int, o.NumWarmups)
	for i := range warm {
		warm[i] = i
	}
	c.epoch = time.Now()
	runAll(ctx, c, warm, func(k int) ([]byte, SampleRequest) {
		s := o.Requests[0]
		s.RequestID = fmt.Sprintf("%s-warmup-%d", s.RequestID, k)
		return body, s
	}, make([]time.Duration, len(warm)), conc, nil)
	fmt.Fprintln(logw, "Warmup run completed.")
}

// meters are the readings taken before the timed run, which the same
// readings after it are subtracted from: server and client CPU, the
// added-latency histogram and the engines' prefix-cache counters.
type meters struct {
	procRoot  string
	serverCPU float64
	hist      *Histogram
	clientCPU float64
	engines   []EngineCounters
}

// readMeters takes the readings before the run; a missing added-latency
// metric is a note on logw, not an error.
func readMeters(ctx context.Context, o ServeOptions, logw io.Writer) (*meters, error) {
	m := &meters{procRoot: o.ProcRoot}
	if m.procRoot == "" {
		m.procRoot = "/proc"
	}
	var err error
	if len(o.ServerPIDs) > 0 {
		if m.serverCPU, err = cpuOf(m.procRoot, o.ServerPIDs); err != nil {
			return nil, fmt.Errorf("bench serve: %w", err)
		}
	}
	if o.MetricsURL != "" {
		h, err := ScrapeHistograms(ctx, http.DefaultClient, strings.Split(o.MetricsURL, ","), AddedLatencyMetric)
		if err != nil {
			fmt.Fprintf(logw, "note: no added-latency figures: %v\n", err)
		} else {
			m.hist = &h
		}
	}
	m.clientCPU, _ = ProcCPUSeconds(m.procRoot, os.Getpid())
	if o.MultiTurn != nil && len(o.EngineMetricsURLs) > 0 {
		if m.engines, err = ScrapeEngineCounters(ctx, http.DefaultClient, o.EngineMetricsURLs); err != nil {
			return nil, fmt.Errorf("bench serve: engine metrics: %w", err)
		}
	}
	return m, nil
}

// subtractFrom reads the meters again after the run and sets res's
// prefix, CPU and added-latency figures from the differences.
func (m *meters) subtractFrom(ctx context.Context, o ServeOptions, reqs []SampleRequest, res *ServeResult, logw io.Writer) error {
	if m.engines != nil {
		after, err := ScrapeEngineCounters(ctx, http.DefaultClient, o.EngineMetricsURLs)
		if err != nil {
			return fmt.Errorf("bench serve: engine metrics after the run: %w", err)
		}
		bs := o.KVBlockSize
		if bs <= 0 {
			bs = 16
		}
		res.Prefix = newPrefixReport(m.engines, after, IdealCachedTokens(o.MultiTurn, reqs, bs))
	}
	if clientAfter, err := ProcCPUSeconds(m.procRoot, os.Getpid()); err == nil {
		res.ClientCPUSeconds = clientAfter - m.clientCPU
	}
	if len(o.ServerPIDs) > 0 {
		after, err := cpuOf(m.procRoot, o.ServerPIDs)
		if err != nil {
			return fmt.Errorf("bench serve: after the run: %w", err)
		}
		res.ServerCPU = &ServerCPU{PIDs: o.ServerPIDs, Seconds: after - m.serverCPU}
	}
	if m.hist != nil {
		h, err := ScrapeHistograms(ctx, http.DefaultClient, strings.Split(o.MetricsURL, ","), AddedLatencyMetric)
		if err != nil {
			fmt.Fprintf(logw, "note: no added-latency figures: %v\n", err)
		} else {
			d := h.Sub(*m.hist)
			al := &AddedLatency{Events: d.Count, ScrapeURL: o.MetricsURL, MetricName: AddedLatencyMetric}
			if d.Count > 0 {
				al.MeanMs = d.Sum / d.Count * 1000
			}
			al.P50Ms, al.P90Ms = d.Quantile(0.50)*1000, d.Quantile(0.90)*1000
			al.P99Ms, al.P999Ms = d.Quantile(0.99)*1000, d.Quantile(0.999)*1000
			res.AddedLatency = al
		}
	}
	return nil
}

// runAll sends the requests ids (by index into bodies via get) at their
// offsets from now, at most conc at a time (0 = no limit), and returns the
// outputs in the same order. Requests wait for a free slot in arrival
// order; a request's clock starts when it is sent, as in vLLM, where the
// semaphore is taken before the request function starts timing.
func runAll(ctx context.Context, c *streamClient, ids []int, get func(int) ([]byte, SampleRequest), offsets []time.Duration, conc int, progress io.Writer) []RequestOutput {
	outs := make([]RequestOutput, len(ids))
	var sem chan struct{}
	if conc > 0 {
		sem = make(chan struct{}, conc)
	}
	var wg sync.WaitGroup
	var done atomic.Int64
	stopProgress := startProgress(progress, &done, len(ids))
	defer stopProgress()
	start := time.Now()
	for k, id := range ids {
		if wait := time.Until(start.Add(offsets[k])); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
		if sem != nil {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
			}
		}
		if err := ctx.Err(); err != nil {
			// Cancelled: what was not sent fails without a slot.
			for j := k; j < len(ids); j++ {
				outs[j] = RequestOutput{Error: "not sent: " + err.Error()}
			}
			break
		}
		body, s := get(id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[k] = c.do(ctx, body, s.RequestID, s.PromptLen, s.ExpectedOutputLen)
			done.Add(1)
			if sem != nil {
				<-sem
			}
		}()
	}
	wg.Wait()
	return outs
}

// startProgress prints "completed/total" every 10 seconds until stopped.
func startProgress(w io.Writer, done *atomic.Int64, total int) func() {
	if w == nil {
		return func() {}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				fmt.Fprintf(w, "progress: %d/%d requests done\n", done.Load(), total)
			}
		}
	}()
	return func() { close(stop); wg.Wait() }
}

// waitReady sends the first request until it succeeds or timeout passes,
// as vLLM's wait_for_endpoint does, so a server still loading is waited for.
func waitReady(ctx context.Context, c *streamClient, body []byte, s SampleRequest, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	c.epoch = time.Now()
	for {
		out := c.do(ctx, body, s.RequestID+"-ready", s.PromptLen, s.ExpectedOutputLen)
		if out.Success {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("bench serve: initial test run failed - make sure the benchmark arguments are right: %s", out.Error)
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
		}
	}
}

func distributionName(burstiness float64) string {
	if burstiness == 1 {
		return "Poisson process"
	}
	return "Gamma distribution"
}

func maxConcurrencyText(n int) string {
	if n <= 0 {
		return "None"
	}
	return fmt.Sprint(n)
}

// pyFloat formats f as Python's str(float) does for the values a report
// shows: "inf", "10.0", "2.5".
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == math.Trunc(f) && math.Abs(f) < 1e16:
		return fmt.Sprintf("%.1f", f)
	}
	return fmt.Sprint(f)
}
