package kvevents

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
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
