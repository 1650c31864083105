package kvindex

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/zeebo/xxh3"

	"github.com/vrender/vrender/features"
)

// MMItem is one multimodal item of a prompt (an image): its identifier,
// the mm_hash of the request's features (vLLM's
// MultiModalFeatureSpec.identifier), and where its placeholder tokens sit
// in the expanded prompt.
type MMItem struct {
	Hash           string
	Offset, Length int
}

// FeatureItems are a request's multimodal items as vLLM's input processor
// orders them (argsort_mm_positions): every modality's items, by
// placeholder offset. The orchestrator passes them to the router
// (fleet.Pool.StartMM) from the features it rendered.
func FeatureItems(f *features.Features) []MMItem {
	var out []MMItem
	for _, m := range f.Modalities {
		for j, h := range m.Hashes {
			p := m.Placeholders[j]
			out = append(out, MMItem{Hash: h, Offset: p.Offset, Length: p.Length})
		}
	}
	slices.SortStableFunc(out, func(a, b MMItem) int { return cmp.Compare(a.Offset, b.Offset) })
	return out
}

// MMKey is one extra key of a block that covers part of an item, as vLLM
// writes it: the tuple (identifier, offset of the item's first token
// relative to the block's first token), negative when the item began in an
// earlier block.
type MMKey struct {
	Hash   string
	Offset int
}

// MMKeys appends to dst the extra keys of the block of tokens
// [start, end), following vLLM's _gen_mm_extra_hash_keys
// (vllm/v1/core/kv_cache_utils.py at bf578e1): one (identifier, offset -
// start) per item whose placeholder overlaps the block, in prompt order.
// items must be sorted by offset and apart, as features' validators make
// them. The placeholder's is_embed mask plays no part, as in vLLM: every
// block the range touches carries the item.
func MMKeys(dst []MMKey, items []MMItem, start, end int) []MMKey {
	for _, it := range items {
		if it.Offset >= end {
			break
		}
		if it.Offset+it.Length > start {
			dst = append(dst, MMKey{Hash: it.Hash, Offset: it.Offset - start})
		}
	}
	return dst
}

// foldMM mixes a block's multimodal extra keys into its token key: two
// blocks of the same placeholder tokens (every image of one size renders to
// the same run of pad tokens) get different keys when their images differ,
// and the key chain carries that difference to every later block. A block
// without extra keys keeps its token key, so text prompts key as before.
func foldMM(buf []byte, key uint64, mm []MMKey) uint64 {
	if len(mm) == 0 {
		return key
	}
	buf = buf[:0]
	for _, m := range mm {
		buf = appendField(buf, m.Hash)
		buf = binary.LittleEndian.AppendUint64(buf, uint64(int64(m.Offset)))
	}
	return xxh3.HashSeed(buf, key)
}

// KeysMM is Keys for a prompt with multimodal items (sorted by offset, as
// MMKeys wants): a block that overlaps an item's placeholder has the item's
// MMKeys folded into its key, as vLLM folds them into its block hash. With
// no items it is Keys.
func (k Keyer) KeysMM(dst []uint64, root uint64, tokens []int, items []MMItem) []uint64 {
	if len(items) == 0 {
		return k.Keys(dst, root, tokens)
	}
	n := len(tokens) / k.blockSize
	dst = growKeys(dst, n)
	parent := root
	var extra []MMKey
	var scratch [256]byte // foldMM's bytes: a block's keys fit unless it holds several long hashes
	buf := scratch[:0]
	for i := 0; i < n; {
		start := i * k.blockSize
		extra = MMKeys(extra[:0], items, start, start+k.blockSize)
		if len(extra) > 0 {
			parent = foldMM(buf, k.Next(parent, tokens[start:start+k.blockSize]), extra)
			dst = append(dst, parent)
			i++
			continue
		}
		// The blocks before the one where MMKeys stops next (the first item
		// starting past this block) hash as text, in one run: the items
		// before that one ended before this block.
		run := n
		for _, it := range items {
			if it.Offset >= start+k.blockSize {
				run = min(n, it.Offset/k.blockSize)
				break
			}
		}
		dst = k.Keys(dst, parent, tokens[start:run*k.blockSize])
		parent = dst[len(dst)-1]
		i = run
	}
	return dst
}
