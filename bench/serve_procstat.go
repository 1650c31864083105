package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// clockTicksPerSecond is USER_HZ, the unit of /proc/PID/stat's CPU times.
// Linux fixes it at 100 on every architecture Go supports (sysconf's
// _SC_CLK_TCK would need cgo to ask).
const clockTicksPerSecond = 100

// ProcCPUSeconds returns the user+system CPU time, in seconds, that process
// pid (all its threads) has used so far, under root ("/proc" on a live
// system): the sum of its threads' run times in nanoseconds
// (task/TID/schedstat), else /proc/PID/stat's, which counts in 10 ms
// ticks. A row that stops once the ticks say it has used its CPU ends
// just after a tick and starts anywhere within one: the ticks overstate
// its CPU by half a tick on average, 3% of a 150 ms row.
func ProcCPUSeconds(root string, pid int) (float64, error) {
	if s, ok := taskRunSeconds(root, pid); ok {
		return s, nil
	}
	path := root + "/" + strconv.Itoa(pid) + "/stat"
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("server CPU: %w", err)
	}
	return parseProcStat(data)
}

// taskRunSeconds sums the first field of every task/TID/schedstat of pid:
// the thread's time on a CPU in nanoseconds (the scheduler's
// sum_exec_runtime, of which /proc/PID/stat's ticks are a rounding). ok is
// false when any is unreadable or malformed. A thread that exits leaves
// the sum (Go's runtime keeps its threads).
func taskRunSeconds(root string, pid int) (float64, bool) {
	dir := root + "/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil || len(tasks) == 0 {
		return 0, false
	}
	var ns uint64
	for _, t := range tasks {
		data, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if errors.Is(err, fs.ErrNotExist) {
			continue // exited since the listing
		}
		f := strings.Fields(string(data))
		if err != nil || len(f) == 0 {
			return 0, false
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		ns += v
	}
	return float64(ns) / 1e9, true
}

// parseProcStat reads utime and stime (fields 14 and 15) from a
// /proc/PID/stat line. The command name (field 2) is parenthesised and may
// hold spaces and parentheses itself, so fields are counted after its last ')'.
func parseProcStat(data []byte) (float64, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return 0, fmt.Errorf("server CPU: malformed stat line %q", data)
	}
	// After ")": field 3 (state) is rest[0], so field k is rest[k-3].
	rest := strings.Fields(string(data[end+1:]))
	if len(rest) < 13 {
		return 0, fmt.Errorf("server CPU: stat line has %d fields after the command name, want at least 13", len(rest))
	}
	utime, err1 := strconv.ParseUint(rest[14-3], 10, 64)
	stime, err2 := strconv.ParseUint(rest[15-3], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("server CPU: bad utime/stime %q %q", rest[14-3], rest[15-3])
	}
	return float64(utime+stime) / clockTicksPerSecond, nil
}

// cpuOf sums the CPU seconds of several processes.
func cpuOf(root string, pids []int) (float64, error) {
	total := 0.0
	for _, pid := range pids {
		s, err := ProcCPUSeconds(root, pid)
		if err != nil {
			return 0, err
		}
		total += s
	}
	return total, nil
}

// PeakRSS returns process pid's peak resident set size in bytes (VmHWM of
// /proc/PID/status under root).
func PeakRSS(root string, pid int) (int64, error) {
	data, err := os.ReadFile(root + "/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("server peak RSS: %w", err)
	}
	return parseVmHWM(data)
}

// parseVmHWM reads the VmHWM line ("VmHWM:\t  123456 kB") of a
// /proc/PID/status file.
func parseVmHWM(data []byte) (int64, error) {
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, "VmHWM:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("server peak RSS: malformed %q", line)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("server peak RSS: %w", err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("server peak RSS: no VmHWM line")
}
