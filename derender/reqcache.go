package derender

import (
	"crypto/sha256"
	"sync"
	"sync/atomic"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
)

// chatRequestCacheSize is how many decoded chat requests an engine keeps:
// one per concurrent stream is enough, since a stream re-sends the same
// chat_request on every call.
const chatRequestCacheSize = 512

// requestCache is the engine's protocol.ChatRequestCache. For the
// requests it holds it also keeps what the parsers read of them (their
// chat_template_kwargs decoded), so a stream's calls build it once, not
// per token.
type requestCache struct {
	c            *lru.Cache[[sha256.Size]byte, *protocol.ChatCompletionRequest]
	hits, misses atomic.Int64
	// mu guards derived and every Add (the eviction callback runs inside
	// Add, so it edits derived with mu already held). A request is a key
	// exactly while c holds it; the value is nil until first asked for.
	mu      sync.Mutex
	derived map[*protocol.ChatCompletionRequest]*parsers.Request
}

func newRequestCache() *requestCache {
	r := &requestCache{derived: map[*protocol.ChatCompletionRequest]*parsers.Request{}}
	c, err := lru.NewWithEvict(chatRequestCacheSize, func(_ [sha256.Size]byte, req *protocol.ChatCompletionRequest) {
		delete(r.derived, req)
	})
	if err != nil {
		panic("derender: request cache: " + err.Error()) // only for a size <= 0
	}
	r.c = c
	return r
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
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.c.Peek(key); ok && old != req {
		delete(r.derived, old) // replaced without an eviction
	}
	r.c.Add(key, req)
	if _, ok := r.derived[req]; !ok {
		r.derived[req] = nil
	}
}

// parserRequest is parserRequest(cr), decoded once while the cache holds
// cr (cached requests are never modified) and on every call otherwise.
// Errors are not kept: they are reported again, the same.
func (r *requestCache) parserRequest(cr *protocol.ChatCompletionRequest) (*parsers.Request, error) {
	r.mu.Lock()
	preq, held := r.derived[cr]
	r.mu.Unlock()
	if preq != nil {
		return preq, nil
	}
	preq, err := parserRequest(cr)
	if err != nil || !held {
		return preq, err
	}
	r.mu.Lock()
	if _, still := r.derived[cr]; still {
		r.derived[cr] = preq
	}
	r.mu.Unlock()
	return preq, nil
}

// RequestCache is the engine's cache of decoded chat requests, for the
// server's decoding of streaming derender bodies
// (protocol.DecodeDerenderChatTree). The engine never modifies a chat
// request, so sharing decoded ones between calls is safe.
func (e *Engine) RequestCache() protocol.ChatRequestCache { return e.reqCache }

// RequestCacheStats reports how many streaming chat derender calls found
// their chat_request decoded in the cache (hits) and how many decoded it
// (misses).
func (e *Engine) RequestCacheStats() (hits, misses int64) {
	return e.reqCache.hits.Load(), e.reqCache.misses.Load()
}
