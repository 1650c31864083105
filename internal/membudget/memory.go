package membudget

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// SystemMemory is the memory this process may use: the cgroup's limit
// (v2 memory.max, v1 memory.limit_in_bytes) when there is one, else the
// machine's MemTotal. ok is false where neither can be read.
func SystemMemory() (bytes int64, ok bool) {
	total, ok := memTotal()
	if limit, lok := cgroupLimit(); lok && (!ok || limit < total) {
		return limit, true
	}
	return total, ok
}

func memTotal() (int64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// MemTotal:       24684768 kB
		if rest, found := strings.CutPrefix(sc.Text(), "MemTotal:"); found {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil || kb <= 0 {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}

// cgroupLimit reads the memory limit of the cgroup at the root of this
// process's view (containers see their own cgroup there); "max" or a v1
// limit near 2^63 means none.
func cgroupLimit() (int64, bool) {
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 {
			return 0, false
		}
		return n, true
	}
	return 0, false
}
