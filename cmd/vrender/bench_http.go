package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/vrender/vrender/bench"
)

// httpBenchFlags are the --http flags the render, tokenize and derender
// benches share.
type httpBenchFlags struct {
	enabled bool
	minCPU  time.Duration
	bin     string
	args    fileList
	env     fileList
	conns   intList
}

func (f *httpBenchFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.enabled, "http", false, "also measure over HTTP: a 'vrender serve' child (GOMAXPROCS=1, taskset -c 0) driven over loopback keep-alive\n"+
		"from CPU 1, reporting the server process's CPU time, allocations and syscalls per request")
	fs.DurationVar(&f.minCPU, "http-min-cpu", 2*time.Second, "server CPU `TIME` each HTTP workload runs for")
	fs.StringVar(&f.bin, "http-bin", "", "vrender `BINARY` to serve with (default: this one)")
	fs.Var(&f.args, "http-serve-arg", "extra 'vrender serve' `ARG` (repeatable), e.g. --http-serve-arg=--disable-uvicorn-access-log")
	fs.Var(&f.conns, "http-conns", "keep-alive connections sending at once, `N` (repeatable: one table section each; default 1 and 4):\n"+
		"1 sends one request at a time, so the server idles and wakes for each; 4 keeps its one core busy, as a router's load does")
	fs.Var(&f.env, "http-serve-env", "extra environment `VAR=VALUE` for the server (repeatable), e.g. --http-serve-env=GOGC=400")
}

// options returns nil without --http.
func (f *httpBenchFlags) options(model string, args ...string) (*bench.HTTPOptions, error) {
	if !f.enabled {
		return nil, nil
	}
	bin := f.bin
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("bench --http: %w", err)
		}
	}
	conns := []int(f.conns)
	if len(conns) == 0 {
		conns = []int{1, 4}
	}
	for _, n := range conns {
		if n < 1 || n > 64 {
			return nil, fmt.Errorf("bench --http-conns %d: want 1 to 64", n)
		}
	}
	return &bench.HTTPOptions{MinCPU: f.minCPU, Conns: conns,
		Server: bench.ServerOptions{Bin: bin, ModelDir: model, Args: append(args, f.args...), Env: f.env}}, nil
}
