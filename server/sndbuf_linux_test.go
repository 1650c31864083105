package server

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestSendBufferSize(t *testing.T) {
	for _, tc := range []struct{ wmemMax, tcpWmemMax, want int }{
		{212992, 4 << 20, 0},         // Linux's defaults: SO_SNDBUF would shrink the buffer
		{4 << 20, 4 << 20, 4 << 20},  // this VM: 8 MB against autotuning's 4
		{16 << 20, 4 << 20, 4 << 20}, // never more than asked
		{3 << 20, 4 << 20, 3 << 20},  // 6 MB still beats 4
		{4 << 20, 8 << 20, 0},        // autotuning goes as far
	} {
		if got := sendBufferSize(tc.wmemMax, tc.tcpWmemMax); got != tc.want {
			t.Errorf("sendBufferSize(%d, %d) = %d, want %d", tc.wmemMax, tc.tcpWmemMax, got, tc.want)
		}
	}
}

func TestReadSysctlInt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tcp_wmem")
	if err := os.WriteFile(path, []byte("4096\t16384\t4194304\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := readSysctlInt(path, 2); err != nil || n != 4194304 {
		t.Fatalf("field 2: %d, %v", n, err)
	}
	if _, err := readSysctlInt(path, 3); err == nil {
		t.Fatal("field 3 of 3 read")
	}
	if _, err := readSysctlInt(filepath.Join(dir, "none"), 0); err == nil {
		t.Fatal("a missing file read")
	}
}

// TestGrowSendBuffer checks a TCP connection recorded by withConn gets
// the send buffer asked for (the kernel doubles it), and that anything
// else is left alone.
func TestGrowSendBuffer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const size = 150_000 // under every wmem_max
	ctx := withConn(context.Background(), c, size)
	GrowSendBuffer(ctx, largeAnswerBytes-1) // a small answer leaves it
	if n := sndbuf(t, c); n == 2*size {
		t.Fatalf("SO_SNDBUF %d for a small answer", n)
	}
	GrowSendBuffer(ctx, largeAnswerBytes)
	if got := sndbuf(t, c); got != 2*size {
		t.Fatalf("SO_SNDBUF %d, want %d", got, 2*size)
	}
	if withConn(context.Background(), c, 0).Value(connKey{}) != nil {
		t.Fatal("a connection recorded with no size to ask for")
	}
	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	if withConn(context.Background(), p1, size).Value(connKey{}) != nil {
		t.Fatal("a pipe recorded")
	}
	GrowSendBuffer(context.Background(), largeAnswerBytes) // nothing recorded: nothing to do
}

// sndbuf is c's SO_SNDBUF.
func sndbuf(t *testing.T, c net.Conn) int {
	t.Helper()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var gerr error
	if err := raw.Control(func(fd uintptr) { n, gerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF) }); err != nil || gerr != nil {
		t.Fatal(err, gerr)
	}
	return n
}
