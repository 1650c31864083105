package kvindex

import (
	"encoding/binary"
	"unsafe"

	"github.com/zeebo/xxh3"
)

// DefaultBlockSize is vLLM's default --block-size.
const DefaultBlockSize = 16

// Keyer computes block keys. The zero value is not usable: use NewKeyer.
type Keyer struct {
	blockSize int
	model     string
}

// NewKeyer returns a Keyer for blocks of blockSize tokens (DefaultBlockSize
// when 0 or less) on the served model (part of every key, so that two
// models' caches never match).
func NewKeyer(blockSize int, model string) Keyer {
	if blockSize <= 0 {
		blockSize = DefaultBlockSize
	}
	return Keyer{blockSize: blockSize, model: model}
}

// BlockSize is the number of tokens per block.
func (k Keyer) BlockSize() int { return k.blockSize }

// Root is the parent key of a prompt's first block: the model, the LoRA
// adapter and the cache salt, which vLLM folds into its block hashes too
// (a salted or LoRA prompt must never match another's blocks).
func (k Keyer) Root(lora, cacheSalt string) uint64 {
	b := make([]byte, 0, len(k.model)+len(lora)+len(cacheSalt)+12)
	b = appendField(b, k.model)
	b = appendField(b, lora)
	b = appendField(b, cacheSalt)
	return xxh3.Hash(b)
}

func appendField(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// Keys appends to dst the keys of the full blocks of tokens, chained from
// root: key i names tokens[:(i+1)*BlockSize]. A trailing partial block has
// no key, as vLLM only caches full blocks. The work is one pass over the
// prompt.
func (k Keyer) Keys(dst []uint64, root uint64, tokens []int) []uint64 {
	n := len(tokens) / k.blockSize
	parent := root
	for i := range n {
		parent = xxh3.HashSeed(intBytes(tokens[i*k.blockSize:(i+1)*k.blockSize]), parent)
		dst = append(dst, parent)
	}
	return dst
}

// Next is the key of one block of exactly BlockSize tokens whose parent key
// is parent: Keys block by block, for the token ids KV events carry.
func (k Keyer) Next(parent uint64, block []int) uint64 {
	return xxh3.HashSeed(intBytes(block), parent)
}

// intBytes is the memory of ids, hashed as it is: keys never leave the
// process (requests and events are keyed by the same code on the same
// machine), so the in-memory layout is as good as a portable encoding and
// saves a copy of every 32k-token prompt per decision.
func intBytes(ids []int) []byte {
	if len(ids) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&ids[0])), len(ids)*int(unsafe.Sizeof(ids[0])))
}
