package kvevents

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// streamConn is a net.Conn reading a fixed byte stream (the peer's side)
// and discarding what is written.
type streamConn struct {
	net.Conn // nil: only the methods below are called
	r        *bytes.Reader
}

func (c *streamConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *streamConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *streamConn) Close() error                     { return nil }
func (c *streamConn) SetDeadline(time.Time) error      { return nil }
func (c *streamConn) SetReadDeadline(time.Time) error  { return nil }
func (c *streamConn) SetWriteDeadline(time.Time) error { return nil }

// readStream runs the subscriber's side over a peer's byte stream:
// handshake as SUB, then messages until an error, checking each against
// the bounds.
func readStream(t *testing.T, stream []byte) (msgs [][]byte, err error) {
	z := &zmtpConn{c: &streamConn{r: bytes.NewReader(stream)}, t: defaultTimeouts, stop: func() bool { return true }}
	if err := z.handshake("SUB", []string{"PUB"}); err != nil {
		return nil, err
	}
	for {
		m, err := z.readMessage()
		if err != nil {
			return msgs, err
		}
		total := 0
		for _, f := range m {
			total += len(f)
		}
		if len(m) == 0 || len(m) > maxFrames || total > maxMessage {
			t.Fatalf("a message of %d frames, %d bytes", len(m), total)
		}
		msgs = append(msgs, bytes.Clone(bytes.Join(m, []byte("|"))))
	}
}

func TestReadStream(t *testing.T) {
	hello := append(peerGreeting("NULL"), frame(flagCommand, readyCommand("PUB"))...)
	msg := pubMessage(7, []byte("payload"))
	for _, c := range []struct {
		name   string
		stream []byte
		msgs   int
		err    error // besides the stream's end
	}{
		{"two messages", append(append(bytes.Clone(hello), msg...), msg...), 2, io.EOF},
		{"a long frame for a short body", append(bytes.Clone(hello), 0x02, 0, 0, 0, 0, 0, 0, 0, 1, 'x'), 1, io.EOF},
		{"PING between messages", append(append(append(bytes.Clone(hello), msg...), frame(flagCommand, []byte("\x04PING\x00\x01"))...), msg...), 2, io.EOF},
		{"an unknown command is ignored", append(append(bytes.Clone(hello), frame(flagCommand, []byte("\x05HELLO"))...), msg...), 1, io.EOF},
		{"message cut short", append(bytes.Clone(hello), msg[:len(msg)-2]...), 0, io.ErrUnexpectedEOF},
		{"READY with mixed-case property names", append(append(peerGreeting("NULL"),
			frame(flagCommand, appendProperty([]byte("\x05READY"), "sOcKeT-tYpE", "PUB"))...), msg...), 1, io.EOF},
		{"ZMTP 3.1 greeting", append(func() []byte { g := peerGreeting("NULL"); g[11] = 1; return g }(),
			append(frame(flagCommand, readyCommand("PUB")), msg...)...), 1, io.EOF},
		{"no READY", peerGreeting("NULL"), 0, ErrProtocol},
		{"READY with no Socket-Type", append(peerGreeting("NULL"), frame(flagCommand, []byte("\x05READY"))...), 0, ErrProtocol},
		{"a five-frame message", append(bytes.Clone(hello), bytes.Repeat(frame(flagMore, nil), 5)...), 0, ErrProtocol},
	} {
		t.Run(c.name, func(t *testing.T) {
			msgs, err := readStream(t, c.stream)
			if len(msgs) != c.msgs || !errors.Is(err, c.err) {
				t.Errorf("%d messages, err %v; want %d, %v", len(msgs), err, c.msgs, c.err)
			}
		})
	}
}

// FuzzReadStream: whatever a peer sends, the reader ends in an error of
// the stream (its end) or of the protocol, never a panic, and hands out
// no message past its bounds.
func FuzzReadStream(f *testing.F) {
	hello := append(peerGreeting("NULL"), frame(flagCommand, readyCommand("PUB"))...)
	good, _ := Encode(withRank(batch(1)))
	f.Add(append(bytes.Clone(hello), pubMessage(1, good)...))
	f.Add(append(bytes.Clone(hello), frame(flagCommand, []byte("\x04PING\x00\x01ab"))...))
	f.Add(append(peerGreeting("NULL"), frame(flagCommand, append(readyCommand("PUB"), 4, 'X', '-', 'a', 'b', 0, 0, 0, 9, 'v'))...))
	f.Add(append(bytes.Clone(hello), 0x02, 0, 4, 0, 0, 0, 0, 0, 0))
	f.Fuzz(func(t *testing.T, stream []byte) {
		_, err := readStream(t, stream)
		if !errors.Is(err, ErrProtocol) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("error %v is neither the stream's end nor a protocol error", err)
		}
	})
}
