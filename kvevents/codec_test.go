package kvevents

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fixture reads testdata/NAME.hex, written by gen_fixtures.py from vLLM's
// msgspec class definitions.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", name+".hex"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(text)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// goldenBatch is testdata/golden.hex as vrender reads it.
func goldenBatch() Batch {
	gpu := new(MediumGPU)
	return Batch{TS: 1733100000.25, DataParallelRank: new(int64(0)), Events: []Event{
		{Tag: TagBlockStored, BlockHashes: []Hash{IntHash(11), IntHash(1<<64 - 1)}, TokenIDs: []int{100, 101, 102, 103, 104, 105, 106, 107},
			BlockSize: 4, Medium: gpu},
		{Tag: TagBlockStored, BlockHashes: []Hash{IntHash(12)}, ParentBlockHash: new(IntHash(1<<64 - 1)),
			TokenIDs: []int{108, 109, 110, 111}, BlockSize: 4, Medium: gpu, ExtraKeys: [][]any{nil}},
		{Tag: TagBlockRemoved, BlockHashes: []Hash{IntHash(12)}, Medium: gpu},
		{Tag: TagAllBlocksCleared},
	}}
}

func TestDecodeGoldenCommitWireFormat(t *testing.T) {
	got, err := Decode(fixture(t, "golden"))
	if err != nil {
		t.Fatal(err)
	}
	if want := goldenBatch(); !reflect.DeepEqual(got, want) {
		t.Errorf("decoded\n%+v\nwant\n%+v", got, want)
	}
	// vrender's engine-sim publishes byte for byte what msgspec would.
	enc, err := Encode(goldenBatch())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(enc, fixture(t, "golden")) {
		t.Errorf("Encode differs from msgspec's encoding:\n got %x\nwant %x", enc, fixture(t, "golden"))
	}
}

func TestDecodeBytesHashesAndExtraKeys(t *testing.T) {
	got, err := Decode(fixture(t, "salted"))
	if err != nil {
		t.Fatal(err)
	}
	ev := got.Events[0]
	if !ev.BlockHashes[0].IsBytes || len(ev.BlockHashes[0].Bytes) != 32 || *ev.LoRAName != "adapter" ||
		!reflect.DeepEqual(ev.ExtraKeys, [][]any{{"adapter", "salt-a"}}) || *got.DataParallelRank != 1 {
		t.Errorf("decoded %+v", got)
	}
	if k := ev.BlockHashes[0].Key(); k == 0 || k != (Hash{Bytes: bytes.Repeat([]byte{1}, 32), IsBytes: true}).Key() {
		t.Errorf("bytes hash key %x is not stable", k)
	}
}

func TestDecodeArrayLikeEvents(t *testing.T) {
	got, err := Decode(fixture(t, "legacy"))
	if err != nil {
		t.Fatal(err)
	}
	gpu := new(MediumGPU)
	want := Batch{TS: 3.5, Events: []Event{
		{Tag: TagBlockStored, BlockHashes: []Hash{IntHash(7)}, ParentBlockHash: new(IntHash(5)), TokenIDs: []int{1, 2, 3, 4}, BlockSize: 4, Medium: gpu},
		{Tag: TagBlockRemoved, BlockHashes: []Hash{IntHash(7)}, Medium: gpu},
		{Tag: TagAllBlocksCleared},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded\n%+v\nwant\n%+v", got, want)
	}
}

func TestDecodeRejects(t *testing.T) {
	golden := fixture(t, "golden")
	for name, in := range map[string][]byte{
		"empty":          {},
		"not an array":   {0x80},
		"one field":      {0x91, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0},
		"truncated":      golden[:len(golden)/2],
		"trailing bytes": append(append([]byte(nil), golden...), 0xc0),
		"unknown tag":    {0x92, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0x91, 0x81, 0xa4, 't', 'y', 'p', 'e', 0xa3, 'B', 'a', 'd'},
		"no tag":         {0x92, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0x91, 0x80},
		"tokens short":   {0x92, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0x91, 0x94, 0xab, 'B', 'l', 'o', 'c', 'k', 'S', 't', 'o', 'r', 'e', 'd', 0x91, 1, 0xc0, 0x91, 1},
	} {
		if _, err := Decode(in); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err %v, want ErrMalformed", name, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, name := range []string{"golden", "salted", "legacy"} {
		f.Add(fixture(f, name))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Decode(data)
		if err != nil {
			return
		}
		// What decodes re-encodes and decodes to the same batch.
		enc, err := Encode(b)
		if err != nil {
			t.Fatalf("decoded batch does not encode: %v", err)
		}
		again, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-encoded batch does not decode: %v", err)
		}
		// The timestamp is compared by its bits: a NaN (any float the
		// engine sends) is never DeepEqual to itself.
		if math.Float64bits(again.TS) != math.Float64bits(b.TS) {
			t.Fatalf("round trip changed the timestamp: %v (%#x) -> %v (%#x)", b.TS, math.Float64bits(b.TS), again.TS, math.Float64bits(again.TS))
		}
		again.TS, b.TS = 0, 0
		if !reflect.DeepEqual(normalise(again), normalise(b)) {
			t.Fatalf("round trip changed the batch:\n%+v\n%+v", b, again)
		}
	})
}

// normalise drops what Encode does not write for an event kind, and
// kv_cache_spec fields (decoded, never needed on the way out).
func normalise(b Batch) Batch {
	for i := range b.Events {
		e := &b.Events[i]
		e.KVCacheSpecKind, e.KVCacheSpecSlidingWind = nil, nil
		switch e.Tag {
		case TagAllBlocksCleared:
			*e = Event{Tag: e.Tag}
		case TagBlockRemoved:
			*e = Event{Tag: e.Tag, BlockHashes: e.BlockHashes, Medium: e.Medium, GroupIdx: e.GroupIdx}
		}
		if len(e.BlockHashes) == 0 {
			e.BlockHashes = nil
		}
		if len(e.TokenIDs) == 0 {
			e.TokenIDs = nil
		}
	}
	if len(b.Events) == 0 {
		b.Events = nil
	}
	return b
}
