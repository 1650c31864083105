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
	hash, _, err := h.imageHash(file, uuid, processorKwargs, false)
	return hash, err
}

// ImageHashFramed is ImageHash that also returns the hash's frame, what
// the hashed byte stream holds besides file: nil when the hash does not
// cover file's bytes (a uuid stands for them).
//
// The frame lets a cache of what file decodes to key on (frame, hash)
// instead of hashing file a second time. For a fixed model id, algorithm
// and request processor kwargs, MultiModalHasher's stream (bf578e1,
// hash_kwargs) is prefix ‖ file ‖ suffix, where the prefix (the kwargs
// that sort before "image", then the key "image" twice) and the suffix
// (the kwargs after it) do not depend on file. The frame holds the
// algorithm's name and the prefix, each length-delimited, then the
// suffix; a caller writes it length-delimited too, so equal frames mean
// equal algorithms, prefixes and suffixes. With those equal, the stream
// determines file (strip the prefix and suffix, whose lengths are known),
// so equal (frame, hash) means equal files unless the algorithm (blake3,
// sha256 or sha512) has a collision. With a uuid the stream holds the
// uuid in place of the file's bytes (or the mm_hash is the uuid itself):
// the hash says nothing of the file, and it must be keyed by its bytes.
// TestImageHashFrame holds this layout to vLLM's streams.
func (h Hasher) ImageHashFramed(file []byte, uuid *string, processorKwargs *wire.Node) (hash string, frame []byte, err error) {
	return h.imageHash(file, uuid, processorKwargs, true)
}

func (h Hasher) imageHash(file []byte, uuid *string, processorKwargs *wire.Node, framed bool) (string, []byte, error) {
	s := stream{h: h.Algorithm.new(), rec: framed && uuid == nil}
	prefix := -1
	hash, err := h.hashItem(&s, uuid, processorKwargs, func(s *stream) {
		// iter_item_to_bytes("image", MediaWithBytes) writes the key,
		// then serialize_item gives iter_item_to_bytes("image",
		// original_bytes): the key a second time, then the bytes.
		s.key("image")
		s.key("image")
		prefix = len(s.out)
		s.h.Write(file)
	})
	if err != nil || !s.rec || prefix < 0 {
		return hash, nil, err
	}
	alg := string(h.Algorithm)
	if alg == "" {
		alg = string(Blake3)
	}
	frame := binary.LittleEndian.AppendUint64(make([]byte, 0, 16+len(alg)+len(s.out)), uint64(len(alg)))
	frame = append(frame, alg...)
	frame = binary.LittleEndian.AppendUint64(frame, uint64(prefix))
	return hash, append(frame, s.out...), nil
}

// hashItem is get_mm_hashes for one item: the uuid itself when there is one
// and no processor kwargs; else hash_kwargs(model_id=…, image=<uuid or the
// item>, **kwargs), keys sorted, each value flattened by
// iter_item_to_bytes. item writes the "image" kwarg's bytes.
func (h Hasher) hashItem(s *stream, uuid *string, processorKwargs *wire.Node, item func(s *stream)) (string, error) {
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
	for _, kw := range kwargs {
		if err := kw.write(s); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(s.h.Sum(nil)), nil
}

// stream writes MultiModalHasher's byte stream into a hash, and when rec
// is set keeps what it writes through key and leaf in out (an image's
// frame: everything but the file).
type stream struct {
	h   hash.Hash
	num [8]byte
	rec bool
	out []byte
}

func (s *stream) key(k string) { s.write([]byte(k)) }

func (s *stream) leaf(k string, v []byte) {
	s.key(k)
	s.write(v)
}

func (s *stream) write(b []byte) {
	s.h.Write(b)
	if s.rec {
		s.out = append(s.out, b...)
	}
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
