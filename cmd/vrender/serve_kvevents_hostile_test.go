package main

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/internal/testmodel"
)

// zmtpFrame is one ZMTP 3 frame.
func zmtpFrame(flags byte, body []byte) []byte {
	if len(body) > 255 {
		return append(binary.BigEndian.AppendUint64([]byte{flags | 0x02}, uint64(len(body))), body...)
	}
	return append([]byte{flags, byte(len(body))}, body...)
}

// hostilePublisher is a KV-event publisher on loopback that answers its
// n-th connection with the n-th script (the last one repeats): each
// breaks ZMTP or vLLM's message shapes in a way that once stopped
// `vrender serve`.
func hostilePublisher(t *testing.T) (endpoint string, conns *atomic.Int32) {
	t.Helper()
	greeting := make([]byte, 64)
	greeting[0], greeting[9], greeting[10] = 0xff, 0x7f, 3
	copy(greeting[12:], "NULL")
	ready := zmtpFrame(0x04, []byte("\x05READY\x0bSocket-Type\x00\x00\x00\x03PUB"))
	seq := func(n uint64) []byte { return zmtpFrame(0x01, binary.BigEndian.AppendUint64(nil, n)) }
	// A batch whose extra keys nest 20 million arrays deep (20 MB).
	deep := append([]byte("\x92\xcb\x00\x00\x00\x00\x00\x00\x00\x00\x91\x82\xa4type\xabBlockStored\xaaextra_keys"),
		bytes.Repeat([]byte{0x91}, 20_000_000)...)
	deep = append(deep, 0xc0)
	scripts := [][]byte{
		// READY whose last property is cut inside its value's length
		// (zmq4: slice bounds out of range).
		append(bytes.Clone(greeting), zmtpFrame(0x04, []byte("\x05READY\x0bSocket-Type\x00\x00\x00\x03PUB\x04X-ab\x00\x00"))...),
		// The deep batch (a stack overflow in msgpack), then sequence
		// 2^63-1 (the lost counter went negative).
		bytes.Join([][]byte{greeting, ready, zmtpFrame(0x01, nil), seq(0), zmtpFrame(0, deep),
			zmtpFrame(0x01, nil), seq(math.MaxInt64), zmtpFrame(0, []byte{0x92, 0xca, 0, 0, 0, 0, 0x90})}, nil),
		// A frame claiming 2^50 bytes (zmq4: make([]byte, 2^50)).
		bytes.Join([][]byte{greeting, ready, {0x02}, binary.BigEndian.AppendUint64(nil, 1<<50)}, nil),
		// Frames with MORE set, without end.
		append(bytes.Clone(greeting), ready...),
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns = &atomic.Int32{}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n := int(conns.Add(1)) - 1
			wg.Go(func() {
				defer c.Close()
				go func() { _, _ = io.Copy(io.Discard, c) }()
				if _, err := c.Write(scripts[min(n, len(scripts)-1)]); err != nil || n < len(scripts)-1 {
					time.Sleep(time.Second) // the subscriber hangs up first
					return
				}
				more := zmtpFrame(0x01, []byte("x"))
				for {
					if _, err := c.Write(more); err != nil {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() { _ = l.Close(); wg.Wait() })
	return "tcp://" + l.Addr().String(), conns
}

// TestServeSurvivesHostileKVPublisher: `vrender serve` routing by prefix
// from an engine's KV events keeps answering chat while the event
// endpoint misbehaves in every way that used to stop it (a panic on
// go-zeromq's goroutine, a stack overflow): each connection is dropped,
// counted on /metrics and dialled again later; the heap stays bounded and
// no panic reaches the log.
func TestServeSurvivesHostileKVPublisher(t *testing.T) {
	m := testmodel.Load(t, "qwen3")
	a := startLoRASim(t, m, enginesim.KVRoleBoth, nil, false)
	ep, conns := hostilePublisher(t)
	addr, logs, stop := startServe(t, m.Dir, "--host", "127.0.0.1", "--port", "0", "--served-model-name", "qwen",
		"--engine", a.url, "--routing", "prefix", "--kv-events-endpoint", a.url+"="+ep)
	defer stop()

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	answered := 0
	for deadline := time.Now().Add(30 * time.Second); ; answered++ {
		if model := chatModel(t, addr, "qwen", "Say hi"); model != "qwen" {
			t.Fatalf("answer's model %q", model)
		}
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
		if metricValue(t, addr, "vrender_routing_kv_event_publishers_dropped_total") >= 4 && conns.Load() >= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections, %d dropped in 30 s; logs:\n%s", conns.Load(),
				metricValue(t, addr, "vrender_routing_kv_event_publishers_dropped_total"), logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The deep batch is read whole (20 MB) before it is refused.
	if grew := int64(peak) - int64(base); grew > 160<<20 {
		t.Errorf("heap grew %d MiB while the publisher misbehaved", grew>>20)
	}
	if lost := metricValue(t, addr, "vrender_routing_kv_event_batches_lost_total"); lost < 0 || lost > 1 {
		t.Errorf("%d batches lost, want the deep one at most", lost)
	}
	out := logs.String()
	if strings.Contains(out, "panic") || strings.Contains(out, "fatal error") || !strings.Contains(out, "publisher dropped") ||
		!strings.Contains(out, ep) {
		t.Errorf("log:\n%s", out)
	}
	t.Logf("%d chat answers while %d hostile connections were dropped; heap %d MiB -> peak %d MiB",
		answered, conns.Load(), base>>20, peak>>20)
}
