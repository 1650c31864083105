package kvevents

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/zeebo/xxh3"
)

// endSeq is the replay socket's end-of-sequence marker (vLLM's END_SEQ,
// -1 as 8 big-endian bytes).
var endSeq = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// DefaultBufferSteps is vLLM's buffer_steps: batches kept for replay.
const DefaultBufferSteps = 10_000

// DefaultMaxQueueSize is vLLM's max_queue_size.
const DefaultMaxQueueSize = 100_000

// shutdownTimeout is how long Close waits for queued batches to go out
// (vLLM's SHUTDOWN_TIMEOUT).
const shutdownTimeout = time.Second

// listenAddr turns vLLM's bind spelling ("tcp://*:5557") into one the Go
// transport accepts.
func listenAddr(ep string) string { return strings.Replace(ep, "://*:", "://0.0.0.0:", 1) }

// PublisherConfig configures a Publisher (vLLM's KVEventsConfig).
type PublisherConfig struct {
	Endpoint       string // PUB address to bind, e.g. tcp://*:5557
	ReplayEndpoint string // ROUTER address to bind for replays; "" for none
	BufferSteps    int    // batches kept for replay (0: DefaultBufferSteps)
	// MaxQueueSize bounds the batches waiting to be sent (0:
	// DefaultMaxQueueSize); Publish blocks while it is full.
	MaxQueueSize int
	Topic        string
	Logger       *slog.Logger
}

// Publisher is vLLM's ZmqEventPublisher: Publish queues a batch and a
// goroutine sends it on the PUB socket as (topic, sequence number,
// payload), as vLLM's publisher thread does, so an engine step never waits
// for the network; each batch is kept in a ring for the replay socket,
// which answers an 8-byte start sequence number with every buffered
// (sequence, payload) from it and then (-1, "").
type Publisher struct {
	pub, replay zmq4.Socket
	topic       []byte
	log         *slog.Logger
	cancel      context.CancelFunc
	done        chan struct{} // replay server gone
	queue       chan Batch
	sent        chan struct{} // sender gone

	qmu    sync.RWMutex // guards closed against Publish's send on queue
	closed bool

	mu     sync.Mutex
	seq    int64
	buffer []bufferedBatch // ring of the last cap(buffer) batches
	next   int             // ring position of the next batch
	max    int
}

type bufferedBatch struct {
	seq     int64
	payload []byte
}

// NewPublisher binds the sockets.
func NewPublisher(cfg PublisherConfig) (*Publisher, error) {
	if cfg.BufferSteps <= 0 {
		cfg.BufferSteps = DefaultBufferSteps
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxQueueSize <= 0 {
		cfg.MaxQueueSize = DefaultMaxQueueSize
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Publisher{topic: []byte(cfg.Topic), log: cfg.Logger, cancel: cancel, done: make(chan struct{}), max: cfg.BufferSteps,
		queue: make(chan Batch, cfg.MaxQueueSize), sent: make(chan struct{})}
	p.pub = zmq4.NewPub(ctx)
	if err := p.pub.Listen(listenAddr(cfg.Endpoint)); err != nil {
		cancel()
		_ = p.pub.Close()
		return nil, fmt.Errorf("kvevents: bind %s: %w", cfg.Endpoint, err)
	}
	if cfg.ReplayEndpoint == "" {
		close(p.done)
		go p.send()
		return p, nil
	}
	p.replay = zmq4.NewRouter(ctx, zmq4.WithTimeout(5*time.Second))
	if err := p.replay.Listen(listenAddr(cfg.ReplayEndpoint)); err != nil {
		cancel()
		_ = p.pub.Close()
		_ = p.replay.Close()
		return nil, fmt.Errorf("kvevents: bind replay %s: %w", cfg.ReplayEndpoint, err)
	}
	go p.serveReplays(ctx)
	go p.send()
	return p, nil
}

// errClosed is Publish after Close.
var errClosed = errors.New("kvevents: publisher is closed")

// Publish queues b for sending with the next sequence number.
func (p *Publisher) Publish(b Batch) error {
	if b.DataParallelRank == nil {
		var rank int64 // the publisher's rank, as vLLM's publish() sets it
		b.DataParallelRank = &rank
	}
	p.qmu.RLock()
	defer p.qmu.RUnlock()
	if p.closed {
		return errClosed
	}
	p.queue <- b
	return nil
}

// send is the publisher goroutine: it encodes and sends queued batches in
// order until the queue is closed.
func (p *Publisher) send() {
	defer close(p.sent)
	for b := range p.queue {
		if err := p.sendOne(b); err != nil {
			p.log.Warn("kvevents: batch not published", "err", err)
		}
	}
}

func (p *Publisher) sendOne(b Batch) error {
	payload, err := Encode(b)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	seq := p.seq
	p.seq++
	var seqb [8]byte
	binary.BigEndian.PutUint64(seqb[:], uint64(seq))
	if err := p.pub.SendMulti(zmq4.NewMsgFrom(p.topic, seqb[:], payload)); err != nil {
		return fmt.Errorf("kvevents: publish: %w", err)
	}
	if len(p.buffer) < p.max {
		p.buffer = append(p.buffer, bufferedBatch{seq, payload})
	} else {
		p.buffer[p.next] = bufferedBatch{seq, payload}
	}
	p.next = (p.next + 1) % p.max
	return nil
}

// from returns the buffered batches with sequence numbers >= start, in
// order.
func (p *Publisher) from(start int64) []bufferedBatch {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []bufferedBatch
	n := len(p.buffer)
	for i := range n {
		b := p.buffer[(p.next+i)%n]
		if len(p.buffer) < p.max {
			b = p.buffer[i]
		}
		if b.seq >= start {
			out = append(out, b)
		}
	}
	return out
}

func (p *Publisher) serveReplays(ctx context.Context) {
	defer close(p.done)
	for {
		msg, err := p.replay.Recv()
		if err != nil {
			if ctx.Err() == nil {
				p.log.Warn("kvevents: replay socket", "err", err)
			}
			return
		}
		// [identity, "", start] from a REQ or DEALER peer.
		if len(msg.Frames) != 3 || len(msg.Frames[2]) != 8 {
			p.log.Warn("kvevents: invalid replay request", "frames", len(msg.Frames))
			continue
		}
		id := msg.Frames[0]
		start := int64(binary.BigEndian.Uint64(msg.Frames[2]))
		for _, b := range p.from(start) {
			var seqb [8]byte
			binary.BigEndian.PutUint64(seqb[:], uint64(b.seq))
			if err := p.replay.SendMulti(zmq4.NewMsgFrom(id, nil, seqb[:], b.payload)); err != nil {
				p.log.Warn("kvevents: replay send", "err", err)
				break
			}
		}
		if err := p.replay.SendMulti(zmq4.NewMsgFrom(id, nil, endSeq, nil)); err != nil {
			p.log.Warn("kvevents: replay send", "err", err)
		}
	}
}

// Close sends what is queued (waiting at most a second) and closes the
// sockets.
func (p *Publisher) Close() error {
	p.qmu.Lock()
	if !p.closed {
		p.closed = true
		close(p.queue)
	}
	p.qmu.Unlock()
	select {
	case <-p.sent:
	case <-time.After(shutdownTimeout):
		p.log.Warn("kvevents: queued batches not sent at shutdown", "queued", len(p.queue))
	}
	p.cancel()
	err := p.pub.Close()
	if p.replay != nil {
		err = errors.Join(err, p.replay.Close())
	}
	<-p.done
	return err
}

// SubscriberConfig configures a Subscriber.
type SubscriberConfig struct {
	Endpoint       string // the engine's PUB address, e.g. tcp://10.0.0.1:5557
	ReplayEndpoint string // its replay ROUTER address; "" for none
	Topic          string
	// Apply receives every batch, in sequence order, from one goroutine.
	Apply func(seq int64, b Batch)
	// Restarted is called when the sequence went back: the engine
	// restarted, its cache is empty and what the index holds of it is
	// stale.
	Restarted func()
	// Lost counts batches that were neither received nor replayed.
	Lost func(n int64)
	// ReconnectDelay is the pause before dialling again after the
	// connection failed (default 1s).
	ReconnectDelay time.Duration
	Logger         *slog.Logger
}

// Subscriber follows one engine's KV events: SUB on its publisher, with
// what it missed (before it joined, while it was disconnected, gaps in the
// sequence) fetched from the replay socket when the engine has one.
type Subscriber struct {
	cfg  SubscriberConfig
	next int64 // the sequence number expected next; -1 before the first
	// dupFloor is where this connection's catch-up replay started: a live
	// batch numbered from there up to next was already replayed, one below
	// it means the engine numbers from 0 again (it restarted).
	dupFloor int64
	// lastHash is the xxh3 of the last batch applied, to recognise the
	// same engine after a reconnection.
	lastHash uint64
}

// NewSubscriber checks cfg.
func NewSubscriber(cfg SubscriberConfig) (*Subscriber, error) {
	if cfg.Endpoint == "" || cfg.Apply == nil {
		return nil, errors.New("kvevents: a subscriber needs an endpoint and an Apply function")
	}
	if cfg.ReconnectDelay <= 0 {
		cfg.ReconnectDelay = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Restarted == nil {
		cfg.Restarted = func() {}
	}
	if cfg.Lost == nil {
		cfg.Lost = func(int64) {}
	}
	return &Subscriber{cfg: cfg, next: -1}, nil
}

// Run receives events until ctx is done, dialling again whenever the
// connection fails (a restarting engine). It returns ctx's error.
func (s *Subscriber) Run(ctx context.Context) error {
	for {
		err := s.session(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.cfg.Logger.Warn("kvevents: subscription lost, dialling again", "endpoint", s.cfg.Endpoint, "err", err)
		select {
		case <-time.After(s.cfg.ReconnectDelay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// session is one connection's life: subscribe, catch up from the replay
// socket (PUB drops what is sent before a subscription lands), then follow
// the live batches.
func (s *Subscriber) session(ctx context.Context) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sub := zmq4.NewSub(sctx, zmq4.WithDialerRetry(s.cfg.ReconnectDelay), zmq4.WithDialerMaxRetries(-1))
	defer sub.Close()
	if err := sub.Dial(s.cfg.Endpoint); err != nil {
		return err
	}
	if err := sub.SetOption(zmq4.OptionSubscribe, s.cfg.Topic); err != nil {
		return err
	}
	s.dupFloor = max(s.next, 0)
	if s.next > 0 && s.cfg.ReplayEndpoint != "" {
		s.resume(ctx)
	} else {
		s.fill(ctx, s.dupFloor, math.MaxInt64)
	}
	for {
		msg, err := sub.Recv()
		if err != nil {
			return err
		}
		if len(msg.Frames) != 3 || len(msg.Frames[1]) != 8 {
			s.cfg.Logger.Warn("kvevents: unexpected message", "endpoint", s.cfg.Endpoint, "frames", len(msg.Frames))
			continue
		}
		s.receive(ctx, int64(binary.BigEndian.Uint64(msg.Frames[1])), msg.Frames[2])
	}
}

// receive applies one live batch, after replaying any gap before it.
func (s *Subscriber) receive(ctx context.Context, seq int64, payload []byte) {
	switch {
	case s.next >= 0 && seq < s.next && seq >= s.dupFloor:
		return // already replayed
	case s.next >= 0 && seq < s.next:
		s.cfg.Logger.Info("kvevents: sequence went back: engine restarted", "endpoint", s.cfg.Endpoint,
			"seq", seq, "expected", s.next)
		s.cfg.Restarted()
		s.next, s.dupFloor = -1, 0
		s.fill(ctx, 0, seq)
	case seq > max(s.next, 0):
		s.fill(ctx, max(s.next, 0), seq)
	}
	s.apply(seq, payload)
}

// apply decodes and hands on one batch. Batches skipped over are lost,
// unless the subscriber had none yet: an engine's history from before
// vrender joined, beyond its replay buffer, is not a loss, only unknown.
func (s *Subscriber) apply(seq int64, payload []byte) {
	if s.next >= 0 && seq > s.next {
		s.cfg.Lost(seq - s.next)
	}
	b, err := Decode(payload)
	if err != nil {
		s.cfg.Logger.Warn("kvevents: batch dropped", "endpoint", s.cfg.Endpoint, "seq", seq, "err", err)
		s.cfg.Lost(1)
	} else {
		s.cfg.Apply(seq, b)
	}
	s.next = seq + 1
	s.lastHash = xxh3.Hash(payload)
}

// fill replays [from, to) from the engine's replay socket, if it has one.
func (s *Subscriber) fill(ctx context.Context, from, to int64) {
	if s.cfg.ReplayEndpoint == "" {
		return
	}
	err := s.replay(ctx, from, func(seq int64, payload []byte) {
		if seq < to && (s.next < 0 || seq >= s.next) {
			s.apply(seq, payload)
		}
	})
	if err != nil {
		s.cfg.Logger.Warn("kvevents: replay failed", "endpoint", s.cfg.ReplayEndpoint, "from", from, "err", err)
	}
}

// resume catches up after a reconnection. Sequence numbers alone cannot
// tell a restarted engine that has already published past ours from the
// same engine, so the last batch applied is asked for again: the same
// engine still has it, byte for byte; a restarted one has another batch
// under that number or none. Then the engine's cache started empty: what
// the index held is dropped and the new engine's buffer applied from 0.
func (s *Subscriber) resume(ctx context.Context) {
	last := s.next - 1
	same, checked := false, false
	var later []bufferedBatch
	err := s.replay(ctx, last, func(seq int64, payload []byte) {
		if !checked {
			checked = true
			same = seq == last && xxh3.Hash(payload) == s.lastHash
		}
		later = append(later, bufferedBatch{seq, payload})
	})
	if err != nil {
		s.cfg.Logger.Warn("kvevents: replay failed", "endpoint", s.cfg.ReplayEndpoint, "from", last, "err", err)
		return
	}
	if same {
		for _, b := range later {
			if b.seq >= s.next {
				s.apply(b.seq, b.payload)
			}
		}
		return
	}
	s.cfg.Logger.Info("kvevents: engine restarted while disconnected", "endpoint", s.cfg.Endpoint)
	s.cfg.Restarted()
	s.next, s.dupFloor = -1, 0
	s.fill(ctx, 0, math.MaxInt64)
}

// replay asks the replay socket for every buffered batch from `from` and
// hands each to got, in order, until the end marker.
func (s *Subscriber) replay(ctx context.Context, from int64, got func(seq int64, payload []byte)) error {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	d := zmq4.NewDealer(rctx, zmq4.WithTimeout(5*time.Second))
	defer d.Close()
	if err := d.Dial(s.cfg.ReplayEndpoint); err != nil {
		return err
	}
	var start [8]byte
	binary.BigEndian.PutUint64(start[:], uint64(from))
	if err := d.SendMulti(zmq4.NewMsgFrom(nil, start[:])); err != nil {
		return err
	}
	for {
		msg, err := recvCtx(rctx, d)
		if err != nil {
			return err
		}
		f := msg.Frames
		if len(f) > 0 && len(f[0]) == 0 {
			f = f[1:] // the empty delimiter
		}
		if len(f) != 2 || len(f[0]) != 8 {
			return fmt.Errorf("unexpected replay message of %d frames", len(msg.Frames))
		}
		seq := int64(binary.BigEndian.Uint64(f[0]))
		if seq == -1 {
			return nil
		}
		if seq >= from {
			got(seq, f[1])
		}
	}
}

// recvCtx is Recv bounded by ctx (the socket's own timeout may not
// apply to reads).
func recvCtx(ctx context.Context, sck zmq4.Socket) (zmq4.Msg, error) {
	type result struct {
		msg zmq4.Msg
		err error
	}
	ch := make(chan result, 1)
	go func() {
		m, err := sck.Recv()
		ch <- result{m, err}
	}()
	select {
	case r := <-ch:
		return r.msg, r.err
	case <-ctx.Done():
		return zmq4.Msg{}, ctx.Err()
	}
}
