package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	cases := []struct {
		name, line string
		want       float64
		wantErr    string
	}{
		{"plain", "1234 (vrender) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 12 0 100 0 0", 3.25, ""},
		{"command with spaces and parens", "77 (a) b (c)) R 1 77 77 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 5 0 0", 0.03, ""},
		{"truncated", "77 (x) R 1 2", 0, "fields"},
		{"no command", "garbage", 0, "malformed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProcStat([]byte(tc.line))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !near(got, tc.want) {
				t.Fatalf("parseProcStat = %g, %v; want %g", got, err, tc.want)
			}
		})
	}
}

func TestProcCPUSeconds(t *testing.T) {
	root := t.TempDir()
	for pid, line := range map[string]string{
		"10": "10 (a) S 1 1 1 0 -1 0 0 0 0 0 100 50 0 0 20 0 1 0 1 0 0\n",
		"11": "11 (b) S 1 1 1 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 1 0 0\n",
	} {
		if err := os.MkdirAll(filepath.Join(root, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, pid, "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := cpuOf(root, []int{10, 11})
	if err != nil || !near(got, 1.6) {
		t.Errorf("cpuOf = %g, %v; want 1.6", got, err)
	}
	if _, err := cpuOf(root, []int{12}); err == nil {
		t.Error("cpuOf of a missing pid succeeded")
	}
	// Threads' run times in nanoseconds are preferred to the ticks; a
	// malformed one falls back to them.
	for tid, stat := range map[string]string{"10": "1500000000 20 3\n", "12": "250000001 0 1\n"} {
		if err := os.MkdirAll(filepath.Join(root, "10", "task", tid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "10", "task", tid, "schedstat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := ProcCPUSeconds(root, 10); err != nil || got != 1.750000001 {
		t.Errorf("ProcCPUSeconds from schedstat = %.9f, %v; want 1.750000001", got, err)
	}
	if err := os.WriteFile(filepath.Join(root, "10", "task", "12", "schedstat"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ProcCPUSeconds(root, 10); err != nil || !near(got, 1.5) {
		t.Errorf("ProcCPUSeconds with a bad schedstat = %g, %v; want the ticks' 1.5", got, err)
	}
	// The live /proc of this process: some CPU has been used by now, and
	// the two counts agree to a few ticks.
	if s, ok := taskRunSeconds("/proc", os.Getpid()); ok {
		ticks, err := parseProcStatFile(t, "/proc/self/stat")
		if err == nil && (s < ticks-0.05 || s > ticks+0.05) {
			t.Errorf("threads' run time %g s, ticks %g s", s, ticks)
		}
	}
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		if s, err := ProcCPUSeconds("/proc", os.Getpid()); err != nil || s < 0 {
			t.Errorf("live ProcCPUSeconds = %g, %v", s, err)
		}
	}
}

func TestParseVmHWM(t *testing.T) {
	cases := []struct {
		name, status string
		want         int64
		wantErr      string
	}{
		{"kB", "Name:\tvrender\nVmPeak:\t  900000 kB\nVmHWM:\t  123456 kB\nVmRSS:\t 100 kB\n", 123456 << 10, ""},
		{"missing", "Name:\tvrender\nVmRSS:\t 100 kB\n", 0, "no VmHWM"},
		{"no unit", "VmHWM:\t 12\n", 0, "malformed"},
		{"not a number", "VmHWM:\t x kB\n", 0, "peak RSS"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseVmHWM([]byte(tc.status))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parseVmHWM = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func parseProcStatFile(t *testing.T, path string) (float64, error) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return parseProcStat(data)
}
