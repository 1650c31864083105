package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
)

// HTTPOptions configures the over-HTTP half of a benchmark.
type HTTPOptions struct {
	Server ServerOptions
	// MinCPU is how much server CPU each workload runs for: /proc counts
	// in 10 ms ticks, so a second gives 1% resolution.
	MinCPU time.Duration
	// Conns are the connection counts independent workloads are measured
	// at, each a table section of its own (default 1: one request at a
	// time). At 1 the server idles between requests and pays the wake-up
	// every time; with enough connections its core stays busy, as under a
	// router's load.
	Conns []int
	// MinUnits is the fewest units each workload runs (default 3).
	MinUnits int
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
	ServerPinned bool     `json:"server_pinned"`
	ClientPinned bool     `json:"client_pinned"`
	ServerArgs   []string `json:"server_args,omitempty"`
	ServerEnv    []string `json:"server_env,omitempty"`
	// Floors are GET /v1/models at each connection count, in Conns order;
	// every row's FloorRatio is against the floor of its own count.
	Floors []HTTPRow `json:"floors"`
	Rows   []HTTPRow `json:"rows"`
}

// RunHTTP starts the server, measures the trivial-request floor and then
// every workload on it, and fills in the floor columns. The caller adds
// the in-process and reference figures with Compare.
func RunHTTP(ctx context.Context, opts HTTPOptions, workloads []Workload) (*HTTPReport, error) {
	if opts.MinCPU <= 0 {
		opts.MinCPU = time.Second
	}
	if len(opts.Conns) == 0 {
		opts.Conns = []int{1}
	}
	if opts.MinUnits < 1 {
		opts.MinUnits = 3
	}
	srv, err := StartServer(ctx, opts.Server)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	restore, clientPinned := pinProcess(1)
	defer restore()
	rep := &HTTPReport{ServerPinned: srv.Pinned, ClientPinned: clientPinned, ServerArgs: opts.Server.Args, ServerEnv: opts.Server.Env}
	for k, conns := range opts.Conns {
		if k > 0 && !slices.ContainsFunc(workloads, func(w Workload) bool { return w.Independent }) {
			break // nothing more to measure at other counts
		}
		floor, err := srv.Measure(ctx, FloorWorkload(), opts.MinCPU, 100, conns)
		if err != nil {
			return nil, err
		}
		rep.Floors = append(rep.Floors, HTTPRow{HTTPResult: floor, FloorRatio: 1})
		for _, w := range workloads {
			if k > 0 && !w.Independent {
				continue // over one connection only: measured in the first section
			}
			r, err := srv.Measure(ctx, w, opts.MinCPU, opts.MinUnits, conns)
			if err != nil {
				return rep, err
			}
			rep.Rows = append(rep.Rows, HTTPRow{HTTPResult: r, FloorRatio: r.CPUPerReqNs / floor.CPUPerReqNs})
		}
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
			row.OverheadPct = 100 * (row.CPUPerReqNs - inProcessNs - r.Floor(row.Conns).CPUPerReqNs) / inProcessNs
		}
	}
}

// Floor is the trivial request's row at conns connections (the first
// section's when none was measured at that count).
func (r *HTTPReport) Floor(conns int) HTTPRow {
	for _, f := range r.Floors {
		if f.Conns == conns {
			return f
		}
	}
	if len(r.Floors) == 0 {
		return HTTPRow{}
	}
	return r.Floors[0]
}

// WriteTable prints the over-HTTP figures.
func (r *HTTPReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	pin := pinLabel
	ew.printf("over HTTP: `vrender serve` child process, GOMAXPROCS=1, %s; keep-alive client %s; args %q env %q\n",
		pin(r.ServerPinned, "0"), pin(r.ClientPinned, "1"), r.ServerArgs, r.ServerEnv)
	ew.printf("server CPU = the server process's utime+stime (/proc/PID/stat) over the run, never client time; allocs from its\n")
	ew.printf("go_memstats_mallocs_total, syscalls from /proc/PID/io syscr+syscw; cold: every message new; warm: the same request again;\n")
	ew.printf("multi-turn: one unit = one session of %d requests; in-process = the same work without HTTP (RenderChat / Encode / httptest);\n", MultiTurnTurns)
	ew.printf("conns: keep-alive connections sending at once (1: one request at a time, the server idles between them); busy: server\n")
	ew.printf("CPU over wall time (100%%: its core saturated); × floor and HTTP+JSON against GET /v1/models at the same conns\n\n")
	ew.printf("%-24s %-10s %5s %5s %7s %14s %12s %10s %12s %13s %14s %8s %9s %9s %s\n", "workload", "kind", "conns", "busy", "units", "server µs/unit",
		"µs/request", "× floor", "allocs/unit", "syscalls/req", "in-process µs", "HTTP+JSON", "ref µs", "ratio", "target")
	var rows []HTTPRow
	for _, f := range r.Floors {
		rows = append(rows, f)
		for _, row := range r.Rows {
			if row.Conns == f.Conns {
				rows = append(rows, row)
			}
		}
	}
	for _, row := range rows {
		overhead := "-"
		if row.InProcessNs > 0 && row.Requests == row.Units {
			overhead = fmt.Sprintf("%.0f%%", row.OverheadPct)
		}
		ratio := "-"
		if row.Ratio > 0 {
			ratio = fmt.Sprintf("%.1fx", row.Ratio)
		}
		ew.printf("%-24s %-10s %5d %4.0f%% %7d %14.1f %12.1f %9.2fx %12.0f %13.1f %14.1f %8s %9.1f %9s %s\n", row.Name, row.Kind, row.Conns, row.BusyPct, row.Units,
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
