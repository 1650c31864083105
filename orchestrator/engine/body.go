package engine

import (
	"bytes"
	"io"
	"sync"
	"sync/atomic"

	"github.com/vrender/vrender/protocol"
)

// requestBody is a generate request's JSON in a buffer the client reuses:
// a request with pictures is megabytes (their pixel values' base64), and a
// fresh buffer for every turn cost vrender page faults and the zeroing of
// all of it: about a tenth of its CPU per request with 448x448 pictures
// (perf over scripts/bench-prefix.sh). The
// buffer returns to the pool once the sender and every attempt are done
// with it: the transport closes an attempt's body when it has written it
// or given up, and a body never closed (a custom RoundTripper) is left to
// the garbage collector.
type requestBody struct {
	b    []byte
	refs atomic.Int32
	pool *sync.Pool
}

// encode writes req under requestID (stream and stream_options as the
// call needs them) into a pooled buffer. The caller releases it once the
// request has been sent.
func (c *Client) encode(req *protocol.GenerateRequest, requestID string, stream bool) (*requestBody, error) {
	var dst []byte
	if p, ok := c.bodies.Get().(*[]byte); ok {
		dst = (*p)[:0]
	}
	r := withRequestID(req, requestID, stream)
	b, err := r.AppendJSON(dst)
	rb := &requestBody{b: b, pool: &c.bodies}
	rb.refs.Store(1)
	if err != nil {
		rb.release()
		return nil, err
	}
	return rb, nil
}

// reader is one attempt's body, holding the buffer until it is closed.
func (rb *requestBody) reader() io.ReadCloser {
	rb.refs.Add(1)
	return &attemptBody{Reader: bytes.NewReader(rb.b), b: rb.b, rb: rb}
}

// release drops one hold; the last returns the buffer to the pool.
func (rb *requestBody) release() {
	if rb.refs.Add(-1) == 0 {
		b := rb.b[:0]
		rb.b = nil
		rb.pool.Put(&b)
	}
}

type attemptBody struct {
	*bytes.Reader
	b    []byte // what Reader reads
	rb   *requestBody
	once sync.Once
}

// unread is what is left of the body to read, at most n bytes.
func (a *attemptBody) unread(n int64) []byte {
	rest := a.b[len(a.b)-a.Len():]
	if int64(len(rest)) > n {
		rest = rest[:n]
	}
	return rest
}

func (a *attemptBody) Close() error {
	a.once.Do(a.rb.release)
	return nil
}
