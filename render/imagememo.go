package render

import (
	clist "container/list"
	"encoding/binary"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/zeebo/xxh3"

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
// 1280x720 PNG screenshots; the cache holds about 270 of their processed
// images).
const memoShare = 8

// memoBucket bounds the entries that share a fast hash: a lookup compares
// at most that many texts, however many colliding keys a client crafts
// (xxh3 resists accidents, not adversaries).
const memoBucket = 4

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

type memoEntry struct {
	key  memoKey
	sum  uint64
	val  memoValue
	size int64
}

// urlMemo is a byte-bounded LRU of memoValues. A lookup finds candidates
// by a fast hash of the key and confirms one by comparing the whole key,
// so a hash collision is a miss, never another image's mm_hash. Entries
// are immutable once stored; eviction only unlinks them.
type urlMemo struct {
	mu    sync.Mutex
	max   int64
	used  int64
	byKey map[uint64][]*clist.Element
	lru   clist.List // front: most recently used; values *memoEntry
	// sum is xxh3 of the key; tests replace it to force collisions.
	sum func(memoKey) uint64
}

// newURLMemo returns a memo of at most max bytes, or nil (off) when max is
// not positive.
func newURLMemo(max int64) *urlMemo {
	if max <= 0 {
		return nil
	}
	return &urlMemo{max: max, byKey: map[uint64][]*clist.Element{}, sum: memoSum}
}

func memoSum(k memoKey) uint64 {
	return xxh3.HashStringSeed(k.aux, xxh3.HashString(k.url))
}

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

func (m *urlMemo) get(k memoKey) (memoValue, bool) {
	sum := m.sum(k)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, el := range m.byKey[sum] {
		e := el.Value.(*memoEntry)
		if e.key == k {
			m.lru.MoveToFront(el)
			return e.val, true
		}
	}
	return memoValue{}, false
}

// put stores v under k. The key's texts are copied: a request's strings
// may alias its body, which is not the memo's to keep.
func (m *urlMemo) put(k memoKey, v memoValue) {
	size := int64(len(k.url)+len(k.aux)+len(v.hash)+len(v.frame)) + memoEntryOverhead
	if size > m.max {
		return
	}
	sum := m.sum(k)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, el := range m.byKey[sum] {
		if el.Value.(*memoEntry).key == k {
			m.lru.MoveToFront(el)
			return
		}
	}
	if len(m.byKey[sum]) >= memoBucket {
		m.evict(m.byKey[sum][0]) // the bucket's oldest
	}
	e := &memoEntry{key: memoKey{strings.Clone(k.url), strings.Clone(k.aux)}, sum: sum, val: v, size: size}
	m.byKey[sum] = append(m.byKey[sum], m.lru.PushFront(e))
	m.used += size
	for m.used > m.max {
		m.evict(m.lru.Back())
	}
}

func (m *urlMemo) evict(el *clist.Element) {
	e := m.lru.Remove(el).(*memoEntry)
	m.used -= e.size
	bucket := m.byKey[e.sum]
	for i, b := range bucket {
		if b == el {
			bucket = append(bucket[:i], bucket[i+1:]...)
			break
		}
	}
	if len(bucket) == 0 {
		delete(m.byKey, e.sum)
	} else {
		m.byKey[e.sum] = bucket
	}
}

// bytes is what the memo holds, as counted against its bound.
func (m *urlMemo) bytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used
}
