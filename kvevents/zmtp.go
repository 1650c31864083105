package kvevents

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"time"
)

// The subscriber's side of ZMTP 3 (rfc.zeromq.org/spec/23 and 37), the
// two socket types vLLM's publisher is read with: SUB on its PUB socket,
// DEALER on its replay ROUTER, over the NULL mechanism. Every length a
// peer sends is checked before anything is allocated for it, and memory
// grows only with the bytes that actually arrived: a publisher is remote
// input like a request body.

// ErrProtocol wraps every way a peer broke ZMTP or vLLM's message shapes.
// The subscriber drops such a peer, counts it and dials it again later.
var ErrProtocol = errors.New("kvevents: publisher broke the protocol")

func protocolError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}

const (
	greetingLen = 64
	// maxCommand bounds a command's body (READY, PING, ERROR): a few
	// short properties.
	maxCommand = 64 << 10
	// maxFrames bounds one message's frames: vLLM sends three (topic,
	// sequence, payload; a replay answer adds the empty delimiter).
	maxFrames = 4
	// maxMessage bounds one message's bytes: a payload plus the small
	// frames beside it.
	maxMessage = MaxPayload + 64<<10
	// keepBuffer is the largest message buffer kept for the next
	// message; a rare large batch's memory goes back after it.
	keepBuffer = 1 << 20
)

// timeouts bound how long a peer may take. Tests shorten them.
type timeouts struct {
	// handshake bounds the greeting and READY exchange, and every write
	// (a peer that stops reading stalls nothing for longer).
	handshake time.Duration
	// message bounds how long a message may take to arrive once its
	// first byte has: vLLM writes each whole, so only a peer that
	// trickles bytes to hold the connection and its buffer waits longer.
	message time.Duration
	// replay bounds one replay request, from dial to end marker.
	replay time.Duration
}

var defaultTimeouts = timeouts{handshake: 5 * time.Second, message: 30 * time.Second, replay: 5 * time.Second}

// Frame flags.
const (
	flagMore    = 0x01
	flagLong    = 0x02
	flagCommand = 0x04
)

// zmtpConn is one connection to a publisher's socket.
type zmtpConn struct {
	c    net.Conn
	buf  []byte   // the last message's frames, back to back
	cmd  []byte   // the last command's body
	msg  [][]byte // the last message, slices of buf
	stop func() bool
	t    timeouts
}

// dialZMTP connects to endpoint (tcp://host:port or ipc://path) as a
// socket of type self, and completes the handshake with a peer of one of
// the types peers. Closing the connection when ctx is done ends any read.
func dialZMTP(ctx context.Context, t timeouts, endpoint, self string, peers ...string) (*zmtpConn, error) {
	network, addr, ok := strings.Cut(endpoint, "://")
	switch {
	case !ok:
		return nil, fmt.Errorf("kvevents: endpoint %q: want tcp://host:port or ipc://path", endpoint)
	case network == "ipc":
		network = "unix"
	case network != "tcp":
		return nil, fmt.Errorf("kvevents: endpoint %q: transport %q not supported (tcp, ipc)", endpoint, network)
	}
	d := net.Dialer{Timeout: t.handshake}
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	z := &zmtpConn{c: c, t: t}
	z.stop = context.AfterFunc(ctx, func() { _ = c.Close() })
	if err := z.handshake(self, peers); err != nil {
		z.close()
		return nil, err
	}
	return z, nil
}

func (z *zmtpConn) close() {
	z.stop()
	_ = z.c.Close()
}

// greeting is ours: signature, version 3.0, the NULL mechanism, as-server
// 0 and the filler. 3.0 rather than 3.1 asks libzmq for 3.0's
// subscription messages and no heartbeats; the reader answers a PING all
// the same.
var greeting = func() [greetingLen]byte {
	var g [greetingLen]byte
	g[0], g[9], g[10], g[11] = 0xff, 0x7f, 3, 0
	copy(g[12:32], "NULL")
	return g
}()

func (z *zmtpConn) handshake(self string, peers []string) error {
	if err := z.c.SetDeadline(time.Now().Add(z.t.handshake)); err != nil {
		return err
	}
	if _, err := z.c.Write(greeting[:]); err != nil {
		return fmt.Errorf("kvevents: send greeting: %w", err)
	}
	var g [greetingLen]byte
	if _, err := io.ReadFull(z.c, g[:]); err != nil {
		return fmt.Errorf("%w: greeting: %w", ErrProtocol, err)
	}
	if err := checkGreeting(g[:]); err != nil {
		return err
	}
	if err := z.writeFrame(flagCommand, readyCommand(self)); err != nil {
		return fmt.Errorf("kvevents: send READY: %w", err)
	}
	flags, size, err := z.readHeader()
	if err != nil {
		return fmt.Errorf("%w: READY: %w", ErrProtocol, err)
	}
	if flags&flagCommand == 0 || flags&flagMore != 0 {
		return protocolError("a message before the READY command")
	}
	if size > maxCommand {
		return protocolError("a command of %d bytes", size)
	}
	if z.cmd, err = readAppend(z.c, z.cmd[:0], int(size)); err != nil {
		return fmt.Errorf("%w: READY: %w", ErrProtocol, err)
	}
	props, err := parseReady(z.cmd)
	if err != nil {
		return err
	}
	if got := props["socket-type"]; !slices.Contains(peers, got) {
		return protocolError("peer is a %q socket, want %s", got, strings.Join(peers, " or "))
	}
	return z.c.SetDeadline(time.Time{})
}

// checkGreeting reads a peer's greeting: ZMTP 3 or later, NULL mechanism.
func checkGreeting(g []byte) error {
	if g[0] != 0xff || g[9] != 0x7f {
		return protocolError("not a ZMTP greeting (% x)", g[:10])
	}
	if g[10] < 3 {
		return protocolError("ZMTP version %d.%d, want 3 or later", g[10], g[11])
	}
	if mech := g[12:32]; string(bytes.TrimRight(mech, "\x00")) != "NULL" {
		return protocolError("security mechanism %q, want NULL", bytes.TrimRight(mech, "\x00"))
	}
	if g[32] > 1 {
		return protocolError("as-server flag %d", g[32])
	}
	return nil
}

// readyCommand is the READY command's body for a socket of type typ.
// A DEALER sends its (empty) identity, as libzmq's does.
func readyCommand(typ string) []byte {
	b := append([]byte{5}, "READY"...)
	b = appendProperty(b, "Socket-Type", typ)
	if typ == "DEALER" {
		b = appendProperty(b, "Identity", "")
	}
	return b
}

func appendProperty(b []byte, name, value string) []byte {
	b = append(b, byte(len(name)))
	b = append(b, name...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(value)))
	return append(b, value...)
}

// parseReady reads a READY command's body (or an ERROR's reason) into its
// properties, names lower-cased (they are case-insensitive). Every length
// is checked against what is left: the body is the peer's.
func parseReady(body []byte) (map[string]string, error) {
	name, rest, err := shortString(body)
	if err != nil {
		return nil, protocolError("command name: %v", err)
	}
	switch name {
	case "READY":
	case "ERROR":
		reason, _, _ := shortString(rest)
		return nil, protocolError("peer refused the connection: %q", reason)
	default:
		return nil, protocolError("command %q where READY belongs", name)
	}
	props := map[string]string{}
	for len(rest) > 0 {
		var key string
		if key, rest, err = shortString(rest); err != nil || key == "" {
			return nil, protocolError("READY property name: %v", err)
		}
		if len(rest) < 4 {
			return nil, protocolError("READY property %q: value length cut short", key)
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(n) > uint64(len(rest)) {
			return nil, protocolError("READY property %q: value of %d bytes, %d left", key, n, len(rest))
		}
		props[strings.ToLower(key)], rest = string(rest[:n]), rest[n:]
	}
	return props, nil
}

// shortString reads a one-byte length and that many bytes.
func shortString(b []byte) (string, []byte, error) {
	if len(b) == 0 {
		return "", nil, errors.New("cut short")
	}
	n := int(b[0])
	if n > len(b)-1 {
		return "", nil, fmt.Errorf("%d bytes, %d left", n, len(b)-1)
	}
	return string(b[1 : 1+n]), b[1+n:], nil
}

// readHeader reads a frame's flags and size.
func (z *zmtpConn) readHeader() (flags byte, size uint64, err error) {
	var h [9]byte
	if _, err := io.ReadFull(z.c, h[:2]); err != nil {
		return 0, 0, err
	}
	flags, size = h[0], uint64(h[1])
	if flags&^(flagMore|flagLong|flagCommand) != 0 {
		return 0, 0, protocolError("reserved frame flags 0x%02x", flags)
	}
	if flags&flagLong != 0 {
		if _, err := io.ReadFull(z.c, h[2:]); err != nil {
			return 0, 0, err
		}
		size = binary.BigEndian.Uint64(h[1:])
	}
	return flags, size, nil
}

// readMessage reads the next message: its frames, valid until the next
// read. Commands between messages are handled (PING answered, ERROR the
// end, others ignored); a frame or message past its bound, a command
// inside a message or a message of more than maxFrames frames is a
// protocol error, found before its bytes are read.
func (z *zmtpConn) readMessage() ([][]byte, error) {
	if cap(z.buf) > keepBuffer {
		z.buf = nil
	}
	z.buf, z.msg = z.buf[:0], z.msg[:0]
	var ends [maxFrames]int
	n := 0
	for {
		flags, size, err := z.readHeader()
		if err != nil {
			return nil, z.incomplete(err)
		}
		if n == 0 {
			// The rest of this message must come in t.message.
			if err := z.c.SetReadDeadline(time.Now().Add(z.t.message)); err != nil {
				return nil, err
			}
		}
		if flags&flagCommand != 0 {
			if n > 0 || flags&flagMore != 0 {
				return nil, protocolError("a command inside a multipart message")
			}
			if err := z.command(size); err != nil {
				return nil, z.incomplete(err)
			}
			if err := z.c.SetReadDeadline(time.Time{}); err != nil {
				return nil, err
			}
			continue
		}
		if n == maxFrames {
			return nil, protocolError("a message of more than %d frames", maxFrames)
		}
		if size > uint64(maxMessage-len(z.buf)) {
			return nil, protocolError("a frame of %d bytes after %d, past the %d-byte bound", size, len(z.buf), maxMessage)
		}
		if z.buf, err = readAppend(z.c, z.buf, int(size)); err != nil {
			return nil, z.incomplete(err)
		}
		ends[n] = len(z.buf)
		n++
		if flags&flagMore == 0 {
			break
		}
	}
	if err := z.c.SetReadDeadline(time.Time{}); err != nil {
		return nil, err
	}
	start := 0
	for _, end := range ends[:n] {
		z.msg = append(z.msg, z.buf[start:end:end])
		start = end
	}
	return z.msg, nil
}

// incomplete names the deadline t.message set: the peer started a
// message and stopped sending (no deadline is set between messages).
func (z *zmtpConn) incomplete(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return protocolError("a message still incomplete after %s", z.t.message)
	}
	return err
}

// command reads and handles one command of size bytes between messages.
func (z *zmtpConn) command(size uint64) error {
	if size > maxCommand {
		return protocolError("a command of %d bytes", size)
	}
	var err error
	if z.cmd, err = readAppend(z.c, z.cmd[:0], int(size)); err != nil {
		return err
	}
	name, rest, err := shortString(z.cmd)
	if err != nil {
		return protocolError("command name: %v", err)
	}
	switch name {
	case "PING":
		// ZMTP 3.1: a TTL (2 bytes) then a context of at most 16 bytes,
		// sent back in the PONG.
		if len(rest) < 2 || len(rest) > 2+16 {
			return protocolError("PING of %d bytes", len(rest))
		}
		return z.writeFrame(flagCommand, append(append([]byte{4}, "PONG"...), rest[2:]...))
	case "ERROR":
		reason, _, _ := shortString(rest)
		return protocolError("peer sent ERROR %q", reason)
	}
	return nil
}

// writeFrame sends one frame.
func (z *zmtpConn) writeFrame(flags byte, body []byte) error {
	return z.write(append(appendFrameHeader(nil, flags, len(body)), body...))
}

// writeMessage sends the frames as one message.
func (z *zmtpConn) writeMessage(frames ...[]byte) error {
	var b []byte
	for i, f := range frames {
		flags := byte(0)
		if i < len(frames)-1 {
			flags = flagMore
		}
		b = append(appendFrameHeader(b, flags, len(f)), f...)
	}
	return z.write(b)
}

func appendFrameHeader(b []byte, flags byte, size int) []byte {
	if size > 255 {
		return binary.BigEndian.AppendUint64(append(b, flags|flagLong), uint64(size))
	}
	return append(b, flags, byte(size))
}

func (z *zmtpConn) write(b []byte) error {
	if err := z.c.SetWriteDeadline(time.Now().Add(z.t.handshake)); err != nil {
		return err
	}
	_, err := z.c.Write(b)
	return err
}

// readAppend appends n bytes read from r to buf, growing it as they
// arrive: a size a peer announced and never sends costs nothing.
func readAppend(r io.Reader, buf []byte, n int) ([]byte, error) {
	const chunk = 256 << 10
	for n > 0 {
		k := min(n, chunk)
		buf = slices.Grow(buf, k)
		m, err := io.ReadFull(r, buf[len(buf):len(buf)+k])
		buf = buf[:len(buf)+m]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return buf, err
		}
		n -= k
	}
	return buf, nil
}
