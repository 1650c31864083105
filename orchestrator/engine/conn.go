package engine

import (
	"context"
	"io"
	"net"
)

// bodyConn is a connection of the client's own transport that writes a
// generate body with one Write. net/http copies a request body of known
// length into the connection through an io.LimitedReader, which hides the
// body's WriteTo, so the copy went in 32 KB writes: a request carrying a
// 448x448 picture is 3.3 MB, a hundred system calls. One Write hands the
// kernel as much as the socket takes at a time.
type bodyConn struct{ net.Conn }

// dialBodyConn wraps dial's connections in bodyConn.
func dialBodyConn(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &bodyConn{c}, nil
	}
}

// ReadFrom is what the transport's write of a request body comes to. A
// generate body (an attemptBody under the transport's length limit) is
// written whole; anything else, and anything left, is copied as before.
func (c *bodyConn) ReadFrom(r io.Reader) (int64, error) {
	var n int64
	if lr, ok := r.(*io.LimitedReader); ok {
		if body, ok := lr.R.(*attemptBody); ok {
			m, err := c.Conn.Write(body.unread(lr.N))
			n = int64(m)
			lr.N -= n
			if _, serr := body.Seek(n, io.SeekCurrent); err == nil {
				err = serr
			}
			if err != nil {
				return n, err
			}
		}
	}
	m, err := io.Copy(struct{ io.Writer }{c.Conn}, r) // the struct hides ReadFrom
	return n + m, err
}
