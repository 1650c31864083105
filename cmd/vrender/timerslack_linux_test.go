package main

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestExecWithTimerSlack runs this test binary as a helper that calls
// execWithTimerSlack as `vrender serve` would: it re-executes itself once
// with the slack set, and its second run reports the slack it has.
func TestExecWithTimerSlack(t *testing.T) {
	if os.Getenv("VRENDER_TEST_TIMER_SLACK_HELPER") == "1" {
		execWithTimerSlack([]string{"serve", "--help"})
		slack, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile("/proc/self/timerslack_ns")
		t.Logf("SLACK %d PROC %s", slack, strings.TrimSpace(string(data)))
		return
	}
	// The helper inherits this process's slack: the figures below assume
	// Linux's default.
	if parent, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); err != nil || parent != 50000 {
		t.Skipf("this process runs with %d ns of timer slack (%v), not Linux's default", parent, err)
	}
	for _, tc := range []struct{ env, want string }{
		{"", "SLACK 1000000 PROC 1000000"},
		{"VRENDER_TIMER_SLACK_NS=200000", "SLACK 200000 PROC 200000"},
		{"VRENDER_TIMER_SLACK_NS=0", "SLACK 50000 PROC 50000"},
		{"VRENDER_TIMER_SLACK_NS=x", "SLACK 50000 PROC 50000"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestExecWithTimerSlack$", "-test.v")
		cmd.Env = append(os.Environ(), "VRENDER_TEST_TIMER_SLACK_HELPER=1")
		if tc.env != "" {
			cmd.Env = append(cmd.Env, tc.env)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.env, err, out)
		}
		if !strings.Contains(string(out), tc.want) || strings.Count(string(out), "SLACK ") != 1 {
			t.Errorf("%q: want %q once in\n%s", tc.env, tc.want, out)
		}
	}
	// Other commands never exec.
	execWithTimerSlack([]string{"render"})
	execWithTimerSlack(nil)
}

func TestSlackCommand(t *testing.T) {
	for args, want := range map[string]bool{"serve": true, "serve --help": true, "bench send-floor-server --bytes 9": true,
		"bench images": false, "bench": false, "render": false, "": false} {
		if got := slackCommand(strings.Fields(args)); got != want {
			t.Errorf("slackCommand(%q) = %v", args, got)
		}
	}
}

// TestExecWithTimerSlackRealTime runs the helper as a real-time thread,
// whose timer slack Linux keeps at 0 whatever PR_SET_TIMERSLACK asks
// (since 6.x, without an error): it must not exec, where exec'ing again
// and again would find the slack short every time.
func TestExecWithTimerSlackRealTime(t *testing.T) {
	if os.Getenv("VRENDER_TEST_TIMER_SLACK_RT_HELPER") == "1" {
		runtime.LockOSThread() // the thread execWithTimerSlack runs on
		if err := unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: 1}, 0); err != nil {
			t.Logf("NO REAL TIME: %v", err)
			return
		}
		execWithTimerSlack([]string{"serve"})
		slack, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
		t.Logf("SLACK %d (%v)", slack, err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestExecWithTimerSlackRealTime$", "-test.v")
	cmd.Env = append(os.Environ(), "VRENDER_TEST_TIMER_SLACK_RT_HELPER=1")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the real-time helper did not end (exec'ing again and again?): %v\n%.500s", err, out)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(string(out), "NO REAL TIME") {
		t.Skipf("this process may not run real-time threads:\n%s", out)
	}
	if strings.Count(string(out), "SLACK ") != 1 {
		t.Errorf("want one SLACK line in\n%s", out)
	}
}
