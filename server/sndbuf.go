package server

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
)

// Large answers (an image's pixel values: 15 MB of base64 for a 1280x720
// picture) are written through a send buffer of largeAnswerSndbuf bytes
// asked for with SO_SNDBUF (the kernel doubles it): with Linux's
// autotuned 4 MB at most, the writer fills the buffer, parks and is woken
// again several times per answer. One 1280x720 JPEG, full path, cache off,
// 2-core VM, mean of interleaved runs of 50 requests: 7.24 against 7.67
// ms of server CPU per request (lower in 6 of 8 runs), 7.44 against 7.92
// (4 of 6), 8.21 against 8.41 (5 of 8); with the cache filling 11.09
// against 11.26 (inside the noise).
// The buffer is a bound, not an allocation, but a slow client may now
// have twice as much of its answer queued in the kernel.
const (
	largeAnswerBytes  = 4 << 20
	largeAnswerSndbuf = 4 << 20
)

// sendBufferSize is the SO_SNDBUF to ask for before a large answer, 0 to
// leave the socket's autotuning alone: setting SO_SNDBUF ends autotuning,
// and the kernel caps it at net.core.wmem_max (212992 by default), which
// would leave a smaller buffer than autotuning's tcp_wmem maximum.
func sendBufferSize(wmemMax, tcpWmemMax int) int {
	size := min(largeAnswerSndbuf, wmemMax)
	if 2*size <= tcpWmemMax {
		return 0
	}
	return size
}

// readSendBufferSize is sendBufferSize for this host's sysctls (0 where
// they cannot be read).
func readSendBufferSize() int {
	wmemMax, err := readSysctlInt("/proc/sys/net/core/wmem_max", 0)
	if err != nil {
		return 0
	}
	tcpWmemMax, err := readSysctlInt("/proc/sys/net/ipv4/tcp_wmem", 2)
	if err != nil {
		return 0
	}
	return sendBufferSize(wmemMax, tcpWmemMax)
}

// readSysctlInt reads field i of a sysctl file of integers.
func readSysctlInt(path string, i int) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(data))
	if i >= len(f) {
		return 0, strconv.ErrSyntax
	}
	return strconv.Atoi(f[i])
}

// connKey keys a request context's connection (Serve's ConnContext).
type connKey struct{}

// connSendBuffer is a connection and the send buffer a large answer on it
// asks for.
type connSendBuffer struct {
	conn   *net.TCPConn
	sndbuf int
}

// withConn records c in ctx for growSendBuffer when it is TCP and there is
// a buffer size to ask for.
func withConn(ctx context.Context, c net.Conn, sndbuf int) context.Context {
	tc, ok := c.(*net.TCPConn)
	if !ok || sndbuf <= 0 {
		return ctx
	}
	return context.WithValue(ctx, connKey{}, connSendBuffer{tc, sndbuf})
}

// LargeAnswerConnContext is the http.Server ConnContext that lets an
// answer grow its connection's send buffer (GrowSendBuffer). Serve uses
// it, and so does the send floor of `vrender bench images`, which writes
// as Serve does.
func LargeAnswerConnContext() func(context.Context, net.Conn) context.Context {
	sndbuf := readSendBufferSize()
	return func(ctx context.Context, c net.Conn) context.Context { return withConn(ctx, c, sndbuf) }
}

// GrowSendBuffer asks for the large-answer send buffer on ctx's
// connection before an answer of n bytes is written, when n is large and
// LargeAnswerConnContext recorded the connection.
func GrowSendBuffer(ctx context.Context, n int) {
	if n < largeAnswerBytes {
		return
	}
	if c, ok := ctx.Value(connKey{}).(connSendBuffer); ok {
		_ = c.conn.SetWriteBuffer(c.sndbuf)
	}
}
