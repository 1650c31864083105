// Package imgcache keeps processed images so that a client re-sending the
// same picture (an agent's screenshot, every turn) pays for decoding and
// processing once: vLLM's multi-modal processor cache
// (--mm-processor-cache-gb), which vLLM's render server runs with off.
//
// A Cache is an LRU bounded in bytes, split into shards that each have
// their own lock, so concurrent requests rarely wait on each other and a
// hit costs a map lookup and two pointer moves. Concurrent misses of one
// key run the fill once and share its result (single flight). Values are
// shared, never copied: callers must treat them as read-only.
//
// The cache knows nothing of images: its caller decides the Key, a digest
// of everything that changes the value, so that a hit is always exact.
package imgcache
