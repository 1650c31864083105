package bench

import (
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// pinProcess moves every thread of this process to CPU cpu (threads made
// later inherit it) and returns a function restoring their old masks. The
// HTTP benchmarks pin the client away from the server's CPU 0 so the
// server's figures are not the client's. false: not pinned.
func pinProcess(cpu int) (restore func(), ok bool) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil || cpu >= 64 {
		return func() {}, false
	}
	type saved struct {
		tid  int
		mask uint64
	}
	var old []saved
	want := uint64(1) << cpu
	ok = true
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		var mask uint64
		if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, uintptr(tid), 8, uintptr(unsafe.Pointer(&mask))); e != 0 {
			ok = false
			continue
		}
		if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid), 8, uintptr(unsafe.Pointer(&want))); e != 0 {
			ok = false
			continue
		}
		old = append(old, saved{tid, mask})
	}
	return func() {
		for _, s := range old {
			m := s.mask
			syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(s.tid), 8, uintptr(unsafe.Pointer(&m)))
		}
	}, ok
}
