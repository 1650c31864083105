//go:build unix

package testenv

import (
	"testing"

	"golang.org/x/sys/unix"
)

// GuardedPages returns n bytes that end where an inaccessible page begins,
// so that a kernel reading or writing a byte past them faults; it skips
// the test where the pages cannot be mapped so.
func GuardedPages(t testing.TB, n int) []byte {
	t.Helper()
	page := unix.Getpagesize()
	size := (n+page-1)/page*page + page
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	t.Cleanup(func() { _ = unix.Munmap(mem) })
	if err := unix.Mprotect(mem[size-page:], unix.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	return mem[size-page-n : size-page : size-page]
}
