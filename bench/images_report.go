package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteTable prints the report as human-readable tables.
func (r *ImagesReport) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("bench images %s — image render over HTTP (/v1/chat/completions/render, data: URLs), per request\n", r.Model)
	ew.printf("machine: %d CPUs, load average %s before, %s after%s\n", r.NumCPU, orDash(r.LoadBefore), orDash(r.LoadAfter), busyNote(r.LoadBefore, r.LoadAfter, r.NumCPU))
	ew.printf("server: `vrender serve` child, GOMAXPROCS=1, %s; keep-alive client %s; server CPU = its utime+stime from /proc/PID/stat\n",
		pinLabel(r.ServerPinned, "0"), pinLabel(r.ClientPinned, "1"))
	ew.printf("syscalls: %s; allocs: its go_memstats_mallocs_total; peak RSS: its VmHWM after the row (running peak)\n", r.SyscallCounter)
	ew.printf("in-process: the same request through the server's handler in this process (httptest, GOMAXPROCS=1, CPU inside ServeHTTP;\n")
	ew.printf("allocs and bytes from runtime/metrics, the client's bodies left out)\n")
	ew.printf("reference: /usr/bin/python3 %s, Pillow %s, numpy %s, one process, %s: vLLM's image load, smart_resize, Pillow BICUBIC,\n",
		orDash(r.Python), orDash(r.Pillow), orDash(r.Numpy), pinLabel(r.RefPinned, "0"))
	ew.printf("numpy rescale/normalize/patchify and bf16 per image (tools/refimage/bench.py), CPU per image (median), times the request's images:\n")
	ew.printf("a floor under vLLM's own cost; ratio = reference / server CPU per request. Every image of every request is new (a tag in a\n")
	ew.printf("segment decoders skip), so no cache serves it; no-kwargs = return_mm_kwargs false\n")
	if f := r.SendFloor; f != nil {
		ew.printf("send floor (under %s full): the same requests, client and pinning against a child that reads each request and\n", f.Request)
		ew.printf("answers a static body of the full-path answer's size as `vrender serve` writes it, measured right after the matrix: what\n")
		ew.printf("receiving the request and sending the answer over loopback cost with no image work; best possible = reference / floor\n")
	}
	ew.printf("\n")

	ew.printf("%-6s %-10s %9s %11s %12s %7s %14s\n", "format", "size", "bytes", "resized", "grid", "tokens", "ref ms/image")
	for _, in := range r.Images {
		ew.printf("%-6s %-10s %9d %11s %12s %7d %14.2f\n", in.Format, in.Size, in.Bytes, fmt.Sprintf("%dx%d", in.ResizedHW[1], in.ResizedHW[0]),
			fmt.Sprintf("%d,%d,%d", in.GridTHW[0], in.GridTHW[1], in.GridTHW[2]), in.Tokens, in.ReferenceNs/1e6)
	}
	ew.printf("\n")

	ew.printf("%-22s %-9s %8s %6s %10s %5s %9s %12s %8s %12s %11s %9s %10s %8s %s\n", "request", "mode", "body MB", "units",
		"server ms", "busy", "syscalls", "allocs", "RSS MiB", "in-proc ms", "allocs/op", "MiB/op", "ref ms", "ratio", "target")
	ew.printf("%-22s %-9s %8s %6d %10.3f %4.0f%% %9.1f %12.0f %8.0f %12s %11s %9s %10s %8s\n", "GET /v1/models", "floor", "-", r.Floor.Units,
		r.Floor.CPUPerReqNs/1e6, r.Floor.BusyPct, r.Floor.SyscallsPerReq, r.Floor.AllocsPerUnit, mib(r.Floor.PeakRSSBytes), "-", "-", "-", "-", "-")
	for _, row := range r.Rows {
		ew.printf("%-22s %-9s %8.2f %6d %10.2f %4.0f%% %9.1f %12.0f %8.0f %12.2f %11.0f %9.1f %10.1f %7.1fx %s\n",
			fmt.Sprintf("%s %s x%d", row.Format, row.Size, row.Images), row.Mode, float64(row.BodyBytes)/(1<<20), row.HTTP.Units,
			row.HTTP.CPUPerReqNs/1e6, row.HTTP.BusyPct, row.HTTP.SyscallsPerReq, row.HTTP.AllocsPerUnit, mib(row.HTTP.PeakRSSBytes),
			row.InProcess.NsPerOp/1e6, row.InProcess.AllocsPerOp, row.InProcess.BytesPerOp/(1<<20), row.ReferenceNs/1e6, row.Ratio,
			targetLabel(row.Ratio, row.Target))
		if f := r.SendFloor; f != nil && row.Target == TargetImageFullRatio && row.Mode == ModeFull {
			writeSendFloor(ew, f, row)
		}
	}

	if c := r.Conversation; c != nil {
		ew.printf("\nconversation: %d turns (one unit = one conversation over one connection), each request the conversation so far and the\n", c.Turns)
		ew.printf("same two %s screenshots again, full path; reference = two images per request (vLLM's render server keeps no cache)\n", c.Screenshot)
		uncached := "-"
		if c.UncachedNs > 0 {
			uncached = fmt.Sprintf("%.2f", c.UncachedNs/1e6)
		}
		ew.printf("%-22s %6s %14s %22s %9s %10s %8s %s\n", "workload", "units", "server ms/req", "uncached ms/req (2x1)", "syscalls", "ref ms/req", "ratio", "target")
		ew.printf("%-22s %6d %14.2f %22s %9.1f %10.1f %7.1fx %s\n", fmt.Sprintf("%d turns, 2 screenshots", c.Turns), c.HTTP.Units,
			c.HTTP.CPUPerReqNs/1e6, uncached, c.HTTP.SyscallsPerReq, c.ReferenceNs/1e6, c.Ratio, targetLabel(c.Ratio, c.Target))
	}

	if len(r.Scaling) > 0 {
		ew.printf("\nscaling: the same load (%s, %s) against a fresh server per core count (taskset -c 0..N-1, GOMAXPROCS=N;\n",
			r.Scaling[0].Workload, r.Scaling[0].ScalingLoad)
		ew.printf("the client shares CPU 1 with a 2-core server); reference: one media thread, the same requests/s at any core count\n")
		ew.printf("req/s: wall time; CPU-bound req/s: cores / server CPU per request, what the cores give when nothing else runs on them\n")
		ew.printf("%5s %9s %14s %10s %10s %5s %16s %13s %16s %14s %15s\n", "cores", "requests", "server ms/req", "req/s", "req/s/core", "busy",
			"CPU-bound req/s", "ref req/s", "ref req/s/core", "RSS idle MiB", "RSS peak MiB")
		for _, s := range r.Scaling {
			ew.printf("%5d %9d %14.2f %10.2f %10.2f %4.0f%% %16.2f %13.2f %16.2f %14.0f %15.0f\n", s.Cores, s.HTTP.Requests, s.HTTP.CPUPerReqNs/1e6,
				s.ReqPerSec, s.PerCore, s.HTTP.BusyPct, s.CPUBoundPerSec, s.RefPerSec, s.RefPerSec/float64(s.Cores), mib(s.BaseRSS), mib(s.HTTP.PeakRSSBytes))
		}
	}
	return ew.err
}

// writeSendFloor prints the send floor under its full-path row: the floor
// in the row's columns, then the image work above it.
func writeSendFloor(ew *errWriter, f *SendFloorRow, full ImageRow) {
	allocs := "-"
	if f.HTTP.AllocsPerUnit >= 0 {
		allocs = fmt.Sprintf("%.0f", f.HTTP.AllocsPerUnit)
	}
	ew.printf("%-22s %-9s %8.2f %6d %10.2f %4.0f%% %9.1f %12s %8.0f %12s %11s %9s %10.1f %7.1fx %s\n",
		"  send floor", "static", float64(full.BodyBytes)/(1<<20), f.HTTP.Units, f.HTTP.CPUPerReqNs/1e6, f.HTTP.BusyPct,
		f.HTTP.SyscallsPerReq, allocs, mib(f.HTTP.PeakRSSBytes), "-", "-", "-", f.ReferenceNs/1e6, f.BestRatio, "best possible")
	share := 0.0
	if full.HTTP.CPUPerReqNs > 0 {
		share = 100 * f.ImageWorkNs / full.HTTP.CPUPerReqNs
	}
	ew.printf("%-22s image work above the send floor %.2f ms of %.2f (%.0f%%); the floor answers %.2f MB of static bytes in %d KiB writes\n",
		"", f.ImageWorkNs/1e6, full.HTTP.CPUPerReqNs/1e6, share, float64(f.AnswerBytes)/(1<<20), f.WriteBytes>>10)
}

// targetLabel is "≥6x met" / "≥6x MISSED", or "" without a target.
func targetLabel(ratio, target float64) string {
	if target <= 0 {
		return ""
	}
	return fmt.Sprintf("≥%gx %s", target, verdict(ratio >= target))
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// busyNote says the machine was shared when its load average was near or
// above its CPU count: the figures then carry other work's noise.
func busyNote(before, after string, cpus int) string {
	peak := 0.0
	for _, s := range []string{before, after} {
		if f := strings.Fields(s); len(f) > 0 {
			if v, err := strconv.ParseFloat(f[0], 64); err == nil {
				peak = max(peak, v)
			}
		}
	}
	if cpus > 0 && peak >= 0.5*float64(cpus) {
		return fmt.Sprintf(" — the machine was shared (1-minute load %.2f on %d CPUs): figures carry other work's noise", peak, cpus)
	}
	return ""
}
