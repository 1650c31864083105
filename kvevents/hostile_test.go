package kvevents

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"math"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// checkLeaks fails t if a goroutine it started outlives it (checked
// after every cleanup, the fake peers' included).
func checkLeaks(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// fakePeer is a scripted ZMTP peer on loopback: every connection it
// accepts runs serve, then closes.
type fakePeer struct {
	ep    string
	l     net.Listener
	conns atomic.Int32 // connections accepted
	wg    sync.WaitGroup
	mu    sync.Mutex
	open  []net.Conn
}

func startPeer(t testing.TB, serve func(c net.Conn)) *fakePeer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &fakePeer{ep: "tcp://" + l.Addr().String(), l: l}
	p.wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			p.conns.Add(1)
			p.mu.Lock()
			p.open = append(p.open, c)
			p.mu.Unlock()
			p.wg.Go(func() {
				defer c.Close()
				serve(c)
			})
		}
	})
	t.Cleanup(func() {
		_ = l.Close()
		p.mu.Lock()
		for _, c := range p.open {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

// peerGreeting is a greeting with mechanism mech.
func peerGreeting(mech string) []byte {
	g := greeting
	clear(g[12:32])
	copy(g[12:32], mech)
	return g[:]
}

// frame is one frame's bytes.
func frame(flags byte, body []byte) []byte {
	return append(appendFrameHeader(nil, flags, len(body)), body...)
}

// acceptAs does a well-behaved handshake as a socket of type typ and
// reads the other side's READY.
func acceptAs(c net.Conn, typ string) error {
	if _, err := c.Write(peerGreeting("NULL")); err != nil {
		return err
	}
	var g [greetingLen]byte
	if _, err := io.ReadFull(c, g[:]); err != nil {
		return err
	}
	if _, err := c.Write(frame(flagCommand, readyCommand(typ))); err != nil {
		return err
	}
	_, err := readPeerFrame(c)
	return err
}

// readPeerFrame reads one frame the subscriber sent.
func readPeerFrame(c net.Conn) ([]byte, error) {
	z := zmtpConn{c: c}
	_, size, err := z.readHeader()
	if err != nil {
		return nil, err
	}
	if size > 1<<16 {
		return nil, errors.New("subscriber sent a large frame")
	}
	body := make([]byte, size)
	_, err = io.ReadFull(c, body)
	return body, err
}

func pubMessage(seq int64, payload []byte) []byte {
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], uint64(seq))
	return append(append(frame(flagMore, nil), frame(flagMore, s[:])...), frame(0, payload)...)
}

// hang blocks until the subscriber closes the connection.
func hang(c net.Conn) { _, _ = io.Copy(io.Discard, c) }

// hostileRecorder counts what a subscriber reports.
type hostileRecorder struct {
	recorder
	dropped atomic.Int32
	lostMu  sync.Mutex
	lostLog []int64 // every Lost(n), to check the counter only grows
	log     lockedBuffer
}

// lockedBuffer is the subscriber's log.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newHostileRecorder() *hostileRecorder {
	return &hostileRecorder{recorder: recorder{delivered: make(chan struct{}, 1<<16)}}
}

func (r *hostileRecorder) config(ep, replay string) SubscriberConfig {
	cfg := r.recorder.config(ep, replay)
	cfg.ReconnectDelay, cfg.MaxReconnectDelay = 10*time.Millisecond, 80*time.Millisecond
	cfg.Logger = slog.New(slog.NewTextHandler(&r.log, nil))
	lost := cfg.Lost
	cfg.Lost = func(n int64) {
		r.lostMu.Lock()
		r.lostLog = append(r.lostLog, n)
		r.lostMu.Unlock()
		lost(n)
	}
	cfg.Dropped = func() { r.dropped.Add(1) }
	return cfg
}

// runUntil runs a subscriber until cond holds (or fails the test after
// 10 s), and returns the bytes the process allocated meanwhile.
func runUntil(t *testing.T, s *Subscriber, cond func() bool) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatal("condition not reached in 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	runtime.ReadMemStats(&after)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v", err)
	}
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostilePublisher: a publisher that breaks ZMTP or vLLM's message
// shapes in any of these ways is dropped, counted and dialled again; no
// goroutine panics, memory follows the bytes actually sent, and nothing
// is left running after.
func TestHostilePublisher(t *testing.T) {
	checkLeaks(t)
	good, _ := Encode(withRank(batch(1)))
	handshaken := func(then func(c net.Conn)) func(net.Conn) {
		return func(c net.Conn) {
			if acceptAs(c, "PUB") == nil {
				then(c)
			}
		}
	}
	write := func(b ...[]byte) func(net.Conn) {
		return handshaken(func(c net.Conn) {
			_, _ = c.Write(bytes.Join(b, nil))
			hang(c)
		})
	}
	long := func(flags byte, size uint64) []byte {
		return binary.BigEndian.AppendUint64([]byte{flags | flagLong}, size)
	}
	for _, c := range []struct {
		name  string
		serve func(net.Conn)
	}{
		{"READY's last property cut short", func(c net.Conn) {
			_, _ = c.Write(peerGreeting("NULL"))
			body := append(readyCommand("PUB"), 4, 'X', '-', 'a', 'b', 0, 0, 0, 9, 'v')
			_, _ = c.Write(frame(flagCommand, body))
			hang(c)
		}},
		{"READY property name past the body", func(c net.Conn) {
			_, _ = c.Write(peerGreeting("NULL"))
			_, _ = c.Write(frame(flagCommand, append([]byte{5}, "READY\xff"...)))
			hang(c)
		}},
		{"READY cut inside the value length", func(c net.Conn) {
			_, _ = c.Write(peerGreeting("NULL"))
			_, _ = c.Write(frame(flagCommand, append([]byte{5}, "READY\x0bSocket-Type\x00\x00"...)))
			hang(c)
		}},
		{"greeting cut short", func(c net.Conn) { _, _ = c.Write(peerGreeting("NULL")[:11]) }},
		{"not a greeting", func(c net.Conn) { _, _ = c.Write([]byte(strings.Repeat("GET / HTTP/1.1\r\n", 8))); hang(c) }},
		{"ZMTP 2", func(c net.Conn) {
			g := peerGreeting("NULL")
			g[10] = 1
			_, _ = c.Write(g)
			hang(c)
		}},
		{"CURVE mechanism", func(c net.Conn) { _, _ = c.Write(peerGreeting("CURVE")); hang(c) }},
		{"ERROR instead of READY", func(c net.Conn) {
			_, _ = c.Write(peerGreeting("NULL"))
			_, _ = c.Write(frame(flagCommand, append([]byte{5}, "ERROR\x04nope"...)))
			hang(c)
		}},
		{"a ROUTER where the PUB should be", func(c net.Conn) {
			if acceptAs(c, "ROUTER") == nil {
				hang(c)
			}
		}},
		{"a 2^50-byte frame", write(long(0, 1<<50))},
		{"a 2^63-byte frame", write(long(0, 1<<63))},
		{"a frame one byte past the payload bound", write(frame(flagMore, nil), frame(flagMore, make([]byte, 8)), long(0, maxMessage+1))},
		{"a 2^50-byte command", write(long(flagCommand, 1<<50))},
		{"a 2^50-byte READY", func(c net.Conn) {
			_, _ = c.Write(peerGreeting("NULL"))
			_, _ = c.Write(long(flagCommand, 1<<50))
			hang(c)
		}},
		{"endless MORE frames", handshaken(func(c net.Conn) {
			f := frame(flagMore, []byte("x"))
			for {
				if _, err := c.Write(f); err != nil {
					return
				}
			}
		})},
		{"a command with MORE", write(frame(flagCommand|flagMore, append([]byte{4}, "PING\x00\x00"...)))},
		{"a command inside a message", write(frame(flagMore, nil), frame(flagCommand, append([]byte{4}, "PING\x00\x00"...)))},
		{"reserved flag bits", write([]byte{0x80, 0})},
		{"two frames", write(frame(flagMore, nil), frame(0, good))},
		{"sequence frame of 4 bytes", write(frame(flagMore, nil), frame(flagMore, []byte{0, 0, 0, 1}), frame(0, good))},
		{"sequence 2^63-1", write(pubMessage(math.MaxInt64, good))},
		{"negative sequence", write(pubMessage(-5, good))},
		{"oversized PING", write(frame(flagCommand, append([]byte{4}, "PING\x00\x00"+strings.Repeat("c", 40)...)))},
		{"ERROR mid-stream", write(pubMessage(0, good), frame(flagCommand, append([]byte{5}, "ERROR\x03bye"...)))},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := startPeer(t, c.serve)
			rec := newHostileRecorder()
			sub, err := NewSubscriber(rec.config(p.ep, ""))
			if err != nil {
				t.Fatal(err)
			}
			alloc := runUntil(t, sub, func() bool { return rec.dropped.Load() >= 2 })
			if p.conns.Load() < 2 {
				t.Errorf("%d connections, want it dialled again", p.conns.Load())
			}
			if alloc > 16<<20 {
				t.Errorf("%d MiB allocated", alloc>>20)
			}
			t.Logf("%d dials, %d KiB allocated", p.conns.Load(), alloc>>10)
			rec.checkLost(t)
			if log := rec.log.String(); !strings.Contains(log, "publisher dropped") || !strings.Contains(log, p.ep) {
				t.Errorf("the drop is not logged with the endpoint:\n%s", log)
			}
		})
	}
}

// checkLost: every loss reported is positive and bounded, so the counter
// they add to only grows and cannot overflow.
func (r *hostileRecorder) checkLost(t *testing.T) {
	t.Helper()
	r.lostMu.Lock()
	defer r.lostMu.Unlock()
	for _, n := range r.lostLog {
		if n < 1 || n > MaxSequenceJump {
			t.Errorf("Lost(%d)", n)
		}
	}
}

// TestHostileSequenceNumbers: sequence numbers far apart are a restart,
// never a loss of 2^63 batches; the counter only grows.
func TestHostileSequenceNumbers(t *testing.T) {
	checkLeaks(t)
	good, _ := Encode(withRank(batch(1)))
	seqs := []int64{5, 7, math.MaxInt64 - 1, 6, 6 + MaxSequenceJump, 8 + 2*MaxSequenceJump, 0}
	p := startPeer(t, func(c net.Conn) {
		if acceptAs(c, "PUB") != nil {
			return
		}
		for _, s := range seqs {
			_, _ = c.Write(pubMessage(s, good))
		}
		hang(c)
	})
	rec := newHostileRecorder()
	sub, _ := NewSubscriber(rec.config(p.ep, ""))
	runUntil(t, sub, func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return len(rec.seqs) == len(seqs) })
	rec.checkLost(t)
	// 5 -> 7 loses one; 2^63-2 jumps (a restart), 6 goes back (a
	// restart); 6+2^20 is within the window (2^20-1 lost); the next jump
	// is one past it (a restart), and 0 goes back (a restart).
	if rec.restarts != 4 || rec.lost != 1+MaxSequenceJump-1 || rec.dropped.Load() != 0 {
		t.Errorf("restarts %d lost %d dropped %d", rec.restarts, rec.lost, rec.dropped.Load())
	}
}

// TestHostilePayloadOverTheWire: a 20 MB batch nested 20 million arrays
// deep arrives as a well-formed message: the batch is lost, the
// connection stays, the next batch is applied.
func TestHostilePayloadOverTheWire(t *testing.T) {
	checkLeaks(t)
	good, _ := Encode(withRank(batch(1)))
	deep := eventWith("extra_keys", nested(20_000_000))
	p := startPeer(t, func(c net.Conn) {
		if acceptAs(c, "PUB") != nil {
			return
		}
		_, _ = c.Write(pubMessage(0, deep))
		_, _ = c.Write(pubMessage(1, good))
		hang(c)
	})
	rec := newHostileRecorder()
	sub, _ := NewSubscriber(rec.config(p.ep, ""))
	runUntil(t, sub, func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return len(rec.seqs) == 1 })
	if rec.seqs[0] != 1 || rec.lost != 1 || rec.dropped.Load() != 0 || p.conns.Load() != 1 {
		t.Errorf("applied %v lost %d dropped %d connections %d", rec.seqs, rec.lost, rec.dropped.Load(), p.conns.Load())
	}
}

// TestTricklingPublisher: a frame announced at 60 MiB whose bytes never
// come costs what arrived, not what was announced, and the connection is
// dropped once the message is overdue.
func TestTricklingPublisher(t *testing.T) {
	checkLeaks(t)
	p := startPeer(t, func(c net.Conn) {
		if acceptAs(c, "PUB") != nil {
			return
		}
		_, _ = c.Write(append(frame(flagMore, nil), frame(flagMore, make([]byte, 8))...))
		_, _ = c.Write(binary.BigEndian.AppendUint64([]byte{flagLong}, 60<<20))
		_, _ = c.Write(make([]byte, 1000))
		hang(c)
	})
	rec := newHostileRecorder()
	sub, _ := NewSubscriber(rec.config(p.ep, ""))
	sub.t.message = 100 * time.Millisecond
	alloc := runUntil(t, sub, func() bool { return rec.dropped.Load() >= 2 })
	if alloc > 4<<20 {
		t.Errorf("%d MiB allocated for 1000 bytes received", alloc>>20)
	}
	t.Logf("%d KiB allocated", alloc>>10)
}

// TestPingIsAnswered: a ZMTP 3.1 PING between messages gets its PONG
// with the context, and the stream goes on.
func TestPingIsAnswered(t *testing.T) {
	checkLeaks(t)
	good, _ := Encode(withRank(batch(1)))
	pong := make(chan []byte, 1)
	p := startPeer(t, func(c net.Conn) {
		if acceptAs(c, "PUB") != nil {
			return
		}
		if _, err := readPeerFrame(c); err != nil { // the subscription
			return
		}
		_, _ = c.Write(frame(flagCommand, append([]byte{4}, "PING\x00\x10ctx"...)))
		b, _ := readPeerFrame(c)
		pong <- b
		_, _ = c.Write(pubMessage(0, good))
		hang(c)
	})
	rec := newHostileRecorder()
	sub, _ := NewSubscriber(rec.config(p.ep, ""))
	runUntil(t, sub, func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return len(rec.seqs) == 1 })
	if b := <-pong; string(b) != "\x04PONGctx" {
		t.Errorf("PONG %q", b)
	}
}

// TestHostileReplayPeer: a replay socket that never answers, or answers
// out of bounds, costs the catch-up only: live batches still arrive.
func TestHostileReplayPeer(t *testing.T) {
	checkLeaks(t)
	good, _ := Encode(withRank(batch(1)))
	long := binary.BigEndian.AppendUint64([]byte{flagLong}, 1<<50)
	for _, c := range []struct {
		name    string
		serve   func(net.Conn)
		dropped bool
	}{
		{"never answers", func(c net.Conn) {
			if acceptAs(c, "ROUTER") == nil {
				hang(c)
			}
		}, false},
		{"never answers the greeting", hang, true},
		{"a 2^50-byte frame", func(c net.Conn) {
			if acceptAs(c, "ROUTER") == nil {
				_, _ = c.Write(long)
				hang(c)
			}
		}, true},
		{"sequence going back", func(c net.Conn) {
			if acceptAs(c, "ROUTER") == nil {
				_, _ = c.Write(pubMessage(3, good))
				_, _ = c.Write(pubMessage(2, good))
				hang(c)
			}
		}, true},
		{"endless batches", func(c net.Conn) {
			if acceptAs(c, "ROUTER") != nil {
				return
			}
			for s := int64(0); ; s++ {
				if _, err := c.Write(pubMessage(s, good)); err != nil {
					return
				}
			}
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			replay := startPeer(t, c.serve)
			pub := startPeer(t, func(c net.Conn) {
				if acceptAs(c, "PUB") != nil {
					return
				}
				for s := int64(100_000_000); ; s++ {
					if _, err := c.Write(pubMessage(s, good)); err != nil {
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			})
			rec := newHostileRecorder()
			sub, _ := NewSubscriber(rec.config(pub.ep, replay.ep))
			sub.t.replay = 200 * time.Millisecond
			sub.t.handshake = 100 * time.Millisecond
			runUntil(t, sub, func() bool {
				rec.mu.Lock()
				defer rec.mu.Unlock()
				return len(rec.seqs) > 0 && rec.seqs[len(rec.seqs)-1] >= 100_000_000
			})
			if got := rec.dropped.Load() > 0; got != c.dropped {
				t.Errorf("dropped %d", rec.dropped.Load())
			}
			rec.checkLost(t)
		})
	}
}

// TestBackoff: a publisher that keeps breaking the protocol is dialled
// less and less often.
func TestBackoff(t *testing.T) {
	checkLeaks(t)
	p := startPeer(t, func(c net.Conn) { _, _ = c.Write(peerGreeting("CURVE")) })
	rec := newHostileRecorder()
	cfg := rec.config(p.ep, "")
	cfg.ReconnectDelay, cfg.MaxReconnectDelay = 5*time.Millisecond, 160*time.Millisecond
	sub, _ := NewSubscriber(cfg)
	start := time.Now()
	runUntil(t, sub, func() bool { return time.Since(start) > 600*time.Millisecond })
	// 5+10+20+40+80+160+160... ms: about 7 dials in 600 ms, against 120
	// at a fixed 5 ms.
	if n := p.conns.Load(); n > 12 || n < 3 {
		t.Errorf("%d dials in 600 ms", n)
	}
}
