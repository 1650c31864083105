package protocol

import (
	"errors"
	"strings"

	"github.com/vrender/vrender/internal/wire"
)

// The derender bodies' stream_state, completion_request and batch prompt
// lists were first read with encoding/json, and the derender tests and
// validation goldens pin that reading: keys matched exactly, else without
// case (bytes.EqualFold); a repeated key decoded again into the same
// field; null leaving a scalar as it was and clearing a slice or pointer;
// a repeated list reusing the slice it refills. These readers keep that
// reading over internal/wire in one pass. The body was checked as JSON
// already, so the one failure left is a value of the wrong type, which
// fails the whole member as json.Unmarshal did (its message is not used).
// FuzzDerenderMembers checks them against json.Unmarshal.

// errGoJSONType is a value json.Unmarshal would not have put in its field.
var errGoJSONType = errors.New("value of the wrong type")

// goField is one struct field: its JSON name and the reader of its value.
type goField struct {
	name string
	read func(r *wire.Reader) error
}

// readGoObject reads an object into fields as json.Unmarshal reads into a
// struct; members no field takes are skipped, and null leaves it as it was.
func readGoObject(r *wire.Reader, fields []goField) error {
	if r.Null() {
		return nil
	}
	if k, _ := r.Kind(); k != wire.Object {
		return errGoJSONType
	}
	return r.Object(func(key string) error {
		if f := goFieldFor(fields, key); f != nil {
			return f.read(r)
		}
		return nil
	})
}

func goFieldFor(fields []goField, key string) *goField {
	for i := range fields {
		if fields[i].name == key {
			return &fields[i]
		}
	}
	for i := range fields {
		if strings.EqualFold(fields[i].name, key) {
			return &fields[i]
		}
	}
	return nil
}

func goInt(dst *int) func(*wire.Reader) error {
	return func(r *wire.Reader) error {
		if r.Null() {
			return nil
		}
		n, err := r.Int()
		if err != nil {
			return errGoJSONType
		}
		*dst = n
		return nil
	}
}

func goBool(dst *bool) func(*wire.Reader) error {
	return goScalar(dst, wire.Bool, (*wire.Reader).Bool)
}

func goString(dst *string) func(*wire.Reader) error {
	return goScalar(dst, wire.String, func(r *wire.Reader) (string, error) {
		s, err := r.String()
		return strings.Clone(s), err
	})
}

// goScalar reads a bool or string: null leaves it as it was, a value of
// another kind is wrong.
func goScalar[T any](dst *T, kind wire.Kind, read func(*wire.Reader) (T, error)) func(*wire.Reader) error {
	return func(r *wire.Reader) error {
		if r.Null() {
			return nil
		}
		if k, _ := r.Kind(); k != kind {
			return errGoJSONType
		}
		v, err := read(r)
		if err != nil {
			return err
		}
		*dst = v
		return nil
	}
}

// goBoolPtr reads a *bool: null is nil, a bool reuses the pointer a
// repeated key left.
func goBoolPtr(dst **bool) func(*wire.Reader) error {
	return func(r *wire.Reader) error {
		if r.Null() {
			*dst = nil
			return nil
		}
		var b bool
		if err := goBool(&b)(r); err != nil {
			return err
		}
		if *dst == nil {
			*dst = new(bool)
		}
		**dst = b
		return nil
	}
}

// goSlice reads a list as json.Unmarshal refills a slice: items up to
// the old capacity are decoded into what is already there (a null item
// keeps it), the rest start from zero; an empty list is an empty, non-nil
// slice.
func goSlice[T any](dst *[]T, item func(*T) func(*wire.Reader) error) func(*wire.Reader) error {
	return func(r *wire.Reader) error {
		if r.Null() {
			*dst = nil
			return nil
		}
		if k, _ := r.Kind(); k != wire.Array {
			return errGoJSONType
		}
		s, i := *dst, 0
		err := r.Array(func() error {
			if i < cap(s) {
				s = s[:max(len(s), i+1)]
			} else {
				var zero T
				s = append(s, zero)
			}
			err := item(&s[i])(r)
			i++
			return err
		})
		if err != nil {
			return err
		}
		if i < len(s) {
			s = s[:i]
		}
		if i == 0 {
			s = []T{}
		}
		*dst = s
		return nil
	}
}

// readGo reads raw, one whole JSON value, with read.
func readGo(raw []byte, read func(*wire.Reader) error) error {
	r := wire.NewReader(raw)
	if err := read(r); err != nil {
		return err
	}
	return r.End()
}

// decodeStreamState reads a stream_state object.
func decodeStreamState(raw []byte) (DerenderStreamState, error) {
	var s DerenderStreamState
	err := readGo(raw, func(r *wire.Reader) error {
		return readGoObject(r, []goField{
			{"prev_tokens", goSlice(&s.PrevTokens, goString)},
			{"prefix_offset", goInt(&s.PrefixOffset)},
			{"read_offset", goInt(&s.ReadOffset)},
			{"role_sent", goBool(&s.RoleSent)},
			{"logprob_context_token_ids", goSlice(&s.LogprobContextTokenIDs, goInt)},
			{"logprob_text_offset", goInt(&s.LogprobTextOffset)},
			{"output_token_ids", goSlice(&s.OutputTokenIDs, goInt)},
			{"output_chunk_lens", goSlice(&s.OutputChunkLens, goInt)},
			{"tools_streamed", goBool(&s.ToolsStreamed)},
			{"last_tool_call_ids", goSlice(&s.LastToolCallIDs, goString)},
			{"vrender_checkpoint", goString(&s.VrenderCheckpoint)},
		})
	})
	return s, err
}

// decodeCompletionParams reads a completion_request object.
func decodeCompletionParams(raw []byte) (CompletionDecodeParams, error) {
	var p CompletionDecodeParams
	err := readGo(raw, func(r *wire.Reader) error {
		return readGoObject(r, []goField{
			{"skip_special_tokens", goBoolPtr(&p.SkipSpecialTokens)},
			{"spaces_between_special_tokens", goBoolPtr(&p.SpacesBetweenSpecialTokens)},
		})
	})
	return p, err
}

// decodeIntList and decodeIntLists read the batch prompt lists.
func decodeIntList(raw []byte) ([]int, error) {
	var ids []int
	return ids, readGo(raw, goSlice(&ids, goInt))
}

func decodeIntLists(raw []byte) ([][]int, error) {
	var lists [][]int
	return lists, readGo(raw, goSlice(&lists, func(dst *[]int) func(*wire.Reader) error { return goSlice(dst, goInt) }))
}
