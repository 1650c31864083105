package b64enc

import (
	"encoding/base64"
	"testing"

	"golang.org/x/sys/unix"
)

// guarded returns a page of memory followed by one that faults on any
// access, so that a buffer placed at the end of the first shows a read or
// write past its end by crashing.
func guarded(t *testing.T) []byte {
	t.Helper()
	ps := unix.Getpagesize()
	m, err := unix.Mmap(-1, 0, 2*ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	t.Cleanup(func() { _ = unix.Munmap(m) })
	if err := unix.Mprotect(m[ps:], unix.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	return m[:ps:ps]
}

// TestNoAccessPastEnd ends the source and then the output at a page
// boundary before an unreadable page: the full blocks load 64 bytes for 48
// and must stop while 16 more follow, the last blocks' masked loads and
// stores must not touch the page after.
func TestNoAccessPastEnd(t *testing.T) {
	in, out := guarded(t), guarded(t)
	for i := range in {
		in[i] = byte(i * 7)
	}
	for _, p := range paths() {
		if !p.ok {
			continue
		}
		for n := 0; n <= 300; n++ {
			src := in[len(in)-n:]
			m := base64.StdEncoding.EncodedLen(n)
			want := base64.StdEncoding.EncodeToString(src)
			p.encode(out[len(out)-m:], src)
			if got := string(out[len(out)-m:]); got != want {
				t.Fatalf("%s: %d bytes: %q, want %q", p.name, n, got, want)
			}
		}
	}
}
