package fleet

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync"

	"github.com/vrender/vrender/kvevents"
	"github.com/vrender/vrender/kvindex"
)

// KVEventSource is where one engine publishes its KV cache events (vllm
// serve --kv-events-config): the PUB endpoint, and the replay endpoint
// that fills gaps.
type KVEventSource struct {
	// Engine is the engine's base URL as its pool has it.
	Engine                   string
	Endpoint, ReplayEndpoint string
	Topic                    string
}

// RunKVEvents follows every source's events into the prefix index until
// ctx is done. Each engine's events are applied in sequence order; an
// engine whose sequence starts again (a restart) loses its entries; gaps
// the replay socket cannot fill, restarts and publishers dropped for
// breaking the protocol are counted on /metrics.
func (r *Router) RunKVEvents(ctx context.Context, sources []KVEventSource, log *slog.Logger) error {
	if r.index == nil {
		return errors.New("fleet: KV events need prefix routing")
	}
	if log == nil {
		log = slog.Default()
	}
	var subs []*kvevents.Subscriber
	for _, src := range sources {
		engine := strings.TrimRight(src.Engine, "/")
		sub, err := kvevents.NewSubscriber(kvevents.SubscriberConfig{
			Endpoint: src.Endpoint, ReplayEndpoint: src.ReplayEndpoint, Topic: src.Topic, Logger: log,
			Apply:     func(_ int64, b kvevents.Batch) { r.applyKVEvents(engine, b, log) },
			Restarted: func() { r.restarts.Add(1); r.index.Clear(engine) },
			Lost:      r.eventsLost,
			Dropped:   func() { r.dropped.Add(1) },
		})
		if err != nil {
			return err
		}
		subs = append(subs, sub)
	}
	var wg sync.WaitGroup
	for _, s := range subs {
		wg.Go(func() { _ = s.Run(ctx) })
	}
	wg.Wait()
	return nil
}

// applyKVEvents applies one engine's batch to the index. Only blocks of
// the GPU medium (or none given) and of the first KV cache group count:
// a CPU-offloaded copy or a hybrid model's other groups say nothing about
// the attention blocks prefill would reuse.
func (r *Router) applyKVEvents(engine string, b kvevents.Batch, log *slog.Logger) {
	r.events.Add(1)
	for _, ev := range b.Events {
		if ev.Medium != nil && *ev.Medium != kvevents.MediumGPU || ev.GroupIdx != nil && *ev.GroupIdx != 0 {
			continue
		}
		switch ev.Tag {
		case kvevents.TagBlockStored:
			if ev.LoRAID != nil && ev.LoRAName == nil {
				// An adapter's blocks named only by its engine-local id
				// (releases before lora_name): they cannot be put in the
				// adapter's key space, and must not land in the base
				// model's.
				r.unmapped.Add(int64(len(ev.BlockHashes)))
				continue
			}
			st := kvindex.StoredBlocks{Hashes: make([]uint64, len(ev.BlockHashes)), Tokens: ev.TokenIDs, BlockSize: ev.BlockSize}
			for i, h := range ev.BlockHashes {
				st.Hashes[i] = h.Key()
			}
			if ev.ParentBlockHash != nil {
				st.Parent, st.HasParent = ev.ParentBlockHash.Key(), true
			}
			if ev.LoRAName != nil {
				st.LoRA = *ev.LoRAName
			}
			if !st.HasParent && len(ev.ExtraKeys) > 0 {
				st.CacheSalt = cacheSalt(ev.ExtraKeys[0], st.LoRA)
			}
			mm, ok := mmKeys(ev.ExtraKeys, len(ev.BlockHashes))
			if !ok {
				// Extra keys that do not say which images their blocks
				// hold: keying the blocks as text would let a text prompt
				// (or another image) match them.
				r.unmapped.Add(int64(len(ev.BlockHashes)))
				log.Debug("KV event blocks not indexed: unreadable extra_keys", "engine", engine)
				continue
			}
			st.MM = mm
			if err := r.index.Store(engine, st); err != nil {
				r.unmapped.Add(int64(len(st.Hashes)))
				log.Debug("KV event blocks not indexed", "engine", engine, "err", err)
			}
		case kvevents.TagBlockRemoved:
			hs := make([]uint64, len(ev.BlockHashes))
			for i, h := range ev.BlockHashes {
				hs[i] = h.Key()
			}
			r.index.Remove(engine, hs)
		case kvevents.TagAllBlocksCleared:
			r.index.Clear(engine)
		}
	}
}

// cacheSalt finds the cache_salt among a prompt's first block's extra
// keys, which vLLM lays out as LoRA name, multimodal identifiers,
// cache_salt, prompt-embedding hashes (kv_cache_utils.
// generate_block_hash_extra_keys): the last string that is not the LoRA
// name (a multimodal identifier is a (mm_hash, offset) pair, not a string).
func cacheSalt(keys []any, lora string) string {
	for i := len(keys) - 1; i >= 0; i-- {
		if s, ok := keys[i].(string); ok && s != lora {
			return s
		}
	}
	return ""
}

// mmKeys reads each block's multimodal extra keys from an event's
// extra_keys: vLLM writes one entry per block (nil when the block has
// none) holding the LoRA name, then one (identifier, offset in the block)
// pair per image the block overlaps (_gen_mm_extra_hash_keys; a tuple is a
// msgpack array), then the salt and prompt-embedding hashes. nil when no
// block has such a pair; !ok when extra_keys has another length than the
// event's blocks while holding pairs, or a pair is malformed.
func mmKeys(extra [][]any, blocks int) (mm [][]kvindex.MMKey, ok bool) {
	for i, keys := range extra {
		for _, k := range keys {
			pair, isPair := k.([]any)
			if !isPair {
				continue
			}
			if len(extra) != blocks {
				return nil, false
			}
			if len(pair) != 2 {
				return nil, false
			}
			h, okH := pair[0].(string)
			off, okO := msgpackInt(pair[1])
			if !okH || !okO {
				return nil, false
			}
			if mm == nil {
				mm = make([][]kvindex.MMKey, blocks)
			}
			mm[i] = append(mm[i], kvindex.MMKey{Hash: h, Offset: off})
		}
	}
	return mm, true
}

// msgpackInt is an integer as the msgpack decoder hands it out (its
// smallest Go type), within ±2^40 (an offset in a prompt).
func msgpackInt(v any) (int, bool) {
	var n int64
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n = rv.Int()
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if rv.Uint() > 1<<40 {
			return 0, false
		}
		n = int64(rv.Uint())
	default:
		return 0, false
	}
	if n > 1<<40 || n < -(1<<40) {
		return 0, false
	}
	return int(n), true
}
