//go:build unix

package vision

import (
	"testing"

	"golang.org/x/sys/unix"
)

// guardedPages returns n bytes that end where an inaccessible page begins, so that a kernel reading a
// byte past them faults.
func guardedPages(t *testing.T, n int) []byte {
	t.Helper()
	page := unix.Getpagesize()
	size := (n+page-1)/page*page + page
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	if err := unix.Mprotect(mem[size-page:], unix.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	return mem[size-page-n : size-page]
}
