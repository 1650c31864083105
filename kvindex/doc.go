// Package kvindex knows which engine holds which prompt prefix in its KV
// cache, so a router can send a request where its prefix is already
// computed.
//
// A prompt is cut into fixed-size blocks of token ids (the engine's block
// size, vLLM's 16 by default) and each full block gets a 64-bit key
// chained over its parent's, so one key names the whole prefix up to and
// including its block (see Keyer); a block that overlaps an image's
// placeholder also carries the image's mm_hash, as vLLM's block hashes do
// (MMKeys, KeysMM). The Index records, per engine, which
// keys it holds: confirmed ones from the engine's KV events (BlockStored,
// BlockRemoved, AllBlocksCleared, mapped from the engine's own opaque block
// hashes to these keys through the token ids the events carry, as llm-d's
// kv-cache manager does) and predicted ones for every request routed there,
// which expire after a TTL unless an event confirms them. Each engine's
// entries are bounded by an LRU, so the index cannot grow without limit.
package kvindex
