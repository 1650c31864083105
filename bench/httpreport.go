package bench

import (
	"context"
	"fmt"
	"io"
	"time"
)

// HTTPOptions configures the over-HTTP half of a benchmark.
type HTTPOptions struct {
	Server ServerOptions
	// MinCPU is how much server CPU each workload runs for: /proc counts
	// in 10 ms ticks, so a second gives 1% resolution.
	MinCPU time.Duration
}

// HTTPRow is one workload's server cost beside the in-process figure and
// the reference of the same run (0 where there is none).
type HTTPRow struct {
	HTTPResult
	InProcessNs float64 `json:"in_process_ns_per_unit,omitempty"`
	ReferenceNs float64 `json:"reference_ns_per_unit,omitempty"`
	// Ratio is the reference over the server's CPU per unit.
	Ratio float64 `json:"ratio,omitempty"`
	// OverheadPct is server CPU per request minus the in-process figure
	// minus the trivial-request floor, as % of the in-process figure: what
	// HTTP and JSON add.
	OverheadPct float64 `json:"http_json_overhead_pct,omitempty"`
	// FloorRatio is the server CPU per request over the floor's.
	FloorRatio float64 `json:"floor_ratio,omitempty"`
	Target     string  `json:"target,omitempty"`
}

// HTTPReport is the over-HTTP table of a benchmark.
type HTTPReport struct {
	ServerPinned bool      `json:"server_pinned"`
	ClientPinned bool      `json:"client_pinned"`
	ServerArgs   []string  `json:"server_args,omitempty"`
	ServerEnv    []string  `json:"server_env,omitempty"`
	Floor        HTTPRow   `json:"floor"`
	Rows         []HTTPRow `json:"rows"`
}

// RunHTTP starts the server, measures the trivial-request floor and then
// every workload on it, and fills in the floor columns. The caller adds
// the in-process and reference figures with Compare.
func RunHTTP(ctx context.Context, opts HTTPOptions, workloads []Workload) (*HTTPReport, error) {
	if opts.MinCPU <= 0 {
		opts.MinCPU = time.Second
	}
	srv, err := StartServer(ctx, opts.Server)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	restore, clientPinned := pinProcess(1)
	defer restore()
	rep := &HTTPReport{ServerPinned: srv.Pinned, ClientPinned: clientPinned, ServerArgs: opts.Server.Args, ServerEnv: opts.Server.Env}
	floor, err := srv.Measure(ctx, FloorWorkload(), opts.MinCPU, 100)
	if err != nil {
		return nil, err
	}
	rep.Floor = HTTPRow{HTTPResult: floor, FloorRatio: 1}
	for _, w := range workloads {
		r, err := srv.Measure(ctx, w, opts.MinCPU, 3)
		if err != nil {
			return rep, err
		}
		rep.Rows = append(rep.Rows, HTTPRow{HTTPResult: r, FloorRatio: r.CPUPerReqNs / floor.CPUPerReqNs})
	}
	return rep, nil
}

// Compare fills in row i's in-process and reference figures (ns per unit;
// 0: none) and the ratios derived from them.
func (r *HTTPReport) Compare(name, kind string, inProcessNs, referenceNs float64, target string) {
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Name != name || row.Kind != kind {
			continue
		}
		row.InProcessNs, row.ReferenceNs, row.Target = inProcessNs, referenceNs, target
		if referenceNs > 0 && row.CPUPerUnitNs > 0 {
			row.Ratio = referenceNs / row.CPUPerUnitNs
		}
		if inProcessNs > 0 && row.Requests == row.Units {
			row.OverheadPct = 100 * (row.CPUPerReqNs - inProcessNs - r.Floor.CPUPerReqNs) / inProcessNs
		}
	}
}

// WriteTable prints the over-HTTP figures.
func (r *HTTPReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	pin := pinLabel
	ew.printf("over HTTP: `vrender serve` child process, GOMAXPROCS=1, %s; keep-alive client %s; args %q env %q\n",
		pin(r.ServerPinned, "0"), pin(r.ClientPinned, "1"), r.ServerArgs, r.ServerEnv)
	ew.printf("server CPU = the server process's utime+stime (/proc/PID/stat) over the run, never client time; allocs from its\n")
	ew.printf("go_memstats_mallocs_total, syscalls from /proc/PID/io syscr+syscw; cold: every message new; warm: the same request again;\n")
	ew.printf("multi-turn: one unit = one session of %d requests; in-process = the same work without HTTP (RenderChat / Encode / httptest)\n\n", MultiTurnTurns)
	ew.printf("%-24s %-10s %7s %14s %12s %10s %12s %13s %14s %8s %9s %9s %s\n", "workload", "kind", "units", "server µs/unit",
		"µs/request", "× floor", "allocs/unit", "syscalls/req", "in-process µs", "HTTP+JSON", "ref µs", "ratio", "target")
	for _, row := range append([]HTTPRow{r.Floor}, r.Rows...) {
		overhead := "-"
		if row.InProcessNs > 0 && row.Requests == row.Units {
			overhead = fmt.Sprintf("%.0f%%", row.OverheadPct)
		}
		ratio := "-"
		if row.Ratio > 0 {
			ratio = fmt.Sprintf("%.1fx", row.Ratio)
		}
		ew.printf("%-24s %-10s %7d %14.1f %12.1f %9.2fx %12.0f %13.1f %14.1f %8s %9.1f %9s %s\n", row.Name, row.Kind, row.Units,
			row.CPUPerUnitNs/1e3, row.CPUPerReqNs/1e3, row.FloorRatio, row.AllocsPerUnit, row.SyscallsPerReq, row.InProcessNs/1e3,
			overhead, row.ReferenceNs/1e3, ratio, row.Target)
	}
	return ew.err
}

// pinLabel says whether a process was pinned to cpu.
func pinLabel(pinned bool, cpu string) string {
	if pinned {
		return "pinned to CPU " + cpu
	}
	return "not pinned"
}
