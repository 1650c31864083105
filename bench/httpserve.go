package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// ServerOptions starts `vrender serve` as the process an HTTP benchmark
// drives: GOMAXPROCS=1, pinned to CPU 0 with taskset where it exists (Cores
// CPUs from CPU 0 and GOMAXPROCS=Cores when Cores > 1), its log in a
// temporary file (the access log is part of what a request costs).
type ServerOptions struct {
	Bin      string   // the vrender binary
	ModelDir string   // model directory served as "m"
	Args     []string // extra `vrender serve` flags (parsers, --disable-uvicorn-access-log, GC settings)
	Env      []string // extra environment (GOGC=..., GOMEMLIMIT=...)
	Cores    int      // CPUs the server may use (0: 1)
}

// Server is a running child `vrender serve`.
type Server struct {
	URL    string
	Pinned bool
	cmd    *exec.Cmd
	log    *os.File
	client *http.Client
	// nextUnit numbers units across every Measure on this server, so a
	// workload measured twice (at two connection counts) never repeats a
	// cold unit's text.
	nextUnit int
}

// StartServer starts the server and waits until /health answers.
func StartServer(ctx context.Context, opts ServerOptions) (*Server, error) {
	return startChild(ctx, opts, func(port int) []string {
		return append([]string{"serve", opts.ModelDir, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
			"--served-model-name", "m"}, opts.Args...)
	})
}

// startChild starts opts.Bin with the arguments args gives for a free
// port, pinned as ServerOptions says, and waits until /health answers.
func startChild(ctx context.Context, opts ServerOptions, args func(port int) []string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.CreateTemp("", "vrender-bench-serve-*.log")
	if err != nil {
		return nil, fmt.Errorf("bench http: %w", err)
	}
	cores := max(1, opts.Cores)
	cmd, pinned := pinnedCommand(ctx, cores, opts.Bin, args(port)...)
	cmd.Env = append(append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(cores)), opts.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		os.Remove(logf.Name())
		return nil, fmt.Errorf("bench http: start %s: %w", opts.Bin, err)
	}
	s := &Server{URL: "http://127.0.0.1:" + strconv.Itoa(port), Pinned: pinned, cmd: cmd, log: logf,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: maxConns, DisableCompression: true}}}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := s.client.Get(s.URL + "/health")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.Stop()
			return nil, fmt.Errorf("bench http: server did not become healthy: %s", s.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Pid is the server's process id (taskset execs the server, so it is the
// server's own).
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Stop interrupts the server, waits for it and removes its log.
func (s *Server) Stop() {
	s.client.CloseIdleConnections()
	_ = s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	s.log.Close()
	os.Remove(s.log.Name())
}

func (s *Server) logTail() string {
	data, _ := os.ReadFile(s.log.Name())
	if len(data) > 2000 {
		data = data[len(data)-2000:]
	}
	return string(data)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("bench http: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Call is one HTTP request of a workload.
type Call struct {
	Method, Path string
	Body         []byte
}

// Workload produces the calls of a measurement. Next(i) gives the i-th
// unit of work (one request, or a whole multi-turn session); check, when
// set, inspects every response body. Independent workloads (Next a pure
// function of i, no Check) may be driven over several connections at
// once; the others always run over one, in order.
type Workload struct {
	Name        string
	Kind        string // "cold", "warm", "multi-turn", "floor": how the text relates to earlier requests
	Next        func(i int) ([]Call, error)
	Check       func(body []byte) error
	Independent bool
}

// maxConns bounds the connections one measurement opens.
const maxConns = 64

// ServerSample is what the server process has used so far.
type ServerSample struct {
	CPUSeconds float64
	Syscalls   int64 // syscr + syscw from /proc/PID/io; -1 if unreadable
	Mallocs    int64 // go_memstats_mallocs_total from /metrics; -1 if absent
}

// HTTPResult is the server's cost per unit of a workload.
type HTTPResult struct {
	Name           string  `json:"name"`
	Kind           string  `json:"kind"`
	Conns          int     `json:"connections"`
	BusyPct        float64 `json:"server_busy_pct"` // server CPU over wall time: 100 = its core saturated
	Units          int     `json:"units"`
	Requests       int     `json:"requests"`
	CPUSeconds     float64 `json:"server_cpu_seconds"`
	CPUPerUnitNs   float64 `json:"server_cpu_ns_per_unit"`
	CPUPerReqNs    float64 `json:"server_cpu_ns_per_request"`
	AllocsPerUnit  float64 `json:"allocs_per_unit"`
	SyscallsPerReq float64 `json:"syscalls_per_request"`
	WallSeconds    float64 `json:"wall_seconds"`
	// PeakRSSBytes is the server's VmHWM after the run: the most memory
	// it has held since it started, this workload and all before it.
	PeakRSSBytes int64 `json:"server_peak_rss_bytes,omitempty"`
}

// Sample reads the server's CPU time, syscall counts and allocation count.
func (s *Server) Sample(ctx context.Context) (ServerSample, error) {
	var out ServerSample
	cpu, err := ProcCPUSeconds("/proc", s.Pid())
	if err != nil {
		return out, err
	}
	out.CPUSeconds = cpu
	out.Syscalls = -1
	if data, err := os.ReadFile("/proc/" + strconv.Itoa(s.Pid()) + "/io"); err == nil {
		if n, err := parseProcIO(data); err == nil {
			out.Syscalls = n
		}
	}
	out.Mallocs = -1
	req, err := http.NewRequestWithContext(ctx, "GET", s.URL+"/metrics", nil)
	if err != nil {
		return out, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return out, fmt.Errorf("bench http: /metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return out, fmt.Errorf("bench http: /metrics: %w", err)
	}
	if v, ok := promValue(body, "go_memstats_mallocs_total"); ok {
		out.Mallocs = int64(v)
	}
	return out, nil
}

// parseProcIO sums syscr and syscw, the read and write system calls
// /proc/PID/io counts.
func parseProcIO(data []byte) (int64, error) {
	var total int64
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "syscr" && k != "syscw") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bench http: /proc io %s: %w", k, err)
		}
		total += n
		found++
	}
	if found != 2 {
		return 0, fmt.Errorf("bench http: /proc io: syscr or syscw missing")
	}
	return total, nil
}

// promValue returns the value of an unlabelled sample in a Prometheus text
// exposition.
func promValue(body []byte, name string) (float64, bool) {
	for _, line := range strings.Split(string(body), "\n") {
		rest, ok := strings.CutPrefix(line, name+" ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		return v, err == nil
	}
	return 0, false
}

// Measure drives w until the server has used at least minCPU of CPU time
// (and at least minUnits units), and returns the server's cost per unit.
// Only the server's own CPU time is counted (from /proc), never the
// client's wall time. An independent workload runs over conns keep-alive
// connections at once, its units made ahead of the requests so the client
// never keeps the server waiting; any other runs over one, unit by unit.
func (s *Server) Measure(ctx context.Context, w Workload, minCPU time.Duration, minUnits, conns int) (HTTPResult, error) {
	if !w.Independent || conns < 1 {
		conns = 1
	}
	conns = min(conns, maxConns)
	res := HTTPResult{Name: w.Name, Kind: w.Kind, Conns: conns}
	// Warm-up: connection, code paths, compiled template; one unit.
	if err := s.run(ctx, w, -1, nil); err != nil {
		return res, err
	}
	before, err := s.Sample(ctx)
	if err != nil {
		return res, err
	}
	start, wallStart := before.CPUSeconds, time.Now()
	if w.Independent {
		res.Units, res.Requests, err = s.drive(ctx, w, conns, func(units int) bool {
			return units >= minUnits && s.cpuSince(start) >= minCPU.Seconds()
		})
	} else {
		res.Units, res.Requests, err = s.runInOrder(ctx, w, func(units int) bool {
			return units >= minUnits && s.cpuSince(start) >= minCPU.Seconds()
		})
	}
	if err != nil {
		return res, err
	}
	wall := time.Since(wallStart).Seconds()
	after, err := s.Sample(ctx)
	if err != nil {
		return res, err
	}
	res.CPUSeconds, res.WallSeconds = after.CPUSeconds-before.CPUSeconds, wall
	res.BusyPct = 100 * res.CPUSeconds / wall
	if peak, err := PeakRSS("/proc", s.Pid()); err == nil {
		res.PeakRSSBytes = peak
	}
	res.CPUPerUnitNs = res.CPUSeconds * 1e9 / float64(res.Units)
	res.CPUPerReqNs = res.CPUSeconds * 1e9 / float64(res.Requests)
	res.AllocsPerUnit, res.SyscallsPerReq = -1, -1
	if before.Mallocs >= 0 && after.Mallocs >= 0 {
		res.AllocsPerUnit = float64(after.Mallocs-before.Mallocs) / float64(res.Units)
	}
	if before.Syscalls >= 0 && after.Syscalls >= 0 {
		res.SyscallsPerReq = float64(after.Syscalls-before.Syscalls) / float64(res.Requests)
	}
	return res, nil
}

// drive runs w's units over conns connections until done(units finished)
// says so: one goroutine makes units ahead (a few per connection), conns
// goroutines send them, each unit's calls in order on one connection. At
// the end no new unit is made and the units already made run to their
// end, so every request the server worked on is counted; an error stops
// everything at once.
func (s *Server) drive(ctx context.Context, w Workload, conns int, done func(units int) bool) (units, requests int, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := make(chan struct{})
	made := make(chan []Call, 2*conns)
	var genErr error
	go func() {
		defer close(made)
		for {
			calls, err := w.Next(s.nextUnit)
			if err != nil {
				genErr = err
				cancel()
				return
			}
			s.nextUnit++
			select {
			case made <- calls:
			case <-stop:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	type tally struct {
		units, requests int
		err             error
	}
	results := make(chan tally, conns)
	var finished atomic.Int64
	for range conns {
		go func() {
			var t tally
			for calls := range made {
				for _, c := range calls {
					if _, err := s.do(ctx, c, false); err != nil {
						if ctx.Err() == nil {
							t.err = fmt.Errorf("bench http %s: %w", w.Name, err)
						}
						cancel()
						results <- t
						return
					}
					t.requests++
				}
				t.units++
				finished.Add(1)
			}
			results <- t
		}()
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for ctx.Err() == nil && !done(int(finished.Load())) {
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
	}
	close(stop)
	for range conns {
		t := <-results
		units, requests = units+t.units, requests+t.requests
		if err == nil {
			err = t.err
		}
	}
	for range made {
		// drain what no worker took after an error
	}
	if genErr != nil {
		err = genErr
	}
	return units, requests, err
}

func (s *Server) cpuSince(start float64) float64 {
	now, err := ProcCPUSeconds("/proc", s.Pid())
	if err != nil {
		return 1e9 // the server is gone; the next request reports why
	}
	return now - start
}

// runInOrder runs w's units one after another until done(units finished)
// says so. The next unit is made while the current one runs, and done is
// asked at most once a millisecond: a client that takes its time between
// requests leaves the server idle, and a server woken from idle pays for
// it (caches others used meanwhile, the runtime's wake-ups): 0.6 ms of
// idle before each no-kwargs image request raised its server CPU by a
// fifth. A unit made ahead when done says stop is never sent.
func (s *Server) runInOrder(ctx context.Context, w Workload, done func(units int) bool) (units, requests int, err error) {
	type unit struct {
		calls []Call
		err   error
	}
	ctx, cancel := context.WithCancel(ctx)
	made, stopped := make(chan unit), make(chan struct{})
	defer func() {
		cancel()
		<-stopped // the maker's last s.nextUnit++ is done
	}()
	go func() {
		defer close(stopped)
		defer close(made)
		for {
			calls, err := w.Next(s.nextUnit)
			s.nextUnit++
			select {
			case made <- unit{calls, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var asked time.Time
	for {
		if now := time.Now(); now.Sub(asked) >= time.Millisecond {
			if asked = now; done(units) {
				return units, requests, nil
			}
		}
		u, ok := <-made
		if !ok {
			return units, requests, ctx.Err()
		}
		if u.err != nil {
			return units, requests, u.err
		}
		if err := s.runCalls(ctx, w, u.calls, &requests); err != nil {
			return units, requests, err
		}
		units++
	}
}

// run sends the calls of unit i (the warm-up passes -1: it uses unit 0's
// shape with text of its own, see the workloads).
func (s *Server) run(ctx context.Context, w Workload, i int, requests *int) error {
	calls, err := w.Next(i)
	if err != nil {
		return err
	}
	return s.runCalls(ctx, w, calls, requests)
}

// runCalls sends one unit's calls in order, checking each answer when w
// has a Check, and counts them in requests (when not nil).
func (s *Server) runCalls(ctx context.Context, w Workload, calls []Call, requests *int) error {
	for _, c := range calls {
		body, err := s.do(ctx, c, w.Check != nil)
		if err != nil {
			return fmt.Errorf("bench http %s: %w", w.Name, err)
		}
		if w.Check != nil {
			if err := w.Check(body); err != nil {
				return fmt.Errorf("bench http %s: %w", w.Name, err)
			}
		}
		if requests != nil {
			*requests++
		}
	}
	return nil
}

// do sends c and returns the answer's body when keep is set; otherwise it
// reads the body into nothing (image answers run to hundreds of megabytes,
// which the client would only copy and collect). An error's body is
// always kept for its message.
func (s *Server) do(ctx context.Context, c Call, keep bool) ([]byte, error) {
	var rd io.Reader
	if c.Body != nil {
		rd = bytes.NewReader(c.Body)
	}
	req, err := http.NewRequestWithContext(ctx, c.Method, s.URL+c.Path, rd)
	if err != nil {
		return nil, err
	}
	if c.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", c.Method, c.Path, err)
	}
	defer resp.Body.Close()
	if keep || resp.StatusCode != http.StatusOK {
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", c.Method, c.Path, err)
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s %s: status %d: %.300s", c.Method, c.Path, resp.StatusCode, body)
		}
		return body, nil
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return nil, fmt.Errorf("%s %s: %w", c.Method, c.Path, err)
	}
	return nil, nil
}

// FloorWorkload is the trivial request every figure is compared with.
func FloorWorkload() Workload {
	return Workload{Name: "GET /v1/models", Kind: "floor", Independent: true, Next: func(int) ([]Call, error) {
		return []Call{{Method: "GET", Path: "/v1/models"}}, nil
	}}
}

// jsonBody marshals a request body; the bench's own values always marshal.
func jsonBody(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("bench http: marshal request: %v", err))
	}
	return b
}
