package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/vrender/vrender/bench"
	"github.com/vrender/vrender/tokenizer"
)

// optFloat is a float flag that remembers whether it was given.
type optFloat struct {
	set bool
	v   float64
}

func (f *optFloat) String() string {
	if !f.set {
		return ""
	}
	return strconv.FormatFloat(f.v, 'g', -1, 64)
}

func (f *optFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return err
	}
	f.set, f.v = true, v
	return nil
}

// intList is a repeatable integer flag.
type intList []int

func (l *intList) String() string { return fmt.Sprint([]int(*l)) }
func (l *intList) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("not an integer: %q", v)
	}
	*l = append(*l, n)
	return nil
}

// benchServeFlags holds `vrender bench serve`'s flags, spelled as
// `vllm bench serve` spells them.
type benchServeFlags struct {
	baseURL, host, endpoint, backend  string
	port                              int
	model, servedModelName, tokenizer string
	datasetName, datasetPath          string
	randomInputLen, randomOutputLen   int
	randomPrefixLen, customOutputLen  int
	randomRangeRatio                  float64
	disableShuffle                    bool
	numPrompts                        int
	requestRate, burstiness           float64
	maxConcurrency                    int
	seed                              int64
	ignoreEOS                         bool
	goodput, metadata, headers        stringList
	percentileMetrics                 string
	metricPercentiles                 string
	saveResult, saveDetailed          bool
	resultDir, resultFilename, label  string
	disableTqdm                       bool
	numWarmups, readyCheckTimeoutSec  int
	requestIDPrefix, extraBody        string
	sampling                          map[string]*optFloat
	serverPIDs                        intList
	metricsURL                        string
	samplingOrder                     []string
	multiTurn                         bench.MultiTurnOptions
	multiTurnImageSize                string
	engineMetricsURL                  string
	kvBlockSize                       int
}

func (f *benchServeFlags) register(c *command) {
	fs := c.fs
	fs.StringVar(&f.baseURL, "base-url", "", "server `URL` (http://host:port), instead of --host and --port")
	fs.StringVar(&f.host, "host", "127.0.0.1", "server `HOST`")
	fs.IntVar(&f.port, "port", 8000, "server `PORT`")
	fs.StringVar(&f.endpoint, "endpoint", "/v1/chat/completions", "API `PATH`: /v1/chat/completions or /v1/completions")
	fs.StringVar(&f.backend, "backend", "", "`KIND` of request: openai-chat or openai (completions); default: from --endpoint")
	fs.StringVar(&f.model, "model", "", "model `NAME` sent in each request (required)")
	fs.StringVar(&f.servedModelName, "served-model-name", "", "`NAME` sent as \"model\" instead of --model")
	fs.StringVar(&f.tokenizer, "tokenizer", "", "tokenizer `DIR` (or tokenizer.json) for the prompts and their lengths (default: --model, if a directory)")
	fs.StringVar(&f.datasetName, "dataset-name", "random", "`DATASET`: random (synthetic prompts), custom (JSONL, one {\"prompt\": ...} a line)\n"+
		"or multi-turn (sessions whose conversation grows each turn; chat endpoint; --multi-turn-* flags)")
	fs.IntVar(&f.multiTurn.Sessions, "multi-turn-sessions", 32, "concurrent conversations (`N`) of the multi-turn dataset; --request-rate paces their starts")
	fs.IntVar(&f.multiTurn.Turns, "multi-turn-turns", 8, "user turns (`N`) per multi-turn session")
	fs.DurationVar(&f.multiTurn.ThinkTime, "multi-turn-think-time", 0, "pause (`DURATION`) between an answer and the session's next turn")
	fs.IntVar(&f.multiTurn.SystemLen, "multi-turn-system-len", 0, "`TOKENS` of a system prompt every multi-turn session shares")
	fs.IntVar(&f.multiTurn.FirstLen, "multi-turn-first-len", 1024, "`TOKENS` of each session's first user message")
	fs.IntVar(&f.multiTurn.TurnLen, "multi-turn-turn-len", 128, "`TOKENS` of every later user message (answers: --random-output-len)")
	fs.StringVar(&f.multiTurnImageSize, "multi-turn-image-size", "", "`WxH`: each session's first message starts with a picture of this size (its own, random),\n"+
		"sent again every turn (an image model; default: text only)")
	fs.BoolVar(&f.multiTurn.ImageShared, "multi-turn-shared-image", false, "every session sends the same picture (a control: sessions then share its cached blocks)")
	fs.StringVar(&f.engineMetricsURL, "engine-metrics-url", "", "the engines' /metrics `URLS`, comma separated: with the multi-turn dataset, their prefix-cache\n"+
		"counters (vllm:prefix_cache_queries/hits) give the hit rate against the ideal, prefill tokens computed\n"+
		"and the load spread (max/mean) over the engines")
	fs.IntVar(&f.kvBlockSize, "kv-block-size", 16, "the engines' KV block size (`N`) for the ideal hit rate")
	fs.StringVar(&f.datasetPath, "dataset-path", "", "`FILE` of the custom dataset")
	fs.IntVar(&f.randomInputLen, "random-input-len", 1024, "prompt `TOKENS` of the random dataset")
	fs.IntVar(&f.randomOutputLen, "random-output-len", 128, "output `TOKENS` of the random dataset")
	fs.Float64Var(&f.randomRangeRatio, "random-range-ratio", 0, "lengths are uniform in [len*(1-R), len*(1+R)], `R` in [0, 1)")
	fs.IntVar(&f.randomPrefixLen, "random-prefix-len", 0, "`TOKENS` of one random prefix shared by every random prompt")
	fs.IntVar(&f.customOutputLen, "custom-output-len", 256, "output `TOKENS` per custom prompt; -1: each line's \"output_tokens\"")
	fs.BoolVar(&f.disableShuffle, "disable-shuffle", false, "keep the custom dataset's line order")
	fs.IntVar(&f.numPrompts, "num-prompts", 1000, "`N` requests to send")
	fs.Float64Var(&f.requestRate, "request-rate", math.Inf(1), "requests per second (`RATE`); inf sends all at once, otherwise Poisson/gamma arrivals")
	fs.Float64Var(&f.burstiness, "burstiness", 1, "gamma shape `B` of the arrival gaps: 1 Poisson, < 1 burstier, > 1 more regular")
	fs.IntVar(&f.maxConcurrency, "max-concurrency", 0, "at most `N` requests in flight (0: no limit)")
	fs.Int64Var(&f.seed, "seed", 0, "random `SEED` of the dataset and the arrivals")
	fs.BoolVar(&f.ignoreEOS, "ignore-eos", false, "send ignore_eos so every output has exactly max tokens (always on for the random dataset, as in vLLM)")
	fs.Var(&f.goodput, "goodput", "SLOs for goodput as `KEY:MS` pairs, KEY one of ttft, tpot, e2el")
	c.multi["goodput"] = true
	fs.StringVar(&f.percentileMetrics, "percentile-metrics", "ttft,tpot,itl", "`METRICS` to report percentiles of: ttft,tpot,itl,e2el")
	fs.StringVar(&f.metricPercentiles, "metric-percentiles", "99", "`PERCENTILES` to report, comma separated")
	fs.BoolVar(&f.saveResult, "save-result", false, "save the result as JSON (vLLM's keys)")
	fs.BoolVar(&f.saveDetailed, "save-detailed", false, "also save per-request input/output lengths, TTFTs, ITLs, texts and errors")
	fs.StringVar(&f.resultDir, "result-dir", "", "`DIR` for the result file (default: current directory)")
	fs.StringVar(&f.resultFilename, "result-filename", "", "result `FILE` name (default: {label}-{rate}qps[-concurrency{N}]-{model}-{date}.json); implies --save-result")
	fs.StringVar(&f.resultFilename, "result-file", "", "same as --result-filename")
	fs.StringVar(&f.label, "label", "", "`LABEL` of the result (default: the backend)")
	fs.Var(&f.metadata, "metadata", "`KEY=VALUE` pairs recorded in the result file")
	c.multi["metadata"] = true
	fs.Var(&f.headers, "header", "`KEY=VALUE` headers sent with every request")
	c.multi["header"] = true
	fs.BoolVar(&f.disableTqdm, "disable-tqdm", false, "no progress lines (accepted for vLLM compatibility)")
	fs.IntVar(&f.numWarmups, "num-warmups", 0, "`N` untimed requests before the run")
	fs.IntVar(&f.readyCheckTimeoutSec, "ready-check-timeout-sec", 600, "retry the first request for up to `SECONDS` until the server answers (0: skip the check)")
	fs.StringVar(&f.requestIDPrefix, "request-id-prefix", "", "`PREFIX` of the X-Request-Id headers (default: bench-<random>-)")
	fs.StringVar(&f.extraBody, "extra-body", "", "`JSON` object merged into every request body")
	f.sampling = map[string]*optFloat{}
	f.samplingOrder = []string{"temperature", "top-p", "top-k", "min-p", "frequency-penalty", "presence-penalty", "repetition-penalty"}
	for _, name := range f.samplingOrder {
		v := &optFloat{}
		f.sampling[name] = v
		fs.Var(v, name, "sampling parameter `VALUE` sent in every request (temperature defaults to 0, greedy)")
	}
	fs.Var(&f.serverPIDs, "server-pid", "`PID` of a server process (repeatable): its CPU time over the run gives output tokens/s per server CPU core")
	fs.StringVar(&f.metricsURL, "metrics-url", "", "Prometheus `URL` with "+bench.AddedLatencyMetric+", scraped before and after for the latency the server adds per token;\ncomma-separated URLs (the replicas behind a load balancer) are summed\n"+
		"(default: base URL + /metrics; \"none\" skips it)")
}

// runBenchServe is `vrender bench serve`, vLLM's `vllm bench serve`.
func runBenchServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("bench serve", "--model NAME [options]",
		"Load-test an OpenAI-compatible server the way `vllm bench serve` does: random or JSONL prompts,\n"+
			"Poisson arrivals at --request-rate, --max-concurrency streams, TTFT/TPOT/ITL/E2EL percentiles, goodput,\n"+
			"and vLLM's result JSON. With --server-pid: output tokens/s per server CPU core; with the server's\n"+
			"/metrics: the latency it adds per token ("+bench.AddedLatencyMetric+").")
	var f benchServeFlags
	f.register(c)
	rest, err := c.parse(args, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	o, meta, err := f.options(stderr)
	if err != nil {
		return err
	}

	// The load generator shares the machine with the server it measures:
	// fewer collections for a modestly larger heap.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	res, err := bench.RunServe(ctx, o)
	if err != nil {
		return err
	}
	if err := bench.WriteServeReport(stdout, o, res); err != nil {
		return fmt.Errorf("bench serve: write report: %w", err)
	}
	if f.saveResult || f.resultFilename != "" {
		data, err := bench.ServeResultJSON(o, res, meta)
		if err != nil {
			return err
		}
		name := f.resultFilename
		if name == "" {
			name = bench.DefaultResultFilename(f.label, res.Backend, o.RequestRate, o.MaxConcurrency, meta.ModelID, meta.Date)
		}
		if f.resultDir != "" {
			if err := os.MkdirAll(f.resultDir, 0o755); err != nil {
				return fmt.Errorf("bench serve: %w", err)
			}
			name = filepath.Join(f.resultDir, name)
		}
		if err := os.WriteFile(name, append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("bench serve: write result: %w", err)
		}
		fmt.Fprintf(stderr, "result saved to %s\n", name)
	}
	if res.Metrics.Completed == 0 {
		return fmt.Errorf("bench serve: all %d requests failed", len(res.Outputs))
	}
	return nil
}

// options validates the flags and builds the run's options and result metadata.
func (f *benchServeFlags) options(stderr io.Writer) (bench.ServeOptions, bench.ResultMeta, error) {
	var o bench.ServeOptions
	var meta bench.ResultMeta
	if f.model == "" {
		return o, meta, usagef("--model is required")
	}
	if f.numPrompts <= 0 && f.datasetName == "random" {
		return o, meta, usagef("--num-prompts must be positive")
	}
	if f.maxConcurrency < 0 {
		return o, meta, usagef("--max-concurrency must not be negative")
	}
	if err := f.checkEndpoint(); err != nil {
		return o, meta, err
	}
	base := strings.TrimRight(f.baseURL, "/")
	if base == "" {
		base = "http://" + net.JoinHostPort(f.host, strconv.Itoa(f.port))
	}
	goodput, err := bench.ParseGoodput(f.goodput)
	if err != nil {
		return o, meta, usagef("%v", err)
	}
	pm, err := bench.ParsePercentileMetrics(f.percentileMetrics)
	if err != nil {
		return o, meta, usagef("%v", err)
	}
	pct, err := bench.ParsePercentiles(f.metricPercentiles)
	if err != nil {
		return o, meta, usagef("%v", err)
	}
	headerPairs, err := keyValues("--header", f.headers)
	if err != nil {
		return o, meta, err
	}
	headers := map[string]string{}
	for _, kv := range headerPairs {
		headers[kv[0]] = kv[1]
	}
	if meta.Metadata, err = keyValues("--metadata", f.metadata); err != nil {
		return o, meta, err
	}
	extra, err := f.extraBodyFields()
	if err != nil {
		return o, meta, err
	}
	prefix := f.requestIDPrefix
	if prefix == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		prefix = "bench-" + hex.EncodeToString(b[:]) + "-"
	}

	tok, tokPath, err := f.loadTokenizer()
	if err != nil {
		return o, meta, err
	}

	reqs, multiTurn, ignoreEOS, err := f.dataset(tok, prefix, stderr)
	if err != nil {
		return o, meta, err
	}

	metricsURL := f.metricsURL
	switch metricsURL {
	case "":
		metricsURL = base + "/metrics"
	case "none":
		metricsURL = ""
	}
	name := f.model
	if f.servedModelName != "" {
		name = f.servedModelName
	}
	o = bench.ServeOptions{
		BaseURL: base, Endpoint: f.endpoint, Model: name, Requests: reqs,
		RequestRate: f.requestRate, Burstiness: f.burstiness, MaxConcurrency: f.maxConcurrency, Seed: uint64(f.seed),
		IgnoreEOS: ignoreEOS, ExtraBody: extra, Headers: headers, APIKey: os.Getenv("OPENAI_API_KEY"),
		NumWarmups: f.numWarmups, ReadyCheckTimeout: time.Duration(f.readyCheckTimeoutSec) * time.Second,
		KeepDetails: f.saveDetailed, Goodput: goodput, PercentileMetrics: pm, MetricPercentiles: pct,
		ServerPIDs: f.serverPIDs, MetricsURL: metricsURL, Log: stderr,
		MultiTurn: multiTurn, KVBlockSize: f.kvBlockSize,
	}
	if f.engineMetricsURL != "" {
		o.EngineMetricsURLs = strings.Split(f.engineMetricsURL, ",")
	}
	if !f.disableTqdm {
		o.Progress = stderr
	}
	meta = bench.ResultMeta{
		Date: time.Now().Format("20060102-150405"), Label: f.label, ModelID: f.model,
		TokenizerID: tokPath, NumPrompts: f.numPrompts, Metadata: meta.Metadata, SaveDetailed: f.saveDetailed,
	}
	if meta.TokenizerID == "" {
		meta.TokenizerID = f.model
	}
	return o, meta, nil
}

// checkEndpoint matches --backend with --endpoint, as vLLM does: the
// completions backends default to /v1/completions.
func (f *benchServeFlags) checkEndpoint() error {
	switch f.backend {
	case "":
	case bench.BackendChat:
		if !strings.HasSuffix(f.endpoint, "chat/completions") {
			return usagef("--backend openai-chat needs a chat endpoint, got --endpoint %s", f.endpoint)
		}
	case bench.BackendCompletions, "vllm":
		if f.endpoint == "/v1/chat/completions" {
			f.endpoint = "/v1/completions" // vLLM's default endpoint for these backends
		}
	default:
		return usagef("--backend %q: want openai-chat or openai", f.backend)
	}
	if _, err := bench.BackendFor(f.endpoint); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// keyValues splits a repeated KEY=VALUE flag's values, trimming both
// sides, in the order given.
func keyValues(flag string, values []string) ([][2]string, error) {
	var pairs [][2]string
	for _, kv := range values {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, usagef("%s %q: want KEY=VALUE", flag, kv)
		}
		pairs = append(pairs, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return pairs, nil
}

// extraBodyFields are the fields every request carries beside the prompt:
// the sampling flags given (temperature 0 when not), then --extra-body.
func (f *benchServeFlags) extraBodyFields() (map[string]any, error) {
	extra := map[string]any{}
	for _, name := range f.samplingOrder {
		if v := f.sampling[name]; v.set {
			key := strings.ReplaceAll(name, "-", "_")
			if name == "top-k" {
				extra[key] = int(v.v)
			} else {
				extra[key] = v.v
			}
		}
	}
	if _, ok := extra["temperature"]; !ok {
		extra["temperature"] = 0.0 // greedy, vLLM's default
	}
	if f.extraBody != "" {
		var eb map[string]any
		if err := json.Unmarshal([]byte(f.extraBody), &eb); err != nil {
			return nil, usagef("--extra-body: %v", err)
		}
		for k, v := range eb {
			extra[k] = v
		}
	}
	return extra, nil
}

// loadTokenizer loads --tokenizer (a tokenizer.json or its folder), or the
// model folder's tokenizer.json when it has one; nil when there is none.
func (f *benchServeFlags) loadTokenizer() (*tokenizer.Tokenizer, string, error) {
	tokPath := f.tokenizer
	if tokPath == "" {
		if st, err := os.Stat(filepath.Join(f.model, "tokenizer.json")); err == nil && st.Mode().IsRegular() {
			tokPath = f.model
		}
	}
	var tok *tokenizer.Tokenizer
	if tokPath != "" {
		var err error
		p := tokPath
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			p = filepath.Join(p, "tokenizer.json")
		}
		if tok, err = tokenizer.Load(p); err != nil {
			return nil, "", fmt.Errorf("bench serve: --tokenizer: %w", err)
		}
	}
	return tok, tokPath, nil
}

// dataset builds the requests of --dataset-name; multi-turn also returns
// its sessions (the requests are their first turns). The random and
// multi-turn datasets send ignore_eos whatever --ignore-eos says.
func (f *benchServeFlags) dataset(tok *tokenizer.Tokenizer, prefix string, stderr io.Writer) ([]bench.SampleRequest, *bench.MultiTurn, bool, error) {
	ignoreEOS := f.ignoreEOS
	var reqs []bench.SampleRequest
	var multiTurn *bench.MultiTurn
	var err error
	switch f.datasetName {
	case "random":
		if !ignoreEOS {
			fmt.Fprintln(stderr, "note: the random dataset sends ignore_eos (as vLLM does) so outputs run to their length")
			ignoreEOS = true
		}
		reqs, err = bench.RandomDataset(tok, bench.RandomDatasetOptions{
			NumPrompts: f.numPrompts, InputLen: f.randomInputLen, OutputLen: f.randomOutputLen,
			RangeRatio: f.randomRangeRatio, PrefixLen: f.randomPrefixLen, Seed: uint64(f.seed), RequestIDPrefix: prefix,
		})
	case "custom":
		if f.datasetPath == "" {
			return nil, nil, false, usagef("--dataset-name custom needs --dataset-path FILE.jsonl")
		}
		reqs, err = bench.CustomDataset(tok, bench.CustomDatasetOptions{
			Path: f.datasetPath, NumPrompts: f.numPrompts, OutputLen: f.customOutputLen,
			Seed: uint64(f.seed), NoShuffle: f.disableShuffle, RequestIDPrefix: prefix,
		})
	case "multi-turn":
		ignoreEOS = true // answers run to --random-output-len, so every turn grows alike
		mo := f.multiTurn
		mo.OutputLen, mo.Seed, mo.RequestIDPrefix = f.randomOutputLen, uint64(f.seed), prefix
		if f.multiTurnImageSize != "" {
			w, h, ok := strings.Cut(f.multiTurnImageSize, "x")
			var errW, errH error
			mo.ImageWidth, errW = strconv.Atoi(w)
			mo.ImageHeight, errH = strconv.Atoi(h)
			if !ok || errW != nil || errH != nil || mo.ImageWidth <= 0 || mo.ImageHeight <= 0 {
				return nil, nil, false, usagef("--multi-turn-image-size %q: want WxH, e.g. 448x448", f.multiTurnImageSize)
			}
		}
		multiTurn, err = bench.MultiTurnDataset(tok, mo)
		if err == nil {
			for _, s := range multiTurn.Sessions {
				reqs = append(reqs, s[0])
			}
		}
	default:
		return nil, nil, false, usagef("--dataset-name %q: want random, custom or multi-turn", f.datasetName)
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("bench serve: %w", err)
	}
	return reqs, multiTurn, ignoreEOS, nil
}
