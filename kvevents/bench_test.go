package kvevents

import (
	"net"
	"testing"

	"github.com/go-zeromq/zmq4"

	"github.com/vmihailenco/msgpack/v5"
)

// stepBatch is one busy engine step: a 2048-token prefill stored (128
// blocks of 16) and 64 blocks evicted.
func stepBatch() Batch {
	gpu := MediumGPU
	st := Event{Tag: TagBlockStored, BlockSize: 16, Medium: &gpu, ParentBlockHash: new(IntHash(1 << 63))}
	for i := range 128 {
		st.BlockHashes = append(st.BlockHashes, IntHash(uint64(i)*0x9e3779b97f4a7c15))
	}
	for i := range 128 * 16 {
		st.TokenIDs = append(st.TokenIDs, 1000+i*37%150000)
	}
	rm := Event{Tag: TagBlockRemoved, Medium: &gpu}
	for i := range 64 {
		rm.BlockHashes = append(rm.BlockHashes, IntHash(uint64(i)<<40))
	}
	return withRank(Batch{TS: 1733100000.5, Events: []Event{st, rm}})
}

// BenchmarkDecode is vrender's decoder (vmihailenco/msgpack's streaming
// reader, the union and both event forms by hand) on one step's batch.
func BenchmarkDecode(b *testing.B) {
	payload, _ := Encode(stepBatch())
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for range b.N {
		if _, err := Decode(payload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeGeneric is the same payload through the library's
// reflective decoding into interface values, for comparison.
func BenchmarkDecodeGeneric(b *testing.B) {
	payload, _ := Encode(stepBatch())
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for range b.N {
		var v any
		if err := msgpack.Unmarshal(payload, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	batch := stepBatch()
	b.ReportAllocs()
	for range b.N {
		if _, err := Encode(batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanValue is the depth and size scan Decode runs first, on the
// same step's batch.
func BenchmarkScanValue(b *testing.B) {
	payload, _ := Encode(stepBatch())
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for range b.N {
		if _, err := scanValue(payload); err != nil {
			b.Fatal(err)
		}
	}
}

// streamingPublisher is a loopback PUB that, once a subscriber's
// handshake is done, sends it the same message (one step's batch) until
// it hangs up.
func streamingPublisher(b *testing.B) string {
	payload, _ := Encode(stepBatch())
	msg := pubMessage(1, payload)
	b.SetBytes(int64(len(payload)))
	p := startPeer(b, func(c net.Conn) {
		if acceptAs(c, "PUB") != nil {
			return
		}
		for {
			if _, err := c.Write(msg); err != nil {
				return
			}
		}
	})
	return p.ep
}

// BenchmarkReceive is the subscriber's reader taking one message (one
// step's 8.6 KB batch) off a loopback connection.
func BenchmarkReceive(b *testing.B) {
	ep := streamingPublisher(b)
	z, err := dialZMTP(b.Context(), defaultTimeouts, ep, "SUB", "PUB")
	if err != nil {
		b.Fatal(err)
	}
	defer z.close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := z.readMessage(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReceiveZMQ4 is the same through go-zeromq/zmq4's SUB socket,
// the reader the subscriber used before, for comparison.
func BenchmarkReceiveZMQ4(b *testing.B) {
	ep := streamingPublisher(b)
	sub := zmq4.NewSub(b.Context())
	defer sub.Close()
	if err := sub.Dial(ep); err != nil {
		b.Fatal(err)
	}
	if err := sub.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sub.Recv(); err != nil {
			b.Fatal(err)
		}
	}
}
