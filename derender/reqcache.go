package derender

import (
	"crypto/sha256"
	"sync/atomic"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/vrender/vrender/protocol"
)

// chatRequestCacheSize is how many decoded chat requests an engine keeps:
// one per concurrent stream is enough, since a stream re-sends the same
// chat_request on every call.
const chatRequestCacheSize = 512

// requestCache is the engine's protocol.ChatRequestCache.
type requestCache struct {
	c            *lru.Cache[[sha256.Size]byte, *protocol.ChatCompletionRequest]
	hits, misses atomic.Int64
}

func newRequestCache() *requestCache {
	c, err := lru.New[[sha256.Size]byte, *protocol.ChatCompletionRequest](chatRequestCacheSize)
	if err != nil {
		panic("derender: request cache: " + err.Error()) // only for a size <= 0
	}
	return &requestCache{c: c}
}

func (r *requestCache) Get(key [sha256.Size]byte) (*protocol.ChatCompletionRequest, bool) {
	req, ok := r.c.Get(key)
	if ok {
		r.hits.Add(1)
	} else {
		r.misses.Add(1)
	}
	return req, ok
}

func (r *requestCache) Add(key [sha256.Size]byte, req *protocol.ChatCompletionRequest) {
	r.c.Add(key, req)
}

// RequestCache is the engine's cache of decoded chat requests, for the
// server's decoding of streaming derender bodies
// (protocol.DecodeDerenderChatCached). The engine never modifies a chat
// request, so sharing decoded ones between calls is safe.
func (e *Engine) RequestCache() protocol.ChatRequestCache { return e.reqCache }

// RequestCacheStats reports how many streaming chat derender calls found
// their chat_request decoded in the cache (hits) and how many decoded it
// (misses).
func (e *Engine) RequestCacheStats() (hits, misses int64) {
	return e.reqCache.hits.Load(), e.reqCache.misses.Load()
}
