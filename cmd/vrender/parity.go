package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/vrender/vrender/parity"
)

// runParity is `vrender parity`: differential testing of vrender against
// a user's own vLLM server, on their model and requests.
func runParity(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("parity", "--vllm URL --model MODEL [parser flags as serve takes them] --requests FILE.jsonl [--report out.json]",
		"Send every chat request of FILE.jsonl (one OpenAI chat completion request per line, or a line\n"+
			"of the parser golden set) to a vLLM server and compare its answers with vrender's:\n"+
			"  render:  POST /tokenize (chat form) and /v1/chat/completions/render, where served: the\n"+
			"           prompt token IDs must be identical;\n"+
			"  parsers: POST /v1/chat/completions, non-streaming and streaming, with return_token_ids,\n"+
			"           temperature 0 and --seed; vrender derenders the output IDs vLLM generated\n"+
			"           (the stream chunk by chunk as vLLM sent it) and must give vLLM's non-streaming\n"+
			"           content, reasoning, tool calls and finish_reason.\n"+
			"Differences docs/compatibility.md lists, and vLLM's stream disagreeing with its own\n"+
			"non-streaming answer, are reported as known, not failed. Start vrender with the same\n"+
			"model and parser flags as the vLLM server. A `vllm launch render` server has no\n"+
			"/v1/chat/completions: the parser checks are then skipped. gpt-oss (Harmony) prompts carry the\n"+
			"date: give both servers the same VLLM_SYSTEM_START_DATE.\n"+
			"Exit status: 0 no unexplained difference, 1 any unexplained difference (or the run\n"+
			"failed), 2 usage error.")
	var f parityFlags
	f.register(c)
	rest, err := c.parse(args, stdout)
	if err != nil {
		return err
	}
	if err := f.validate(rest); err != nil {
		return err
	}
	reqs, err := readParityRequests(f.requests)
	if err != nil {
		return err
	}
	cfg, err := f.config(ctx, stderr)
	if err != nil {
		return err
	}
	rep, err := parity.Run(ctx, cfg, reqs)
	if err != nil {
		return err
	}
	if err := rep.WriteText(stdout); err != nil {
		return err
	}
	if f.reportPath != "" {
		if err := writeParityReport(f.reportPath, rep); err != nil {
			return err
		}
	}
	if n := rep.Failures(); n > 0 {
		return fmt.Errorf("%d unexplained difference(s) between vrender and vLLM", n)
	}
	return nil
}

// parityFlags are the flags of vrender parity.
type parityFlags struct {
	mf          modelFlags
	rf          renderFlags
	df          derenderFlags
	vllmURL     string
	requests    string
	reportPath  string
	apiKey      string
	servedName  string
	seed        int64
	timeout     time.Duration
	concurrency int
	verbose     bool
}

func (f *parityFlags) register(c *command) {
	f.mf.register(c, true)
	f.rf.register(c)
	f.df.register(c)
	c.fs.StringVar(&f.vllmURL, "vllm", "", "the vLLM server's base `URL` (http://host:8000)")
	c.fs.StringVar(&f.requests, "requests", "", "`FILE`.jsonl of chat requests (- for stdin)")
	c.fs.StringVar(&f.reportPath, "report", "", "write the JSON report, every case with both sides' answers, to `FILE`")
	c.fs.StringVar(&f.apiKey, "api-key", "", "`KEY` the vLLM server was started with, sent as a Bearer token (default: env VLLM_API_KEY)")
	c.fs.StringVar(&f.servedName, "served-model-name", "", "the `NAME` to send as \"model\" (default: the first model vLLM's /v1/models lists)")
	c.fs.Int64Var(&f.seed, "seed", 0, "sampling `SEED` sent with every chat completion")
	c.fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "time limit for the checks of one request (`DURATION`)")
	c.fs.IntVar(&f.concurrency, "concurrency", 4, "requests checked at once (`N`)")
	c.fs.BoolVar(&f.verbose, "verbose", false, "log each request checked to stderr")
}

// validate checks the flags and the arguments left after them; the API
// key defaults to VLLM_API_KEY.
func (f *parityFlags) validate(rest []string) error {
	switch {
	case len(rest) > 0:
		return usagef("unexpected argument %q", rest[0])
	case f.vllmURL == "":
		return usagef("the vLLM server is required (--vllm URL)")
	case f.requests == "":
		return usagef("a requests file is required (--requests FILE.jsonl)")
	case f.concurrency < 1:
		return usagef("--concurrency must be at least 1, got %d", f.concurrency)
	case f.timeout < 0:
		return usagef("--timeout must not be negative, got %s", f.timeout)
	}
	if u, err := url.Parse(f.vllmURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--vllm must be an http(s) URL such as http://localhost:8000, got %q", f.vllmURL)
	}
	if err := f.rf.validate(); err != nil {
		return err
	}
	if f.apiKey == "" {
		f.apiKey = os.Getenv("VLLM_API_KEY")
	}
	return nil
}

// config loads the model, the generator and the derender engine the run
// compares vLLM with.
func (f *parityFlags) config(ctx context.Context, stderr io.Writer) (parity.Config, error) {
	m, err := f.mf.load(ctx)
	if err != nil {
		return parity.Config{}, err
	}
	gen, err := f.rf.generator(m)
	if err != nil {
		return parity.Config{}, err
	}
	der, err := f.df.engine(m, &f.rf)
	if err != nil {
		return parity.Config{}, err
	}
	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelDebug
	}
	return parity.Config{
		Client:      &parity.Client{BaseURL: f.vllmURL, APIKey: f.apiKey, HTTP: &http.Client{}},
		ServedModel: f.servedName,
		Model:       m, Generator: gen, Derender: der,
		Seed: f.seed, Timeout: f.timeout, Concurrency: f.concurrency,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
	}, nil
}

// readParityRequests reads the requests file; a file that cannot be read
// or parsed is a usage error (nothing was run).
func readParityRequests(path string) ([]parity.Request, error) {
	var in io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, usagef("--requests: %v", err)
		}
		defer f.Close()
		in = f
	}
	reqs, err := parity.ReadRequests(in)
	if err != nil {
		return nil, usagef("--requests %s: %v", path, err)
	}
	if len(reqs) == 0 {
		return nil, usagef("--requests %s: no requests in the file", path)
	}
	return reqs, nil
}

func writeParityReport(path string, rep *parity.Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
