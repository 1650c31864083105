package kvevents

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/zeebo/xxh3"
)

// MaxSequenceJump is the furthest ahead of the expected sequence number
// a batch may be and still count as the same stream with batches lost
// between. A live engine publishes one batch per step (at most hundreds a
// second), and its replay buffer holds 10,000: a jump of a million is a
// restart or garbage, and is handled as a restart (the engine's entries
// dropped, the stream followed from there) instead of counting a
// billion-billion lost batches.
const MaxSequenceJump = 1 << 20

// DefaultMaxReconnectDelay caps the redial backoff.
const DefaultMaxReconnectDelay = 30 * time.Second

// SubscriberConfig configures a Subscriber.
type SubscriberConfig struct {
	Endpoint       string // the engine's PUB address, e.g. tcp://10.0.0.1:5557
	ReplayEndpoint string // its replay ROUTER address; "" for none
	Topic          string
	// Apply receives every batch, in sequence order, from one goroutine.
	Apply func(seq int64, b Batch)
	// Restarted is called when the stream started again: the sequence
	// went back (the engine restarted, its cache is empty) or jumped
	// past MaxSequenceJump. What the index holds of the engine is stale.
	Restarted func()
	// Lost counts batches that were neither received nor replayed.
	Lost func(n int64)
	// Dropped is called each time a connection to the engine's PUB or
	// replay socket is dropped because the peer broke ZMTP or vLLM's
	// message shapes (ErrProtocol).
	Dropped func()
	// ReconnectDelay is the first pause before dialling again after the
	// connection failed (default 1s); it doubles with every failure in a
	// row, up to MaxReconnectDelay (default DefaultMaxReconnectDelay).
	ReconnectDelay, MaxReconnectDelay time.Duration
	Logger                            *slog.Logger
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
	// applied counts the batches this session applied; warned is set once
	// a session logged a batch that did not decode (the rest are counted
	// lost, not logged: a publisher must not flood the log).
	applied int
	warned  bool
	t       timeouts
}

// NewSubscriber checks cfg.
func NewSubscriber(cfg SubscriberConfig) (*Subscriber, error) {
	if cfg.Endpoint == "" || cfg.Apply == nil {
		return nil, errors.New("kvevents: a subscriber needs an endpoint and an Apply function")
	}
	if cfg.ReconnectDelay <= 0 {
		cfg.ReconnectDelay = time.Second
	}
	if cfg.MaxReconnectDelay <= 0 {
		cfg.MaxReconnectDelay = DefaultMaxReconnectDelay
	}
	cfg.MaxReconnectDelay = max(cfg.MaxReconnectDelay, cfg.ReconnectDelay)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Restarted == nil {
		cfg.Restarted = func() {}
	}
	if cfg.Lost == nil {
		cfg.Lost = func(int64) {}
	}
	if cfg.Dropped == nil {
		cfg.Dropped = func() {}
	}
	return &Subscriber{cfg: cfg, next: -1, t: defaultTimeouts}, nil
}

// Run receives events until ctx is done, dialling again whenever the
// connection fails (a restarting engine) or the publisher broke the
// protocol, after a pause that doubles while sessions keep failing. It
// returns ctx's error.
func (s *Subscriber) Run(ctx context.Context) error {
	delay := s.cfg.ReconnectDelay
	for {
		s.applied, s.warned = 0, false
		err := s.session(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if s.dropped(err) {
			s.cfg.Logger.Warn("kvevents: publisher dropped, dialling again later", "endpoint", s.cfg.Endpoint,
				"err", err, "delay", delay)
		} else {
			if s.applied > 0 {
				delay = s.cfg.ReconnectDelay // it worked: a fresh failure
			}
			s.cfg.Logger.Warn("kvevents: subscription lost, dialling again", "endpoint", s.cfg.Endpoint, "err", err,
				"delay", delay)
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
		delay = min(2*delay, s.cfg.MaxReconnectDelay)
	}
}

// dropped reports whether err is a protocol violation, counting it.
func (s *Subscriber) dropped(err error) bool {
	if !errors.Is(err, ErrProtocol) {
		return false
	}
	s.cfg.Dropped()
	return true
}

// session is one connection's life: subscribe, catch up from the replay
// socket (PUB drops what is sent before a subscription lands), then follow
// the live batches.
func (s *Subscriber) session(ctx context.Context) error {
	sub, err := dialZMTP(ctx, s.t, s.cfg.Endpoint, "SUB", "PUB", "XPUB")
	if err != nil {
		return err
	}
	defer sub.close()
	// ZMTP 3.0's subscription: a message of 1 and the topic prefix.
	if err := sub.writeFrame(0, append([]byte{1}, s.cfg.Topic...)); err != nil {
		return fmt.Errorf("kvevents: subscribe: %w", err)
	}
	s.dupFloor = max(s.next, 0)
	if s.next > 0 && s.cfg.ReplayEndpoint != "" {
		s.resume(ctx)
	} else {
		s.fill(ctx, s.dupFloor, math.MaxInt64)
	}
	for {
		msg, err := sub.readMessage()
		if err != nil {
			return err
		}
		if len(msg) != 3 || len(msg[1]) != 8 {
			return protocolError("a message of %d frames, want topic, 8-byte sequence number, payload", len(msg))
		}
		if !bytes.HasPrefix(msg[0], []byte(s.cfg.Topic)) {
			continue // a PUB filters by topic; one that does not is only wasteful
		}
		seq, err := sequence(msg[1])
		if err != nil {
			return err
		}
		s.receive(ctx, seq, msg[2])
	}
}

// sequence reads an 8-byte sequence number: vLLM counts from 0, and
// math.MaxInt64 has no successor to expect.
func sequence(b []byte) (int64, error) {
	seq := int64(binary.BigEndian.Uint64(b))
	if seq < 0 || seq == math.MaxInt64 {
		return 0, protocolError("sequence number %d", seq)
	}
	return seq, nil
}

// receive applies one live batch, after replaying any gap before it.
func (s *Subscriber) receive(ctx context.Context, seq int64, payload []byte) {
	switch {
	case s.next >= 0 && seq < s.next && seq >= s.dupFloor:
		return // already replayed
	case s.next >= 0 && seq < s.next:
		s.restart(seq, seq, "kvevents: sequence went back: engine restarted")
		s.fill(ctx, 0, seq)
	case s.next >= 0 && seq-s.next > MaxSequenceJump:
		s.restart(seq, seq, "kvevents: sequence jumped: engine restarted or garbage")
		s.fill(ctx, 0, seq)
	case seq > max(s.next, 0):
		s.fill(ctx, max(s.next, 0), seq)
	}
	s.apply(seq, payload)
}

// restart forgets the stream: what follows is a new one. Live batches
// from floor up to the next expected are the catch-up replay's again; one
// below floor is the stream starting over once more. The floor is where
// the new stream was seen (never 0 after a live jump: a batch of the old
// numbering must restart again, not pass for a duplicate forever).
func (s *Subscriber) restart(seq, floor int64, why string) {
	s.cfg.Logger.Info(why, "endpoint", s.cfg.Endpoint, "seq", seq, "expected", s.next)
	s.cfg.Restarted()
	s.next, s.dupFloor = -1, floor
}

// apply decodes and hands on one batch. Batches skipped over are lost,
// unless the subscriber had none yet: an engine's history from before
// vrender joined, beyond its replay buffer, is not a loss, only unknown.
// seq is in [0, math.MaxInt64) (sequence, replay check it).
func (s *Subscriber) apply(seq int64, payload []byte) {
	switch {
	case s.next >= 0 && seq-s.next > MaxSequenceJump: // by replay: live batches are checked in receive
		s.restart(seq, seq, "kvevents: replayed sequence jumped: engine restarted or garbage")
	case s.next >= 0 && seq > s.next:
		s.cfg.Lost(seq - s.next)
	}
	b, err := Decode(payload)
	if err != nil {
		if !s.warned {
			s.warned = true
			s.cfg.Logger.Warn("kvevents: batch dropped (more from this connection are counted lost, not logged)",
				"endpoint", s.cfg.Endpoint, "seq", seq, "err", err)
		}
		s.cfg.Lost(1)
	} else {
		s.cfg.Apply(seq, b)
		s.applied++
	}
	s.next = seq + 1
	s.lastHash = xxh3.Hash(payload)
}

// fill replays [from, to) from the engine's replay socket, if it has one.
func (s *Subscriber) fill(ctx context.Context, from, to int64) {
	if s.cfg.ReplayEndpoint == "" {
		return
	}
	err := s.replay(ctx, from, func(seq int64, payload []byte) bool {
		if seq < to && (s.next < 0 || seq >= s.next) {
			s.apply(seq, payload)
		}
		return true
	})
	s.replayFailed(from, err)
}

func (s *Subscriber) replayFailed(from int64, err error) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	msg := "kvevents: replay failed"
	if s.dropped(err) {
		msg = "kvevents: replay peer dropped"
	}
	s.cfg.Logger.Warn(msg, "endpoint", s.cfg.ReplayEndpoint, "from", from, "err", err)
}

// resume catches up after a reconnection. Sequence numbers alone cannot
// tell a restarted engine that has already published past ours from the
// same engine, so the last batch applied is asked for again: the same
// engine still has it, byte for byte, and the batches after it follow; a
// restarted one has another batch under that number or none. Then the
// engine's cache started empty: what the index held is dropped and the
// new engine's buffer applied from 0.
func (s *Subscriber) resume(ctx context.Context) {
	last := s.next - 1
	same, checked := false, false
	err := s.replay(ctx, last, func(seq int64, payload []byte) bool {
		if !checked {
			checked = true
			same = seq == last && xxh3.Hash(payload) == s.lastHash
			return same
		}
		if seq >= s.next {
			s.apply(seq, payload)
		}
		return true
	})
	if err != nil {
		s.replayFailed(last, err)
		return
	}
	if same {
		return
	}
	s.restart(last, 0, "kvevents: engine restarted while disconnected")
	s.fill(ctx, 0, math.MaxInt64)
}

// replay asks the replay socket for every buffered batch from `from` and
// hands each to got, in order, until the end marker or got returns false.
// The payload is valid until got returns.
func (s *Subscriber) replay(ctx context.Context, from int64, got func(seq int64, payload []byte) bool) error {
	rctx, cancel := context.WithTimeout(ctx, s.t.replay)
	defer cancel()
	d, err := dialZMTP(rctx, s.t, s.cfg.ReplayEndpoint, "DEALER", "ROUTER")
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err() // shutting down: not the peer's fault
		}
		return err
	}
	defer d.close()
	var start [8]byte
	binary.BigEndian.PutUint64(start[:], uint64(from))
	if err := d.writeMessage(nil, start[:]); err != nil {
		return err
	}
	prev := from - 1
	for {
		f, err := d.readMessage()
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case rctx.Err() != nil:
				return fmt.Errorf("no end marker within %s: %w", s.t.replay, err)
			}
			return err
		}
		if len(f) > 0 && len(f[0]) == 0 {
			f = f[1:] // the empty delimiter
		}
		if len(f) != 2 || len(f[0]) != 8 {
			return protocolError("a replay message of %d frames, want sequence number and payload", len(f))
		}
		if bytes.Equal(f[0], endSeq) {
			return nil
		}
		seq, err := sequence(f[0])
		if err != nil {
			return err
		}
		if seq <= prev {
			return protocolError("replayed sequence number %d after %d", seq, prev)
		}
		prev = seq
		if !got(seq, f[1]) {
			return nil
		}
	}
}
