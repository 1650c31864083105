package features

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/zeebo/blake3"

	"github.com/vrender/vrender/internal/wire"
)

// Algorithm is VLLM_MM_HASHER_ALGORITHM.
type Algorithm string

const (
	Blake3 Algorithm = "blake3" // vLLM's default
	SHA256 Algorithm = "sha256"
	SHA512 Algorithm = "sha512"
)

// ParseAlgorithm reads VLLM_MM_HASHER_ALGORITHM's value (any case, as
// vLLM lowercases it); "" is the default, blake3.
func ParseAlgorithm(s string) (Algorithm, error) {
	switch a := Algorithm(strings.ToLower(s)); a {
	case "":
		return Blake3, nil
	case Blake3, SHA256, SHA512:
		return a, nil
	}
	return "", fmt.Errorf("features: VLLM_MM_HASHER_ALGORITHM=%q: not one of blake3, sha256, sha512", s)
}

func (a Algorithm) new() hash.Hash {
	switch a {
	case SHA256:
		return sha256.New()
	case SHA512:
		return sha512.New()
	}
	return blake3.New()
}

// Hasher computes mm_hashes as vLLM's MultiModalHasher.hash_kwargs, called
// from ProcessorInputs.get_mm_hashes (bf578e1).
type Hasher struct {
	// ModelID is model_config.model: the --model value (a path or hub
	// id), not the served model name.
	ModelID   string
	Algorithm Algorithm // zero: blake3
}

// ImageHash returns one image's mm_hash. file is the image's original
// encoded bytes (vLLM's MediaWithBytes.original_bytes: a data: URL's
// decoded bytes, a fetched body); uuid is the content part's "uuid" (nil
// when absent); processorKwargs is the request's mm_processor_kwargs object
// as sent (nil or {} when absent; the server's --mm-processor-kwargs do not
// enter at bf578e1).
//
// Chat requests always give the processor a uuid list, so bf578e1 takes
// get_mm_hashes' uuid branch for every image: with a uuid and no processor
// kwargs the uuid is the hash itself; otherwise the digest of
// hash_kwargs(model_id=…, image=<uuid or original bytes>, **kwargs), keys
// sorted, each value flattened by iter_item_to_bytes. media_io_kwargs do
// not enter at bf578e1 (later vLLM adds them).
func (h Hasher) ImageHash(file []byte, uuid *string, processorKwargs *wire.Node) (string, error) {
	return h.hashItem(uuid, processorKwargs, func(s *stream) {
		// iter_item_to_bytes("image", MediaWithBytes) writes the key,
		// then serialize_item gives iter_item_to_bytes("image",
		// original_bytes): the key a second time, then the bytes.
		s.key("image")
		s.leaf("image", file)
	})
}

// hashItem is get_mm_hashes for one item: the uuid itself when there is one
// and no processor kwargs; else hash_kwargs(model_id=…, image=<uuid or the
// item>, **kwargs), keys sorted, each value flattened by
// iter_item_to_bytes. item writes the "image" kwarg's bytes.
func (h Hasher) hashItem(uuid *string, processorKwargs *wire.Node, item func(s *stream)) (string, error) {
	hasKwargs := processorKwargs != nil && processorKwargs.Kind == wire.Object && len(processorKwargs.Keys) > 0
	if uuid != nil && !hasKwargs {
		return *uuid, nil
	}
	type kwarg struct {
		key   string
		write func(s *stream) error
	}
	kwargs := []kwarg{
		{"model_id", func(s *stream) error { s.leaf("model_id", []byte(h.ModelID)); return nil }},
		{"image", func(s *stream) error {
			if uuid != nil {
				s.leaf("image", []byte(*uuid))
				return nil
			}
			item(s)
			return nil
		}},
	}
	if hasKwargs {
		for i, k := range processorKwargs.Keys {
			if k == "model_id" || k == "image" {
				return "", fmt.Errorf("features: mm_processor_kwargs may not hold %q", k)
			}
			v := processorKwargs.Vals[i]
			kwargs = append(kwargs, kwarg{k, func(s *stream) error { return s.json(k, v) }})
		}
	}
	slices.SortStableFunc(kwargs, func(a, b kwarg) int { return strings.Compare(a.key, b.key) })
	s := stream{h: h.Algorithm.new()}
	for _, kw := range kwargs {
		if err := kw.write(&s); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(s.h.Sum(nil)), nil
}

// stream writes MultiModalHasher's byte stream into a hash.
type stream struct {
	h   hash.Hash
	num [8]byte
}

func (s *stream) key(k string) { s.h.Write([]byte(k)) }

func (s *stream) leaf(k string, v []byte) {
	s.key(k)
	s.h.Write(v)
}

var errNumber = errors.New("features: a number in mm_processor_kwargs that numpy would store as an object")

// json is iter_item_to_bytes(key, value) for a value json.loads made:
// None writes the key alone; lists and dicts recurse with "key.i" and
// "key.k" (dict order is the JSON text's); str is its UTF-8; int and float
// are np.array(x).tobytes() — int64 (uint64 from 2^63 to 2^64), float64 —
// and bool (an int in Python) is numpy's one byte.
func (s *stream) json(key string, v *wire.Node) error {
	switch v.Kind {
	case wire.Null:
		s.key(key)
	case wire.Bool:
		b := byte(0)
		if v.B {
			b = 1
		}
		s.leaf(key, []byte{b})
	case wire.String:
		s.leaf(key, []byte(v.S))
	case wire.Number:
		b, err := numberBytes(s.num[:0], v)
		if err != nil {
			return err
		}
		s.leaf(key, b)
	case wire.Array:
		for i, e := range v.Arr {
			if err := s.json(key+"."+strconv.Itoa(i), e); err != nil {
				return err
			}
		}
	case wire.Object:
		for i, k := range v.Keys {
			if err := s.json(key+"."+k, v.Vals[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

func numberBytes(dst []byte, v *wire.Node) ([]byte, error) {
	switch v.S {
	case "NaN":
		return binary.LittleEndian.AppendUint64(dst, 0x7ff8000000000000), nil // CPython's float('nan')
	case "Infinity":
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(math.Inf(1))), nil
	case "-Infinity":
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(math.Inf(-1))), nil
	}
	if v.IsFloat() {
		f, err := strconv.ParseFloat(v.S, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, errNumber
		}
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f)), nil
	}
	if n, err := strconv.ParseInt(v.S, 10, 64); err == nil {
		return binary.LittleEndian.AppendUint64(dst, uint64(n)), nil
	}
	if n, err := strconv.ParseUint(v.S, 10, 64); err == nil {
		return binary.LittleEndian.AppendUint64(dst, n), nil
	}
	return nil, errNumber
}
