package tokenizer

import (
	"fmt"
	"math"

	"github.com/vrender/vrender/internal/wire"
)

// The two large parts of a tokenizer.json, the vocabulary object and the
// merges array, are read in place with wire.Reader: encoding/json spends
// most of a load building maps of interfaces or reflecting per element.

// readVocab reads a vocabulary object {"token": id, ...} into one arena of
// concatenated token bytes; ends[i] is where token i ends in it.
func readVocab(r *wire.Reader) (arena []byte, ends []int, ids []int32, err error) {
	err = r.Object(func(key string) error {
		id, err := vocabID(r)
		if err != nil {
			return fmt.Errorf("token %q: %w", key, err)
		}
		if arena == nil {
			arena = make([]byte, 0, 1<<16)
		}
		arena = append(arena, key...)
		ends = append(ends, len(arena))
		ids = append(ids, id)
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return arena, ends, ids, nil
}

// vocabID reads a token id: a non-negative integer that fits an int32,
// written without sign, fraction or exponent.
func vocabID(r *wire.Reader) (int32, error) {
	lit, err := r.Number()
	if err != nil {
		return 0, err
	}
	var v int64
	for i := 0; i < len(lit); i++ {
		c := lit[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("id %s is not a non-negative integer", lit)
		}
		if v = v*10 + int64(c-'0'); v > math.MaxInt32 {
			return 0, fmt.Errorf("id %s out of range", lit)
		}
	}
	return int32(v), nil
}

// readMerges reads a merges array, ["a b", ...] or [["a", "b"], ...],
// calling fn with each pair in rank order.
func readMerges(r *wire.Reader, fn func(rank int, a, b string) error) error {
	rank := 0
	return r.Array(func() error {
		var a, b string
		switch k, _ := r.Kind(); k {
		case wire.String:
			line, err := r.String()
			if err != nil {
				return err
			}
			sp := -1
			for i := 0; i < len(line); i++ {
				if line[i] == ' ' {
					if sp >= 0 {
						sp = -2
						break
					}
					sp = i
				}
			}
			if sp < 0 {
				return fmt.Errorf("merge %d: %q is not two tokens separated by one space", rank+1, line)
			}
			a, b = line[:sp], line[sp+1:]
		case wire.Array:
			n := 0
			err := r.Array(func() error {
				s, err := r.String()
				switch n {
				case 0:
					a = s
				case 1:
					b = s
				default:
					return fmt.Errorf("merge %d: a pair with more than two tokens", rank+1)
				}
				n++
				return err
			})
			if err != nil {
				return err
			}
			if n != 2 {
				return fmt.Errorf("merge %d: a pair of %d tokens", rank+1, n)
			}
		default:
			if _, err := r.Raw(); err != nil {
				return err
			}
			return fmt.Errorf("merge %d: not a string or a pair of strings", rank+1)
		}
		if err := fn(rank, a, b); err != nil {
			return err
		}
		rank++
		return nil
	})
}
