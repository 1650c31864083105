package enginesim

import (
	"crypto/rand"
	"encoding/binary"

	"github.com/zeebo/xxh3"

	"github.com/vrender/vrender/features"
)

// decodedItemBytes bounds the bytes the decoded-item memo holds: the items
// of a few hundred images of a megapixel. vLLM's engine keeps the items it
// received too (its receiver cache, --mm-processor-cache-gb 4 by default);
// this is a quarter of that.
const decodedItemBytes = 1 << 30

// decodedItems remembers the bytes of the kwargs and metadata items the
// engine decoded, under their base64 text: a client re-sends a
// conversation's pictures with every turn, and decoding a picture's
// megabytes of base64 again, the same text to the same bytes, was most of
// engine-sim's CPU per turn. The text is known by its length and a 128-bit
// xxh3 under a seed drawn per process (a client cannot aim a collision at
// a seed it does not know), hashed some thirty times faster than it
// decodes. A text that does not decode is never remembered: its error
// comes from decoding it every time. The bytes are shared by every request
// that sends the text and only read (features' readers alias them).
type decodedItems struct {
	seed  uint64
	limit int
	lru   *features.ItemLRU[itemTextKey, []byte]
}

type itemTextKey struct {
	n    int
	hash xxh3.Uint128
}

// newDecodedItems keeps up to limit bytes; 0 keeps nothing (every text is
// decoded).
func newDecodedItems(limit int) *decodedItems {
	var seed [8]byte
	_, _ = rand.Read(seed[:]) // never fails (crypto/rand panics rather than return an error)
	return &decodedItems{seed: binary.LittleEndian.Uint64(seed[:]), limit: limit,
		lru: features.NewItemLRU[itemTextKey, []byte](int64(limit))}
}

// decode is features.DecodeBase64, looked up first.
func (d *decodedItems) decode(text string) ([]byte, error) {
	if d.limit <= 0 || len(text) > d.limit {
		return features.DecodeBase64(text)
	}
	key := itemTextKey{len(text), xxh3.HashString128Seed(text, d.seed)}
	if b, ok := d.lru.Get(key); ok {
		return b, nil
	}
	b, err := features.DecodeBase64(text)
	if err != nil {
		return nil, err
	}
	// A request that decoded the same text meanwhile made the same bytes:
	// either copy may stay.
	d.lru.Add(key, int64(len(b)), b)
	return b, nil
}
