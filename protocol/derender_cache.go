package protocol

import (
	"crypto/sha256"

	"github.com/vrender/vrender/internal/wire"
)

// ChatRequestCache holds decoded chat requests by the SHA-256 of their raw
// JSON. A streaming derender client re-sends the same chat_request on
// every call; decoding and validating it (messages, tools) costs more than
// the one token the call derenders, and identical bytes always decode to
// the same request and the same errors. Cached requests are shared: no
// caller may modify a decoded ChatCompletionRequest.
type ChatRequestCache interface {
	Get(key [sha256.Size]byte) (*ChatCompletionRequest, bool)
	Add(key [sha256.Size]byte, r *ChatCompletionRequest)
}

// MaxCachedChatRequest bounds the raw size of a cached chat request, so a
// cache of a few hundred entries stays small; larger ones are decoded on
// every call (their decode dwarfs a digest anyway).
const MaxCachedChatRequest = 64 << 10

// DecodeDerenderChatTree is DecodeDerenderChat for the tree ParseJSONTree
// decoded from body (nil: an empty body), so the body is not scanned
// again, with chat_request decodes looked up in, and added to, cache (nil:
// no cache). Only successful decodes are cached, so every error is
// reported exactly as without it.
func DecodeDerenderChatTree(body []byte, root *wire.Node, cache ChatRequestCache) (*DerenderChatRequest, *DerenderChatStreamRequest, error) {
	obj, fe := derenderTree(root, body, "DerenderChatRequest")
	return derenderChatOf(obj, fe, cache)
}

// decodeChatRequestCached decodes raw through cache.
func decodeChatRequestCached(raw []byte, cache ChatRequestCache) (*ChatCompletionRequest, error) {
	if cache == nil || len(raw) > MaxCachedChatRequest {
		return DecodeChatCompletionRequest(raw)
	}
	key := sha256.Sum256(raw)
	if r, ok := cache.Get(key); ok {
		return r, nil
	}
	r, err := DecodeChatCompletionRequest(raw)
	if err == nil {
		cache.Add(key, r)
	}
	return r, err
}
