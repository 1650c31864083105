package enginesim

import (
	"log/slog"
	"time"

	"github.com/vrender/vrender/kvevents"
	"github.com/vrender/vrender/kvindex"
)

// EventPublisher sends KV event batches (kvevents.Publisher: vLLM's ZMQ
// wire format).
type EventPublisher interface {
	Publish(kvevents.Batch) error
}

// storedEvent is one BlockStored: the blocks a prefill added.
type storedEvent struct {
	hashes    []uint64
	parent    uint64
	hasParent bool
	tokens    []int
	blockSize int
	salt      string // the first block's cache salt ("" when none, or not the prompt's first block)
	lora      string // the adapter's name ("" for the base model)
	loraID    int64
	mm        [][]kvindex.MMKey // per block, the images it overlaps
}

// eventSink turns prefix-cache changes into vLLM's events, one batch per
// change as vLLM sends one per engine step.
type eventSink struct {
	pub EventPublisher
	log *slog.Logger
	now func() time.Time
}

func (e *eventSink) publish(st *storedEvent, removed []uint64, cleared bool) {
	medium := kvevents.MediumGPU
	var evs []kvevents.Event
	if cleared {
		evs = append(evs, kvevents.Event{Tag: kvevents.TagAllBlocksCleared})
	}
	if st != nil {
		ev := kvevents.Event{Tag: kvevents.TagBlockStored, BlockHashes: intHashes(st.hashes), TokenIDs: st.tokens,
			BlockSize: st.blockSize, Medium: &medium}
		if st.hasParent {
			p := kvevents.IntHash(st.parent)
			ev.ParentBlockHash = &p
		}
		if st.lora != "" {
			// vLLM's BlockStored names the adapter by lora_name and its
			// engine-local lora_id (vllm/v1/core/block_pool.py
			// _build_block_stored_event).
			name, id := st.lora, st.loraID
			ev.LoRAName, ev.LoRAID = &name, &id
		}
		ev.ExtraKeys = st.extraKeys()
		evs = append(evs, ev)
	}
	if len(removed) > 0 {
		evs = append(evs, kvevents.Event{Tag: kvevents.TagBlockRemoved, BlockHashes: intHashes(removed), Medium: &medium})
	}
	if len(evs) == 0 {
		return
	}
	ts := float64(e.now().UnixNano()) / 1e9
	if err := e.pub.Publish(kvevents.Batch{TS: ts, Events: evs}); err != nil {
		e.log.Warn("enginesim: KV events not published", "err", err)
	}
}

func intHashes(hs []uint64) []kvevents.Hash {
	out := make([]kvevents.Hash, len(hs))
	for i, h := range hs {
		out[i] = kvevents.IntHash(h)
	}
	return out
}

// extraKeys are the event's extra_keys as vLLM writes them
// (block_pool.cache_full_blocks): per block, the tuple
// generate_block_hash_extra_keys made — the adapter's name, one (mm_hash,
// offset in the block) pair per image the block overlaps, the cache salt on
// the prompt's first block — or None for a block with none. The list has
// an entry per block even when every entry is None.
func (st *storedEvent) extraKeys() [][]any {
	out := make([][]any, len(st.hashes))
	for i := range st.hashes {
		var keys []any
		if st.lora != "" {
			keys = append(keys, st.lora)
		}
		if i < len(st.mm) {
			for _, k := range st.mm[i] {
				keys = append(keys, []any{k.Hash, k.Offset})
			}
		}
		if i == 0 && st.salt != "" {
			keys = append(keys, st.salt)
		}
		out[i] = keys
	}
	return out
}
