package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// countingConn records what is written to it, and how many Writes.
type countingConn struct {
	net.Conn // nil: only Write is called
	buf      bytes.Buffer
	writes   int
	limit    int // > 0: a Write fails after this many bytes in all
}

var errWriteFailed = errors.New("write failed")

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes++
	if c.limit > 0 && c.buf.Len()+len(p) > c.limit {
		n := c.limit - c.buf.Len()
		c.buf.Write(p[:n])
		return n, errWriteFailed
	}
	return c.buf.Write(p)
}

func TestBodyConnReadFrom(t *testing.T) {
	body := []byte(strings.Repeat("0123456789", 10_000))
	tests := []struct {
		name       string
		preRead    int   // bytes read from the body before
		limit      int64 // the transport's length limit
		other      bool  // a reader that is no generate body
		writeLimit int
		wantWrites int
		wantErr    error
	}{
		{name: "whole body", limit: int64(len(body)), wantWrites: 1},
		{name: "limit under the length", limit: 5_000, wantWrites: 1},
		{name: "partly read", preRead: 4096, limit: int64(len(body) - 4096), wantWrites: 1},
		{name: "other reader copied", limit: int64(len(body)), other: true, wantWrites: 4},
		{name: "write fails", limit: int64(len(body)), writeLimit: 777, wantWrites: 1, wantErr: errWriteFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rb := &requestBody{b: body, pool: &sync.Pool{}}
			rb.refs.Store(1)
			var src io.Reader = rb.reader()
			if tc.other {
				src = bytes.NewBuffer(body) // its WriteTo hidden by the limit as well
			}
			if _, err := io.ReadFull(src, make([]byte, tc.preRead)); err != nil {
				t.Fatal(err)
			}
			lr := &io.LimitedReader{R: src, N: tc.limit}
			cc := &countingConn{limit: tc.writeLimit}
			n, err := (&bodyConn{cc}).ReadFrom(lr)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			want := body[tc.preRead : tc.preRead+int(tc.limit)]
			if tc.wantErr != nil {
				want = want[:tc.writeLimit]
			}
			if n != int64(len(want)) || !bytes.Equal(cc.buf.Bytes(), want) || cc.writes != tc.wantWrites {
				t.Fatalf("wrote %d bytes (%d reported) in %d writes; want %d in %d", cc.buf.Len(), n, cc.writes, len(want), tc.wantWrites)
			}
			if lr.N != tc.limit-n {
				t.Fatalf("limit left %d, want %d", lr.N, tc.limit-n)
			}
			rest, _ := io.ReadAll(src) // the reader moved past what was written
			if !bytes.Equal(rest, body[tc.preRead+int(n):]) {
				t.Fatalf("%d bytes left to read, want %d", len(rest), len(body)-tc.preRead-int(n))
			}
		})
	}
}

// TestTransportWritesBodyWhole: through the client's own transport, a
// picture-sized generate body reaches the connection in one Write after
// the headers (net/http's copy went through bodyConn.ReadFrom), and
// arrives intact.
func TestTransportWritesBodyWhole(t *testing.T) {
	var got []byte
	es := newEngineServer(t, func(w http.ResponseWriter, r *http.Request) { writeSSE(w, tokenEvent(5), "[DONE]") })
	inner := es.Config.Handler
	es.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(got))
		inner.ServeHTTP(w, r)
	})
	c := newTestClient(t, es.URL, Options{})
	var writes atomic.Int64
	dial := (&net.Dialer{}).DialContext
	c.ownTransport.DialContext = dialBodyConn(func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		return &writeCounter{Conn: conn, writes: &writes}, err
	})
	req := testRequest()
	req.TokenIDs = make([]int, 1<<19) // 1 MB of "0,"
	want, err := withRequestID(req, "big", true).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Stream(context.Background(), req, "big")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := recvAll(t, s); err != io.EOF {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the engine got %d bytes unlike the %d MarshalJSON writes", len(got), len(want))
	}
	if n := writes.Load(); n > 2 {
		t.Fatalf("%d writes for a %d-byte request, want the headers' and the body's", n, len(want))
	}
}

type writeCounter struct {
	net.Conn
	writes *atomic.Int64
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes.Add(1)
	return w.Conn.Write(p)
}
