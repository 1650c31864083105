package kvevents

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// zmq4PubWriter is the one goroutine go-zeromq/zmq4 v0.17.0 leaves behind
// per closed PUB socket (pubSocket.Close never closes its pubMWriter; see
// docs/routing.md). Everything else must be gone.
var zmq4PubWriter = goleak.IgnoreAnyFunction("github.com/go-zeromq/zmq4.(*pubMWriter).run")

func freeEndpoint(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "tcp://" + l.Addr().String()
}

// recorder is a subscriber's view: batches by sequence, restarts, losses.
type recorder struct {
	mu        sync.Mutex
	seqs      []int64
	ts        []float64
	restarts  int
	lost      int64
	delivered chan struct{}
}

func newRecorder() *recorder { return &recorder{delivered: make(chan struct{}, 1024)} }

func (r *recorder) config(ep, replay string) SubscriberConfig {
	return SubscriberConfig{Endpoint: ep, ReplayEndpoint: replay, ReconnectDelay: 20 * time.Millisecond,
		Apply: func(seq int64, b Batch) {
			r.mu.Lock()
			r.seqs, r.ts = append(r.seqs, seq), append(r.ts, b.TS)
			r.mu.Unlock()
			// delivered only wakes waitFor, which counts seqs itself: a full
			// channel already holds wake-ups, and blocking here would stall the
			// subscriber inside Apply, where it cannot see its context end (a
			// peer that sends batches without end fills any buffer).
			select {
			case r.delivered <- struct{}{}:
			default:
			}
		},
		Restarted: func() { r.mu.Lock(); r.restarts++; r.mu.Unlock() },
		Lost:      func(n int64) { r.mu.Lock(); r.lost += n; r.mu.Unlock() }}
}

func (r *recorder) waitFor(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		got := len(r.seqs)
		r.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-r.delivered:
		case <-deadline:
			t.Fatalf("%d batches delivered, want %d", got, n)
		}
	}
}

func batch(ts float64) Batch {
	return Batch{TS: ts, Events: []Event{{Tag: TagBlockStored, BlockHashes: []Hash{IntHash(uint64(ts))},
		TokenIDs: []int{1, 2, 3, 4}, BlockSize: 4}}}
}

// TestPublishSubscribeReplayAndRestart: a subscriber joining late gets
// what it missed from the replay socket, in order; an engine that restarts
// (a new publisher on the same address, sequence from 0) is noticed.
func TestPublishSubscribeReplayAndRestart(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), zmq4PubWriter)
	ep, rep := freeEndpoint(t), freeEndpoint(t)
	pub, err := NewPublisher(PublisherConfig{Endpoint: ep, ReplayEndpoint: rep, BufferSteps: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := pub.Publish(batch(float64(i))); err != nil {
			t.Fatal(err)
		}
	}
	rec := newRecorder()
	sub, err := NewSubscriber(rec.config(ep, rep))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sub.Run(ctx) }()
	// PUB drops what it sends before the subscription lands: keep
	// publishing until one arrives; the rest comes by replay.
	for i := 5; ; i++ {
		if err := pub.Publish(batch(float64(i))); err != nil {
			t.Fatal(err)
		}
		rec.mu.Lock()
		n := len(rec.seqs)
		rec.mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // the sender has the rest
	pub.mu.Lock()
	published := pub.seq
	pub.mu.Unlock()
	rec.waitFor(t, int(published))
	rec.mu.Lock()
	for i, s := range rec.seqs {
		if s != int64(i) || rec.ts[i] != float64(i) {
			t.Fatalf("delivered %v, want 0..%d in order", rec.seqs, published-1)
		}
	}
	rec.mu.Unlock()

	// The engine restarts: its sequence starts again at 0.
	if err := pub.Close(); err != nil {
		t.Fatal(err)
	}
	pub2, err := NewPublisher(PublisherConfig{Endpoint: ep, ReplayEndpoint: rep})
	if err != nil {
		t.Fatal(err)
	}
	defer pub2.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_ = pub2.Publish(batch(100))
		rec.mu.Lock()
		restarts := rec.restarts
		rec.mu.Unlock()
		if restarts == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("restart not noticed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	rec.mu.Lock()
	if rec.lost != 0 {
		t.Errorf("lost %d batches, want 0", rec.lost)
	}
	rec.mu.Unlock()
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("Run returned %v", err)
	}
}

// TestGapIsReplayedOrCountedLost drives receive directly: a jump in the
// sequence is filled from the replay socket; without one, it is lost.
func TestGapIsReplayedOrCountedLost(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), zmq4PubWriter)
	ep, rep := freeEndpoint(t), freeEndpoint(t)
	pub, err := NewPublisher(PublisherConfig{Endpoint: ep, ReplayEndpoint: rep, BufferSteps: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	payloads := make([][]byte, 10)
	for i := range payloads {
		if err := pub.Publish(batch(float64(i))); err != nil {
			t.Fatal(err)
		}
		payloads[i], _ = Encode(withRank(batch(float64(i))))
	}
	waitSent(t, pub, 10)
	for _, c := range []struct {
		name          string
		replay        string
		seqs          []int64 // as published messages arrive
		want          []int64 // applied
		lost, restart int64
	}{
		{"gap replayed", rep, []int64{6, 9}, []int64{6, 7, 8, 9}, 0, 0},
		{"gap older than the buffer", rep, []int64{0, 9}, []int64{0, 6, 7, 8, 9}, 5, 0},
		{"no replay socket", "", []int64{6, 9}, []int64{6, 9}, 2, 0},
		{"restart", rep, []int64{8, 9, 7}, []int64{8, 9, 6, 7}, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := newRecorder()
			sub, _ := NewSubscriber(rec.config(ep, c.replay))
			sub.next, sub.dupFloor = c.seqs[0], c.seqs[0] // joined at the first
			for _, s := range c.seqs {
				sub.receive(context.Background(), s, payloads[s])
			}
			if fmt.Sprint(rec.seqs) != fmt.Sprint(c.want) || rec.lost != c.lost || int64(rec.restarts) != c.restart {
				t.Errorf("applied %v lost %d restarts %d; want %v, %d, %d", rec.seqs, rec.lost, rec.restarts, c.want, c.lost, c.restart)
			}
		})
	}
}

func withRank(b Batch) Batch {
	var r int64
	b.DataParallelRank = &r
	return b
}

// TestRestartPastOurSequence: the engine restarts and publishes more
// batches than the subscriber had seen before it reconnects; the replayed
// last batch differs, so the restart is noticed all the same.
func TestRestartPastOurSequence(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), zmq4PubWriter)
	ep, rep := freeEndpoint(t), freeEndpoint(t)
	pub, err := NewPublisher(PublisherConfig{Endpoint: ep, ReplayEndpoint: rep})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		_ = pub.Publish(batch(float64(i)))
	}
	rec := newRecorder()
	sub, _ := NewSubscriber(rec.config(ep, rep))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sub.Run(ctx) }()
	rec.waitFor(t, 3) // by the catch-up replay
	_ = pub.Close()
	pub2, err := NewPublisher(PublisherConfig{Endpoint: ep, ReplayEndpoint: rep})
	if err != nil {
		t.Fatal(err)
	}
	defer pub2.Close()
	for i := range 6 {
		_ = pub2.Publish(batch(float64(100 + i)))
	}
	rec.waitFor(t, 3+6)
	cancel()
	<-done
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.restarts != 1 || fmt.Sprint(rec.ts[3:]) != "[100 101 102 103 104 105]" || rec.lost != 0 {
		t.Errorf("restarts %d, after it %v, lost %d", rec.restarts, rec.ts[3:], rec.lost)
	}
}

// waitSent waits until the publisher's goroutine has sent n batches.
func waitSent(t *testing.T, p *Publisher, n int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		seq := p.seq
		p.mu.Unlock()
		if seq >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d batches sent, want %d", seq, n)
		}
		time.Sleep(time.Millisecond)
	}
}
