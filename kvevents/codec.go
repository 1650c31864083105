package kvevents

import (
	"bytes"
	"errors"
	"fmt"
	"math"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// The wire format, from vllm/distributed/kv_events.py (msgspec):
//
//   - KVEventBatch is array_like with omit_defaults: [ts, events] or
//     [ts, events, data_parallel_rank] (the publisher always sets the rank).
//   - KVCacheEvent subclasses carry tag=True (the tag is the class name,
//     under the key "type") and omit_defaults. At vLLM's golden commit
//     (bf578e1) they are not array_like, so an event is a map whose first
//     key is "type" and whose defaulted fields (extra_keys, group_idx,
//     kv_cache_spec_*) are left out when None; the fields without defaults
//     are always there, null or not. Earlier releases declared the events
//     array_like: ["BlockStored", block_hashes, parent_block_hash, ...] in
//     field order. Decode reads both; Encode writes the map form.
//   - ExternalBlockHash is bytes or int.

// MaxPayload bounds a batch payload Decode accepts; vLLM's batches are
// one engine step's events, far smaller.
const MaxPayload = 64 << 20

// ErrMalformed wraps every decoding failure.
var ErrMalformed = errors.New("kvevents: malformed KV event batch")

// Decode parses one KVEventBatch payload.
func Decode(payload []byte) (Batch, error) {
	if len(payload) > MaxPayload {
		return Batch{}, fmt.Errorf("%w: %d bytes exceeds %d", ErrMalformed, len(payload), MaxPayload)
	}
	// The library's Skip (unknown fields) and DecodeInterface (extra keys)
	// recurse once per level: the scan bounds depth and size first.
	end, err := scanValue(payload)
	if err != nil {
		return Batch{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if end != len(payload) {
		return Batch{}, fmt.Errorf("%w: trailing bytes after the batch", ErrMalformed)
	}
	// Past the scan, every count is at most the bytes left and
	// MaxElements in all: slices are made at their final length.
	b, err := decodeBatch(msgpack.NewDecoder(bytes.NewReader(payload)))
	if err != nil {
		return Batch{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return b, nil
}

func decodeBatch(d *msgpack.Decoder) (Batch, error) {
	var b Batch
	n, err := d.DecodeArrayLen()
	if err != nil {
		return b, err
	}
	if n < 2 || n > 3 {
		return b, fmt.Errorf("EventBatch has %d fields, want 2 or 3", n)
	}
	if b.TS, err = d.DecodeFloat64(); err != nil {
		return b, fmt.Errorf("ts: %w", err)
	}
	ne, err := d.DecodeArrayLen()
	if err != nil {
		return b, fmt.Errorf("events: %w", err)
	}
	if ne < 0 {
		return b, errors.New("events is null")
	}
	b.Events = make([]Event, 0, ne)
	for i := range ne {
		ev, err := decodeEvent(d)
		if err != nil {
			return b, fmt.Errorf("event %d: %w", i, err)
		}
		b.Events = append(b.Events, ev)
	}
	if n == 3 {
		if b.DataParallelRank, err = optInt(d); err != nil {
			return b, fmt.Errorf("data_parallel_rank: %w", err)
		}
	}
	return b, nil
}

// Field order of each event class (array_like form).
var eventFields = map[string][]string{
	TagBlockStored: {"block_hashes", "parent_block_hash", "token_ids", "block_size", "lora_id", "medium", "lora_name",
		"extra_keys", "group_idx", "kv_cache_spec_kind", "kv_cache_spec_sliding_window"},
	TagBlockRemoved:     {"block_hashes", "medium", "group_idx"},
	TagAllBlocksCleared: {},
}

func decodeEvent(d *msgpack.Decoder) (Event, error) {
	var ev Event
	c, err := d.PeekCode()
	if err != nil {
		return ev, err
	}
	switch {
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		n, _ := d.DecodeArrayLen()
		if n < 1 {
			return ev, errors.New("empty event array")
		}
		if ev.Tag, err = d.DecodeString(); err != nil {
			return ev, fmt.Errorf("tag: %w", err)
		}
		fields, ok := eventFields[ev.Tag]
		if !ok {
			return ev, fmt.Errorf("unknown event type %q", ev.Tag)
		}
		if n-1 > len(fields) {
			return ev, fmt.Errorf("%s has %d fields, at most %d known", ev.Tag, n-1, len(fields))
		}
		for _, f := range fields[:n-1] {
			if err := ev.decodeField(d, f); err != nil {
				return ev, fmt.Errorf("%s.%s: %w", ev.Tag, f, err)
			}
		}
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		n, _ := d.DecodeMapLen()
		for range n {
			key, err := d.DecodeString()
			if err != nil {
				return ev, fmt.Errorf("key: %w", err)
			}
			if key == "type" {
				if ev.Tag, err = d.DecodeString(); err != nil {
					return ev, fmt.Errorf("type: %w", err)
				}
				if _, ok := eventFields[ev.Tag]; !ok {
					return ev, fmt.Errorf("unknown event type %q", ev.Tag)
				}
				continue
			}
			if err := ev.decodeField(d, key); err != nil {
				return ev, fmt.Errorf("%s: %w", key, err)
			}
		}
		if ev.Tag == "" {
			return ev, errors.New(`event without "type"`)
		}
	default:
		return ev, fmt.Errorf("event is neither an array nor a map (code 0x%x)", c)
	}
	if ev.Tag == TagBlockStored && ev.BlockSize == 0 {
		return ev, errors.New("BlockStored without block_size")
	}
	if ev.Tag == TagBlockStored && len(ev.TokenIDs) != len(ev.BlockHashes)*ev.BlockSize {
		return ev, fmt.Errorf("BlockStored: %d token ids for %d blocks of %d", len(ev.TokenIDs), len(ev.BlockHashes), ev.BlockSize)
	}
	return ev, nil
}

// decodeField reads one event field; unknown fields (a newer vLLM) are
// skipped.
func (ev *Event) decodeField(d *msgpack.Decoder, name string) error {
	var err error
	switch name {
	case "block_hashes":
		ev.BlockHashes, err = decodeHashes(d)
	case "parent_block_hash":
		var isNil bool
		if isNil, err = peekNil(d); err == nil && !isNil {
			var h Hash
			h, err = decodeHash(d)
			ev.ParentBlockHash = &h
		}
	case "token_ids":
		ev.TokenIDs, err = decodeInts(d)
	case "block_size":
		var v int64
		v, err = d.DecodeInt64()
		if err == nil && (v < 1 || v > math.MaxInt32) {
			err = fmt.Errorf("%d out of range", v)
		}
		ev.BlockSize = int(v)
	case "lora_id":
		ev.LoRAID, err = optInt(d)
	case "medium":
		ev.Medium, err = optString(d)
	case "lora_name":
		ev.LoRAName, err = optString(d)
	case "extra_keys":
		ev.ExtraKeys, err = decodeExtraKeys(d)
	case "group_idx":
		ev.GroupIdx, err = optInt(d)
	case "kv_cache_spec_kind":
		ev.KVCacheSpecKind, err = optString(d)
	case "kv_cache_spec_sliding_window":
		ev.KVCacheSpecSlidingWind, err = optInt(d)
	default:
		err = d.Skip()
	}
	return err
}

func peekNil(d *msgpack.Decoder) (bool, error) {
	c, err := d.PeekCode()
	if err != nil {
		return false, err
	}
	if c == msgpcode.Nil {
		return true, d.DecodeNil()
	}
	return false, nil
}

func optInt(d *msgpack.Decoder) (*int64, error) {
	if isNil, err := peekNil(d); err != nil || isNil {
		return nil, err
	}
	v, err := d.DecodeInt64()
	return &v, err
}

func optString(d *msgpack.Decoder) (*string, error) {
	if isNil, err := peekNil(d); err != nil || isNil {
		return nil, err
	}
	v, err := d.DecodeString()
	return &v, err
}

func decodeHash(d *msgpack.Decoder) (Hash, error) {
	c, err := d.PeekCode()
	if err != nil {
		return Hash{}, err
	}
	if c == msgpcode.Bin8 || c == msgpcode.Bin16 || c == msgpcode.Bin32 {
		b, err := d.DecodeBytes()
		return Hash{Bytes: b, IsBytes: true}, err
	}
	if msgpcode.IsFixedNum(c) || (c >= msgpcode.Uint8 && c <= msgpcode.Int64) {
		if c == msgpcode.Uint64 || c == msgpcode.Uint32 || c == msgpcode.Uint16 || c == msgpcode.Uint8 {
			v, err := d.DecodeUint64()
			return Hash{Int: v}, err
		}
		v, err := d.DecodeInt64()
		return Hash{Int: uint64(v)}, err
	}
	return Hash{}, fmt.Errorf("block hash is neither bytes nor int (code 0x%x)", c)
}

func decodeHashes(d *msgpack.Decoder) ([]Hash, error) {
	n, err := d.DecodeArrayLen()
	if err != nil || n < 0 {
		return nil, err
	}
	out := make([]Hash, 0, n)
	for range n {
		h, err := decodeHash(d)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

func decodeInts(d *msgpack.Decoder) ([]int, error) {
	n, err := d.DecodeArrayLen()
	if err != nil || n < 0 {
		return nil, err
	}
	out := make([]int, 0, n)
	for range n {
		v, err := d.DecodeInt64()
		if err != nil {
			return nil, err
		}
		if v < 0 || v > math.MaxInt32 {
			return nil, fmt.Errorf("token id %d out of range", v)
		}
		out = append(out, int(v))
	}
	return out, nil
}

func decodeExtraKeys(d *msgpack.Decoder) ([][]any, error) {
	n, err := d.DecodeArrayLen()
	if err != nil || n < 0 {
		return nil, err
	}
	out := make([][]any, 0, n)
	for range n {
		m, err := d.DecodeArrayLen()
		if err != nil {
			return nil, err
		}
		if m < 0 {
			out = append(out, nil)
			continue
		}
		keys := make([]any, 0, m)
		for range m {
			v, err := d.DecodeInterface()
			if err != nil {
				return nil, err
			}
			keys = append(keys, v)
		}
		out = append(out, keys)
	}
	return out, nil
}

// Encode writes b as vLLM's publisher does (the golden commit's map-form
// events; data_parallel_rank written when set).
func Encode(b Batch) ([]byte, error) {
	var buf bytes.Buffer
	e := msgpack.NewEncoder(&buf)
	n := 2
	if b.DataParallelRank != nil {
		n = 3
	}
	must := func(err error) {
		if err != nil {
			panic(err) // a bytes.Buffer never fails a write
		}
	}
	must(e.EncodeArrayLen(n))
	must(e.EncodeFloat64(b.TS))
	must(e.EncodeArrayLen(len(b.Events)))
	for _, ev := range b.Events {
		if err := encodeEvent(e, ev); err != nil {
			return nil, err
		}
	}
	if b.DataParallelRank != nil {
		must(e.EncodeInt(*b.DataParallelRank))
	}
	return buf.Bytes(), nil
}

func encodeEvent(e *msgpack.Encoder, ev Event) error {
	type kv struct {
		key string
		put func() error
	}
	var fields []kv
	hashes := func() error { return encodeHashes(e, ev.BlockHashes) }
	switch ev.Tag {
	case TagBlockStored:
		fields = []kv{{"block_hashes", hashes},
			{"parent_block_hash", func() error {
				if ev.ParentBlockHash == nil {
					return e.EncodeNil()
				}
				return encodeHash(e, *ev.ParentBlockHash)
			}},
			{"token_ids", func() error {
				if err := e.EncodeArrayLen(len(ev.TokenIDs)); err != nil {
					return err
				}
				for _, t := range ev.TokenIDs {
					if err := e.EncodeInt(int64(t)); err != nil {
						return err
					}
				}
				return nil
			}},
			{"block_size", func() error { return e.EncodeInt(int64(ev.BlockSize)) }},
			{"lora_id", func() error { return encodeOptInt(e, ev.LoRAID) }},
			{"medium", func() error { return encodeOptString(e, ev.Medium) }},
			{"lora_name", func() error { return encodeOptString(e, ev.LoRAName) }},
		}
		if ev.ExtraKeys != nil {
			fields = append(fields, kv{"extra_keys", func() error { return e.Encode(ev.ExtraKeys) }})
		}
		if ev.GroupIdx != nil {
			fields = append(fields, kv{"group_idx", func() error { return encodeOptInt(e, ev.GroupIdx) }})
		}
	case TagBlockRemoved:
		fields = []kv{{"block_hashes", hashes}, {"medium", func() error { return encodeOptString(e, ev.Medium) }}}
		if ev.GroupIdx != nil {
			fields = append(fields, kv{"group_idx", func() error { return encodeOptInt(e, ev.GroupIdx) }})
		}
	case TagAllBlocksCleared:
	default:
		return fmt.Errorf("kvevents: cannot encode event type %q", ev.Tag)
	}
	if err := e.EncodeMapLen(1 + len(fields)); err != nil {
		return err
	}
	if err := e.EncodeString("type"); err != nil {
		return err
	}
	if err := e.EncodeString(ev.Tag); err != nil {
		return err
	}
	for _, f := range fields {
		if err := e.EncodeString(f.key); err != nil {
			return err
		}
		if err := f.put(); err != nil {
			return err
		}
	}
	return nil
}

func encodeHash(e *msgpack.Encoder, h Hash) error {
	if h.IsBytes {
		return e.EncodeBytes(h.Bytes)
	}
	return e.EncodeUint(h.Int)
}

func encodeHashes(e *msgpack.Encoder, hs []Hash) error {
	if err := e.EncodeArrayLen(len(hs)); err != nil {
		return err
	}
	for _, h := range hs {
		if err := encodeHash(e, h); err != nil {
			return err
		}
	}
	return nil
}

func encodeOptInt(e *msgpack.Encoder, v *int64) error {
	if v == nil {
		return e.EncodeNil()
	}
	return e.EncodeInt(*v)
}

func encodeOptString(e *msgpack.Encoder, v *string) error {
	if v == nil {
		return e.EncodeNil()
	}
	return e.EncodeString(*v)
}
