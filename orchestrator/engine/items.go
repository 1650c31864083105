package engine

import (
	"slices"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/protocol"
)

// A Client with Options.MMCacheBytes leaves out the kwargs of multimodal
// items its engine holds, as vLLM's front end does for its own engine
// core: MultiModalProcessorSenderCache (vllm/multimodal/cache.py) keeps
// the hashes and sizes of the items sent, evicting as the engine's
// MultiModalReceiverCache of the same size does, and sends None for an
// item it holds; the engine fills it from its cache by mm_hash. vLLM's
// generate route takes such items over HTTP as null kwargs_data entries
// ("None → cache hit", serve_tokens), so vrender, the front end of its
// engines, does the same per engine:
//
//   - an item is recorded once the engine accepted a request carrying its
//     kwargs (its first event), under its mm_hash and msgpack size;
//   - a request's item whose hash is recorded goes as null (and is marked
//     used);
//   - an engine that lacks a null item (it restarted, or evicted it)
//     fails the request before scheduling it, with the error event vLLM's
//     generate streams (its receiver cache's MultiModalCacheMissError; the
//     front end then drops what it recorded and the caller resends the
//     data): the client forgets everything it recorded of that engine and
//     sends the request again with every item's data, once, so the
//     client of vrender never sees the miss.
//
// It is off (every item sent with its data) unless the engine's cache is
// known: vLLM has one only with --mm-processor-cache-type lru (the
// default) under one API process and one data-parallel rank or external
// load balancing, and an engine without one fails on null items.

// itemsSent is what a request sends of its multimodal items.
type itemsSent struct {
	// nulled are the hashes of items sent as null.
	nulled []string
	// brought are the items sent with their kwargs.
	brought []heldItem
}

type heldItem struct {
	hash string
	size int64
}

// leaveCached returns req with the kwargs of the items the engine holds
// left null, and what it sends of its items; req itself when the client
// records nothing or the request brings no kwargs.
func (c *Client) leaveCached(req *protocol.GenerateRequest) (*protocol.GenerateRequest, itemsSent) {
	if c.items == nil {
		return req, itemsSent{}
	}
	lean, sent := leaveOut(req, func(h string) bool { _, held := c.items.Get(h); return held })
	if lean == nil {
		return req, sent
	}
	r := *req
	r.SetFeatures(lean)
	return &r, sent
}

// allBrought is what req sends of its items with every item's kwargs.
func allBrought(req *protocol.GenerateRequest) itemsSent {
	_, sent := leaveOut(req, func(string) bool { return false })
	return sent
}

// leaveOut returns req's features with the kwargs of the items held
// reports left null (nil when it leaves none out), and what they send of
// their items.
func leaveOut(req *protocol.GenerateRequest, held func(hash string) bool) (*features.Features, itemsSent) {
	f, ok := req.FeaturesWriter().(*features.Features)
	if !ok || !f.KwargsData {
		return nil, itemsSent{}
	}
	var sent itemsSent
	var lean *features.Features
	var copied []bool // the modalities whose Kwargs lean has its own copy of
	for i, m := range f.Modalities {
		for j, h := range m.Hashes {
			if j >= len(m.Kwargs) || m.Kwargs[j].IsNull() {
				continue
			}
			if !held(h) {
				sent.brought = append(sent.brought, heldItem{hash: h, size: int64(m.Kwargs[j].Len())})
				continue
			}
			if lean == nil {
				cp := *f
				cp.Modalities = slices.Clone(f.Modalities)
				lean, copied = &cp, make([]bool, len(f.Modalities))
			}
			if !copied[i] {
				lean.Modalities[i].Kwargs, copied[i] = slices.Clone(m.Kwargs), true
			}
			lean.Modalities[i].Kwargs[j] = features.ItemBytes{}
			sent.nulled = append(sent.nulled, h)
		}
	}
	return lean, sent
}

// ItemStats are a client's counts of multimodal items it left to the
// engine's cache.
type ItemStats struct {
	// Null is how many items went as null kwargs, Resends how many
	// requests the engine failed for lacking one and got again with the
	// data.
	Null, Resends int64
}

// ItemStats returns the client's counts so far.
func (c *Client) ItemStats() ItemStats {
	return ItemStats{Null: c.nullItems.Load(), Resends: c.itemResends.Load()}
}

// ForgetItems drops the record of what the engine holds, so that the next
// requests send every item's data: for an engine that may have lost its
// cache (restarted, or ejected from its pool and maybe replaced).
func (c *Client) ForgetItems() {
	if c.items != nil {
		c.items.Clear()
	}
}

// record notes the items a request the engine accepted brought.
func (c *Client) record(items []heldItem) {
	for _, it := range items {
		c.items.Add(it.hash, it.size, struct{}{})
	}
}
