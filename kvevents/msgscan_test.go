package kvevents

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// eventWith is a one-event batch whose BlockStored event carries one
// more field, key, with the raw msgpack value val.
func eventWith(key string, val []byte) []byte {
	var buf bytes.Buffer
	e := msgpack.NewEncoder(&buf)
	_ = e.EncodeArrayLen(2)
	_ = e.EncodeFloat64(1)
	_ = e.EncodeArrayLen(1)
	_ = e.EncodeMapLen(5)
	for _, kv := range []struct {
		k string
		v any
	}{{"type", TagBlockStored}, {"block_hashes", []uint64{1}}, {"token_ids", []int{1, 2}}, {"block_size", 2}} {
		_ = e.EncodeString(kv.k)
		_ = e.Encode(kv.v)
	}
	_ = e.EncodeString(key)
	buf.Write(val)
	return buf.Bytes()
}

// nested is n one-element arrays around a nil: n+1 levels.
func nested(n int) []byte {
	b := bytes.Repeat([]byte{0x91}, n)
	return append(b, 0xc0)
}

// TestDecodeDeepNesting is the case the fuzz corpus cannot reach: a 20 MB
// batch whose unknown member (Skip) or extra keys (DecodeInterface) nest
// twenty million arrays deep, which overflowed the goroutine stack (a
// fatal error, not a panic). Now it is refused before the decoder runs.
func TestDecodeDeepNesting(t *testing.T) {
	const depth = 20_000_000
	for _, c := range []struct{ name, key string }{
		{"unknown member", "future_field"},
		{"extra keys", "extra_keys"},
	} {
		t.Run(c.name, func(t *testing.T) {
			payload := eventWith(c.key, nested(depth))
			if len(payload) < 20e6 {
				t.Fatalf("payload %d bytes", len(payload))
			}
			_, err := Decode(payload)
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "nested more than") {
				t.Fatalf("err %v, want ErrMalformed for the depth", err)
			}
		})
	}
	// The deepest a batch may nest still decodes: batch, events, event,
	// then the member's own levels.
	if _, err := Decode(eventWith("future_field", nested(MaxDepth-3))); err != nil {
		t.Errorf("a batch %d deep: %v", MaxDepth, err)
	}
	if _, err := Decode(eventWith("future_field", nested(MaxDepth-2))); err == nil {
		t.Errorf("a batch %d deep decoded", MaxDepth+1)
	}
	keys := []byte{0x91} // extra_keys: one block's keys, holding the nested value
	if _, err := Decode(eventWith("extra_keys", append(keys, append([]byte{0x91}, nested(MaxDepth-5)...)...))); err != nil {
		t.Errorf("extra keys %d deep: %v", MaxDepth, err)
	}
}

func TestScanValue(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		end  int    // where the value ends
		err  string // or the error
	}{
		{"fixint", []byte{0x05, 0xff}, 1, ""},
		{"negative fixint", []byte{0xe0}, 1, ""},
		{"fixstr", []byte{0xa2, 'h', 'i'}, 3, ""},
		{"str8", []byte{0xd9, 1, 'x'}, 3, ""},
		{"str32 cut short", []byte{0xdb, 0, 0, 1, 0, 'x'}, 0, "cut short"},
		{"bin16 header cut", []byte{0xc5, 0}, 0, "header cut short"},
		{"ext8", []byte{0xc7, 2, 7, 1, 2}, 5, ""},
		{"fixext16", append([]byte{0xd8, 7}, make([]byte, 16)...), 18, ""},
		{"float64", []byte{0xcb, 0, 0, 0, 0, 0, 0, 0, 0}, 9, ""},
		{"uint64 cut", []byte{0xcf, 0, 0}, 0, "cut short"},
		{"fixmap", []byte{0x81, 1, 2}, 3, ""},
		{"map16", []byte{0xde, 0, 1, 1, 0xc0}, 5, ""},
		{"array32 lying count", []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 1, 2}, 0, "elements in 2 bytes"},
		{"empty array", []byte{0x90}, 1, ""},
		{"nested arrays", []byte{0x92, 0x91, 0x90, 0xc3}, 4, ""},
		{"unused code", []byte{0xc1}, 0, "never used"},
		{"empty", nil, 0, "cut short"},
		{"array missing its element", []byte{0x92, 1}, 0, "elements in 1 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			end, err := scanValue(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || end != c.end {
				t.Fatalf("end %d err %v, want %d", end, err, c.end)
			}
		})
	}
}

func TestScanValueElementBound(t *testing.T) {
	var buf bytes.Buffer
	e := msgpack.NewEncoder(&buf)
	_ = e.EncodeArrayLen(MaxElements)
	buf.Write(make([]byte, MaxElements)) // fixint zeros
	if _, err := scanValue(buf.Bytes()); err == nil || !strings.Contains(err.Error(), "msgpack values") {
		t.Errorf("an array of %d values plus itself: %v", MaxElements, err)
	}
	buf.Truncate(buf.Len() - 1)
	b := buf.Bytes()
	binary.BigEndian.PutUint32(b[1:], MaxElements-1) // array32's count, one less
	if end, err := scanValue(b); err != nil || end != len(b) {
		t.Errorf("%d values: end %d of %d, %v", MaxElements, end, len(b), err)
	}
}

// FuzzScanValue: the scan agrees with the msgpack library on where a
// value ends; the only value the library reads and the scan refuses is
// one nested or sized beyond the bounds.
func FuzzScanValue(f *testing.F) {
	for _, name := range []string{"golden", "salted", "legacy"} {
		f.Add(fixture(f, name))
	}
	f.Add(eventWith("future_field", nested(40)))
	f.Add([]byte{0xc7, 2, 7, 1, 2, 0xdc, 0, 2, 0xa1, 'x', 0xd4, 1, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		end, err := scanValue(data)
		r := bytes.NewReader(data)
		lerr := msgpack.NewDecoder(r).Skip()
		lend := len(data) - r.Len()
		switch {
		case err == nil && lerr != nil:
			t.Fatalf("scan accepts %d bytes, the library fails: %v", end, lerr)
		case err == nil && end != lend:
			t.Fatalf("scan ends at %d, the library at %d", end, lend)
		case err != nil && lerr == nil && !errors.Is(err, errTooDeep) && !strings.Contains(err.Error(), "msgpack values"):
			t.Fatalf("scan refuses (%v) what the library skips", err)
		}
	})
}

// TestDecodeWorstCaseMemory: the largest batches MaxElements lets
// through, in the shapes that cost the most per byte (empty events, 40
// bytes of Hash per one-byte hash), decode within a bounded allocation:
// slices are made once at the length the scan vouched for.
func TestDecodeWorstCaseMemory(t *testing.T) {
	var buf bytes.Buffer
	e := msgpack.NewEncoder(&buf)
	events := func() []byte {
		buf.Reset()
		n := MaxElements/3 - 10 // a map, its key and its value each
		_ = e.EncodeArrayLen(2)
		_ = e.EncodeFloat64(1)
		_ = e.EncodeArrayLen(n)
		for range n {
			_ = e.EncodeMapLen(1)
			_ = e.EncodeString("type")
			_ = e.EncodeString(TagAllBlocksCleared)
		}
		return bytes.Clone(buf.Bytes())
	}
	hashes := func() []byte {
		buf.Reset()
		_ = e.EncodeArrayLen(2)
		_ = e.EncodeFloat64(1)
		_ = e.EncodeArrayLen(1)
		_ = e.EncodeMapLen(2)
		_ = e.EncodeString("type")
		_ = e.EncodeString(TagBlockRemoved)
		_ = e.EncodeString("block_hashes")
		_ = e.EncodeArrayLen(MaxElements - 10)
		buf.Write(make([]byte, MaxElements-10))
		return bytes.Clone(buf.Bytes())
	}
	for _, c := range []struct {
		name    string
		payload []byte
	}{{"empty events", events()}, {"one-byte hashes", hashes()}} {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b, err := Decode(c.payload)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d KiB payload: %d events, %d MiB allocated", len(c.payload)>>10, len(b.Events), alloc>>20)
			if alloc > 128<<20 {
				t.Errorf("%d MiB allocated", alloc>>20)
			}
		})
	}
}
