package kvindex

import (
	"encoding/binary"
	"math/bits"

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
//
// A block's key is xxh3-64, seeded with its parent's key, of its token ids
// as 4-byte little-endian words (token ids are vocabulary indices, far
// below 2^32; an id outside that range is taken modulo 2^32, which can
// only make two prompts share a key, never fail).
func (k Keyer) Keys(dst []uint64, root uint64, tokens []int) []uint64 {
	n := len(tokens) / k.blockSize
	dst = growKeys(dst, n)
	if k.blockSize == DefaultBlockSize {
		return keys16(dst, root, tokens[:16*n])
	}
	parent := root
	var scratch [4 * 64]byte
	buf := scratch[:0]
	if 4*k.blockSize > len(scratch) {
		buf = make([]byte, 0, 4*k.blockSize)
	}
	for i := range n {
		parent = keyPacked(buf, parent, tokens[i*k.blockSize:(i+1)*k.blockSize])
		dst = append(dst, parent)
	}
	return dst
}

// growKeys makes room for n more keys in one allocation at most.
func growKeys(dst []uint64, n int) []uint64 {
	if cap(dst)-len(dst) < n {
		dst = append(make([]uint64, 0, len(dst)+n), dst...)
	}
	return dst
}

// Next is the key of one block of exactly BlockSize tokens whose parent key
// is parent: Keys block by block, for the token ids KV events carry.
func (k Keyer) Next(parent uint64, block []int) uint64 {
	if len(block) == DefaultBlockSize {
		var out [1]uint64
		return keys16(out[:0], parent, block)[0]
	}
	var scratch [4 * 64]byte
	buf := scratch[:0]
	if 4*len(block) > len(scratch) {
		buf = make([]byte, 0, 4*len(block))
	}
	return keyPacked(buf, parent, block)
}

// keyPacked is the key of block under parent by the definition: the ids
// packed into buf (reused; its contents are overwritten) and hashed.
func keyPacked(buf []byte, parent uint64, block []int) uint64 {
	buf = buf[:0]
	for _, id := range block {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(id))
	}
	return xxh3.HashSeed(buf, parent)
}

// xxh3 constants: the first 64 bytes of its default secret, and the
// length times its first 64-bit prime for 64 bytes (mod 2^64).
const (
	secret00   = 0xbe4ba423396cfeb8
	secret08   = 0x1cad21f72c81017c
	secret16   = 0xdb979083e96dd4de
	secret24   = 0x1f67b3b7a4a44072
	secret32   = 0x78e5c0cc4ee679cb
	secret40   = 0x2172ffcc7dd05a82
	secret48   = 0x8e2443f7744608b8
	secret56   = 0x4c263a81e69035e0
	len64Prime = 0x8dde6c617af2a1c0 // 64 * 11400714785074694791
)

// keys16 is Keys for blocks of 16 ids (len(tokens) a multiple of 16, room
// in dst for their keys), without the copy keyPacked makes: xxh3-64's path
// for 17-128 bytes unrolled for exactly 64, each 8-byte word of the packed
// ids read straight from two ids. Every routing decision hashes the whole
// prompt, and this halves the multiplications of hashing the ids in their
// 8-byte form; the hash is written into the loop because the compiler
// does not inline it, and a call per block spills the loop's registers (5
// to 7 % slower). TestKey16IsXXH3 holds it to the library.
func keys16(dst []uint64, parent uint64, tokens []int) []uint64 {
	out := dst[len(dst) : len(dst)+len(tokens)/16]
	for i := range out {
		b := (*[16]int)(tokens[16*i:])
		w0 := uint64(uint32(b[0])) | uint64(uint32(b[1]))<<32
		w1 := uint64(uint32(b[2])) | uint64(uint32(b[3]))<<32
		w2 := uint64(uint32(b[4])) | uint64(uint32(b[5]))<<32
		w3 := uint64(uint32(b[6])) | uint64(uint32(b[7]))<<32
		w4 := uint64(uint32(b[8])) | uint64(uint32(b[9]))<<32
		w5 := uint64(uint32(b[10])) | uint64(uint32(b[11]))<<32
		w6 := uint64(uint32(b[12])) | uint64(uint32(b[13]))<<32
		w7 := uint64(uint32(b[14])) | uint64(uint32(b[15]))<<32
		acc := uint64(len64Prime)
		acc += mulFold(w2^(secret32+parent), w3^(secret40-parent))
		acc += mulFold(w4^(secret48+parent), w5^(secret56-parent))
		acc += mulFold(w0^(secret00+parent), w1^(secret08-parent))
		acc += mulFold(w6^(secret16+parent), w7^(secret24-parent))
		acc ^= acc >> 37
		acc *= 0x165667919e3779f9
		parent = acc ^ acc>>32
		out[i] = parent
	}
	return dst[:len(dst)+len(out)]
}

func mulFold(x, y uint64) uint64 {
	hi, lo := bits.Mul64(x, y)
	return hi ^ lo
}
