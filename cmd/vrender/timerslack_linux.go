package main

import (
	"os"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/vrender/vrender/bench"
)

// serveTimerSlackNs is the timer slack `vrender serve` runs with instead
// of Linux's 50 µs. Go's sysmon thread sleeps 20 µs at a time for its first
// ~50 ticks after every idle spell (every request, when they come one at a
// time) and again after every system call it retakes a P from, and with
// 50 µs of slack each tick is a wake-up and two context switches on the
// server's core: on this 2-core VM 1.1-1.6 ms of CPU per one-1280x720-JPEG
// request (its thread's own schedstat) and 70-80 context switches. With
// 1 ms the timer is free to fire with the next one due on the core: one
// 1280x720 JPEG, full path, cache off, 7.79 against 8.73 ms of server CPU
// (mean of 6 interleaved runs of 50 requests, lower in 5 of 6, 11 against
// 77 context switches a request; an earlier run 8.42 against 9.56), with
// the cache filling 10.76 against 11.48 (lower in 5 of 6). The price: timers (deadlines, sleeps) may fire
// up to 1 ms late, and with GOMAXPROCS=1 a goroutine runnable while
// another is in a long cgo call or system call may wait up to that long
// for sysmon to hand it the P.
const serveTimerSlackNs = 1_000_000

// slackCommand reports whether args run a server: `vrender serve`, or the
// send floor's server, which must pay what `vrender serve` pays.
func slackCommand(args []string) bool {
	return len(args) > 0 && args[0] == "serve" || len(args) > 1 && args[0] == "bench" && args[1] == bench.SendFloorCommand
}

// execWithTimerSlack re-executes `vrender serve` with its timer slack
// (VRENDER_TIMER_SLACK_NS sets another; 0 leaves the process as it is).
// Timer slack is inherited by new threads and kept across exec, and the
// runtime starts sysmon before main, so only a re-exec reaches it. It
// returns when it did not exec: another command, the slack already that
// large (as after the exec), or a failure, which leaves the slack as it
// was.
func execWithTimerSlack(args []string) {
	if !slackCommand(args) {
		return
	}
	want := serveTimerSlackNs
	if v, ok := os.LookupEnv("VRENDER_TIMER_SLACK_NS"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return
		}
		want = n
	}
	// The slack is the thread's own: set and exec on one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cur, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil || cur >= want {
		return
	}
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(want), 0, 0, 0); err != nil {
		return
	}
	// Linux may take the value without error and keep another (a
	// real-time thread's slack stays 0): exec'ing then would find it short
	// again after the exec, and exec again for ever.
	if got, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); err == nil && got >= want {
		// The running image, not a path: a binary replaced on disk since
		// the start must not be what runs on.
		_ = syscall.Exec("/proc/self/exe", os.Args, os.Environ())
	}
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(cur), 0, 0, 0)
}
