package render

import (
	"encoding/binary"
	"hash/maphash"
	"strings"
	"unicode/utf8"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/imaging"
	"github.com/vrender/vrender/internal/wire"
)

// A conversation re-sends the same pictures as data URLs every turn; a hit
// in the processed-image cache still decoded each URL's base64 and hashed
// its file for the mm_hash (blake3 of a 1.4 MB screenshot: half the CPU of
// a cached turn above the answer's write). The memo keeps, per data URL
// text and everything else its mm_hash reads, what the size path computed
// from the file, so a re-sent picture costs a fast hash and a compare of
// its text.

// memoShare is the memo's bound as a share of --mm-processor-cache-gb,
// beside the cache's own: at 4 GiB, 512 MiB of data URL text (about 190
// 1280x720 PNG screenshots; the cache holds about 1,460 of them resized).
const memoShare = 8

// memoEntryOverhead is what an entry costs besides its texts and frame:
// the entry, its list element and its map slot, roughly.
const memoEntryOverhead = 256

// memoKey is everything a memoized value depends on, as exact text: the
// data URL, and aux (memoAux): the request's mm_processor_kwargs as sent
// and the load options. The model id, hash algorithm, fetcher limits,
// processor and the server's kwargs are the renderer's, fixed for a memo.
type memoKey struct {
	url, aux string
}

// memoValue is what size computes from a data URL's file that does not
// depend on the request's kwargs beyond the key: the header's info, the
// file's length, its mm_hash and that hash's frame (never nil: only
// images whose mm_hash covers their bytes are memoized, so the cache key
// needs no bytes).
type memoValue struct {
	info  imaging.Info
	n     int
	hash  string
	frame []byte
}

// urlMemo is a byte-bounded LRU of memoValues under a seeded hash of
// their keys (features.ItemLRU): an entry keeps its key's exact text and a
// lookup compares it, so a lookup never finds another image's mm_hash, and
// a hash that collides (by chance: the per-memo seed gives a client no way
// to craft one) is a miss. The map hashes 8 bytes, not the data URL: one
// pass over the text per request instead of one per map operation and per
// table growth.
//
// A data URL seen first by a request without mm kwargs is only noted (a
// sighting, no text) and kept when it is sent again: such a request costs
// a fraction of a millisecond, of which copying the text into memory the
// process has never touched would be a third, for an image most often
// sent once (a router asking for mm_hashes). A request that decodes the
// pixels keeps the text at once: the copy is small beside its decoding.
type urlMemo struct {
	max  int64
	seed maphash.Seed
	lru  *features.ItemLRU[uint64, memoEntry]
}

// memoEntry is an image's value under its key's text, or a sighting (key
// zero: memoizable URLs are never empty).
type memoEntry struct {
	key memoKey
	v   memoValue
}

// newURLMemo returns a memo of at most max bytes, or nil (off) when max is
// not positive.
func newURLMemo(max int64) *urlMemo {
	if max <= 0 {
		return nil
	}
	return &urlMemo{max: max, seed: maphash.MakeSeed(), lru: features.NewItemLRU[uint64, memoEntry](max)}
}

// sum is k's hash in the memo: the key of get and put. It is the map's
// own hash of the key (maphash.String would hash a long text 128 bytes
// per call, four times slower).
func (m *urlMemo) sum(k memoKey) uint64 { return maphash.Comparable(m.seed, k) }

// memoAux is the memo key's text besides the URL: the request's
// mm_processor_kwargs as sent (their JSON text; absent and {} differ),
// then the load options. The uuid is not in it: an image with a uuid is
// never memoized. Kwargs with no text of their own (built by code) or
// invalid UTF-8 (whose decoding depends on the caller's parse) keep the
// request out of the memo: ok is false.
func memoAux(reqKwargs *wire.Node, opts imaging.Options) (aux string, ok bool) {
	var b []byte
	if reqKwargs == nil {
		b = append(b, 0)
	} else {
		if reqKwargs.Raw == nil || !utf8.Valid(reqKwargs.Raw) {
			return "", false
		}
		b = binary.LittleEndian.AppendUint64(append(b, 1), uint64(len(reqKwargs.Raw)))
		b = append(b, reqKwargs.Raw...)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(opts.MaxPixels))
	return string(append(b, opts.Background[:]...)), true
}

// memoizable reports whether ref's image may go through the memo: a data
// URL (whose bytes are a function of its text, unlike a fetched URL's)
// without a uuid (whose mm_hash does not cover the bytes, so the cache
// key would need them).
func memoizable(ref imageRef) bool {
	return ref.uuid == nil && len(ref.url) >= 5 && strings.EqualFold(ref.url[:5], "data:")
}

// get returns the value stored under k (sum is m.sum(k)).
func (m *urlMemo) get(k memoKey, sum uint64) (memoValue, bool) {
	e, ok := m.lru.Get(sum)
	if !ok || e.key != k {
		return memoValue{}, false
	}
	return e.v, true
}

// put stores v under k (sum is m.sum(k)) when keepNew is set or k was
// sighted before, else notes a sighting of k. The key's texts are copied:
// a request's strings may alias its body, which is not the memo's to keep.
func (m *urlMemo) put(k memoKey, sum uint64, v memoValue, keepNew bool) {
	size := int64(len(k.url)+len(k.aux)+len(v.hash)+len(v.frame)) + memoEntryOverhead
	if size > m.max {
		return
	}
	e, ok := m.lru.Get(sum)
	switch {
	case ok && e.key == k: // another request stored it meanwhile
		return
	case !ok && !keepNew:
		m.lru.Add(sum, memoEntryOverhead, memoEntry{})
		return
	}
	m.lru.Add(sum, size, memoEntry{key: memoKey{strings.Clone(k.url), strings.Clone(k.aux)}, v: v})
}

// bytes is what the memo holds, as counted against its bound.
func (m *urlMemo) bytes() int64 { return m.lru.Bytes() }
