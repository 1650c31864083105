// Package kvevents speaks vLLM's KV cache events (vllm/distributed/
// kv_events.py): the msgpack encoding of KVEventBatch and its events, and
// the ZMQ transport — a PUB socket sending (topic, 8-byte big-endian
// sequence number, payload) messages and a ROUTER socket that replays
// buffered batches from a sequence number on request.
//
// The Subscriber reads an engine's sockets with its own ZMTP 3 reader
// (zmtp.go), which treats the publisher as untrusted input: every length
// is bounded before it is allocated, every payload's nesting and size
// before it is decoded, and a peer that breaks the protocol is dropped
// and dialled again later. The Publisher (engine-sim's) uses zmq4.
package kvevents

import (
	"encoding/binary"

	"github.com/zeebo/xxh3"
)

// Event tags: msgspec's tag for each KVCacheEvent subclass is its class
// name.
const (
	TagBlockStored      = "BlockStored"
	TagBlockRemoved     = "BlockRemoved"
	TagAllBlocksCleared = "AllBlocksCleared"
)

// MediumGPU is vLLM's MEDIUM_GPU.
const MediumGPU = "GPU"

// Batch is vLLM's KVEventBatch: an EventBatch (array_like) of ts, events
// and data_parallel_rank (omitted when None).
type Batch struct {
	TS               float64
	Events           []Event
	DataParallelRank *int64
}

// Hash is vLLM's ExternalBlockHash: bytes (sha256 block hashes) or, with
// VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES (the default), their low 64 bits as
// an int.
type Hash struct {
	Int     uint64
	Bytes   []byte
	IsBytes bool
}

// IntHash is an int block hash.
func IntHash(v uint64) Hash { return Hash{Int: v} }

// Key is the hash as one 64-bit value: the int itself, or xxh3 of the
// bytes (the index only needs to tell an engine's blocks apart).
func (h Hash) Key() uint64 {
	if !h.IsBytes {
		return h.Int
	}
	if len(h.Bytes) == 8 {
		return binary.BigEndian.Uint64(h.Bytes)
	}
	return xxh3.Hash(h.Bytes)
}

// Event is one KVCacheEvent. Tag says which; the fields of the other
// kinds are zero.
type Event struct {
	Tag string
	// BlockStored and BlockRemoved.
	BlockHashes []Hash
	Medium      *string
	GroupIdx    *int64
	// BlockStored.
	ParentBlockHash *Hash
	TokenIDs        []int
	BlockSize       int
	LoRAID          *int64
	LoRAName        *string
	// ExtraKeys holds, per block, the extra hash keys vLLM folded in
	// (multimodal identifiers, LoRA name, cache_salt) as decoded msgpack
	// values; nil when omitted.
	ExtraKeys              [][]any
	KVCacheSpecKind        *string
	KVCacheSpecSlidingWind *int64
}
