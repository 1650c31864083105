package protocol

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/vrender/vrender/internal/wire"
)

// GenerateDecoder reads a GenerateResponse (an engine's non-streaming
// answer or one SSE event, or a derender body's generate_response /
// generate_chunk) in place with wire.Reader, several times faster than
// encoding/json (which also decodes each choice twice through
// GenerateChoice.UnmarshalJSON). Fast takes only input it decodes exactly
// as encoding/json would; anything else (duplicate or case-variant keys,
// unexpected types, malformed JSON, error events) is declined, for
// encoding/json to decode and word the errors. The differential tests and
// fuzz targets in orchestrator/engine check that equivalence.
//
// A decoder belongs to one stream: it remembers the last request id so
// that the id every event repeats is allocated once.
type GenerateDecoder struct {
	r         wire.Reader
	requestID string
	ints      []int // scratch for token id lists
	seen      int   // the members the last successful Fast read (seen* bits)
}

// errSlowPath means the fast path declined the input.
var errSlowPath = errors.New("event needs the general JSON decoder")

// Bits recording which members were seen: a repeated member is left to
// encoding/json, whose merging rules for repeats are not worth copying.
const (
	seenRequestID = 1 << iota
	seenChoices
	seenUsage
	seenPromptLogprobs
	seenKVTransfer
	seenMetrics
	seenPromptTokenIDs
	seenOutputMode
)

// Fast decodes data into resp, or fails (with any error: the caller then
// asks encoding/json, which words the errors).
func (d *GenerateDecoder) Fast(data []byte, resp *GenerateResponse) error {
	r := &d.r
	r.Reset(data)
	seen := 0
	err := r.Object(func(key string) error {
		bit := 0
		var err error
		switch key {
		case "request_id":
			bit = seenRequestID
			err = d.requestIDValue(resp)
		case "choices":
			bit = seenChoices
			resp.Choices, err = d.choices()
		case "usage":
			bit = seenUsage
			resp.Usage, err = d.usage()
		case "prompt_logprobs":
			bit = seenPromptLogprobs
			resp.PromptLogprobs, err = d.raw()
		case "kv_transfer_params":
			bit = seenKVTransfer
			resp.KVTransferParams, err = d.raw()
		case "metrics":
			bit = seenMetrics
			resp.Metrics, err = d.raw()
		case "prompt_token_ids":
			bit = seenPromptTokenIDs
			resp.PromptTokenIDs, err = d.intList()
		case "output_mode":
			bit = seenOutputMode
			resp.OutputMode, err = d.optString()
		default:
			// "error" (an error event) and any key encoding/json might match
			// case-insensitively go the slow way.
			if key == "error" || !plainLowerKey(key) {
				return errSlowPath
			}
			return r.Skip()
		}
		if seen&bit != 0 {
			return errSlowPath
		}
		seen |= bit
		return err
	})
	if err != nil {
		return err
	}
	d.seen = seen
	return r.End()
}

func (d *GenerateDecoder) requestIDValue(resp *GenerateResponse) error {
	if d.r.Null() {
		return nil // encoding/json leaves a string untouched for null
	}
	s, err := d.r.String()
	if err != nil {
		return err
	}
	if s != d.requestID {
		d.requestID = strings.Clone(s)
	}
	resp.RequestID = d.requestID
	return nil
}

func (d *GenerateDecoder) choices() ([]GenerateChoice, error) {
	if d.r.Null() {
		return nil, nil
	}
	choices := make([]GenerateChoice, 0, 1)
	err := d.r.Array(func() error {
		choices = append(choices, GenerateChoice{})
		return d.choice(&choices[len(choices)-1])
	})
	return choices, err
}

const (
	seenIndex = 1 << iota
	seenLogprobs
	seenFinish
	seenTokenIDs
)

func (d *GenerateDecoder) choice(c *GenerateChoice) error {
	r := &d.r
	seen := 0
	return r.Object(func(key string) error {
		bit := 0
		var err error
		switch key {
		case "index":
			bit = seenIndex
			if !r.Null() {
				c.Index, err = r.Int()
			}
		case "logprobs":
			bit = seenLogprobs
			c.Logprobs, err = d.logprobs()
		case "finish_reason":
			bit = seenFinish
			c.FinishReason, err = d.optString()
			c.finishSet = true
		case "token_ids":
			bit = seenTokenIDs
			c.TokenIDs, err = d.intList()
		default:
			if !plainLowerKey(key) {
				return errSlowPath
			}
			return r.Skip()
		}
		if seen&bit != 0 {
			return errSlowPath
		}
		seen |= bit
		return err
	})
}

// logprobs reads a choice's logprobs in either historical shape (token
// ids, or "token_id:N" strings with bytes).
func (d *GenerateDecoder) logprobs() (*GenerateLogProbs, error) {
	r := &d.r
	if r.Null() {
		return nil, nil
	}
	lp := new(GenerateLogProbs)
	seen := false
	err := r.Object(func(key string) error {
		if key != "content" {
			if !plainLowerKey(key) {
				return errSlowPath
			}
			return r.Skip()
		}
		if seen {
			return errSlowPath
		}
		seen = true
		if r.Null() {
			return nil
		}
		lp.Content = make([]LogprobEntry, 0, 1)
		return r.Array(func() error {
			lp.Content = append(lp.Content, LogprobEntry{})
			return d.logprobEntry(&lp.Content[len(lp.Content)-1])
		})
	})
	return lp, err
}

const seenTopLogprobs = 1 << 4

func (d *GenerateDecoder) logprobEntry(e *LogprobEntry) error {
	r := &d.r
	seen := 0
	return r.Object(func(key string) error {
		if key != "top_logprobs" {
			return d.logprobMember(&e.LogprobTop, key, &seen)
		}
		if seen&seenTopLogprobs != 0 {
			return errSlowPath
		}
		seen |= seenTopLogprobs
		if r.Null() {
			return nil
		}
		e.TopLogprobs = make([]LogprobTop, 0, 4)
		return r.Array(func() error {
			e.TopLogprobs = append(e.TopLogprobs, LogprobTop{})
			t := &e.TopLogprobs[len(e.TopLogprobs)-1]
			seen := 0
			return r.Object(func(key string) error { return d.logprobMember(t, key, &seen) })
		})
	})
}

// logprobMember reads one member of a logprob entry or alternative.
func (d *GenerateDecoder) logprobMember(t *LogprobTop, key string, seen *int) error {
	r := &d.r
	bit := 0
	var err error
	switch key {
	case "token":
		bit = 1
		if !r.Null() {
			var s string
			s, err = r.String()
			t.Token = strings.Clone(s)
		}
	case "token_id":
		bit = 2
		t.TokenID = nil
		if !r.Null() {
			var n int
			n, err = r.Int()
			t.TokenID = &n
		}
	case "logprob":
		bit = 4
		t.Logprob, err = d.optFloat()
	case "bytes":
		bit = 8
		t.Bytes, err = d.intList()
	default:
		if !plainLowerKey(key) {
			return errSlowPath
		}
		return r.Skip()
	}
	if *seen&bit != 0 {
		return errSlowPath
	}
	*seen |= bit
	return err
}

func (d *GenerateDecoder) usage() (*GenerateUsage, error) {
	r := &d.r
	if r.Null() {
		return nil, nil
	}
	u := new(GenerateUsage)
	seen := 0
	err := r.Object(func(key string) error {
		var dst **int
		bit := 0
		switch key {
		case "prompt_tokens":
			dst, bit = &u.PromptTokens, 1
		case "completion_tokens":
			dst, bit = &u.CompletionTokens, 2
		default:
			if !plainLowerKey(key) {
				return errSlowPath
			}
			return r.Skip()
		}
		if seen&bit != 0 {
			return errSlowPath
		}
		seen |= bit
		if r.Null() {
			*dst = nil
			return nil
		}
		n, err := r.Int()
		if err != nil {
			return err
		}
		*dst = &n
		return nil
	})
	return u, err
}

// intList reads a list of integers (or null) into a slice of exactly its
// length; [] gives an empty, non-nil slice as encoding/json does.
func (d *GenerateDecoder) intList() ([]int, error) {
	r := &d.r
	if r.Null() {
		return nil, nil
	}
	d.ints = d.ints[:0]
	err := r.Array(func() error {
		n, err := r.Int()
		d.ints = append(d.ints, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	return append(make([]int, 0, len(d.ints)), d.ints...), nil
}

// Strings the engine repeats in every event, returned without allocating.
var internedStrings = map[string]string{
	"tokens": "tokens", "stop": "stop", "length": "length", "abort": "abort", "error": "error",
}

func (d *GenerateDecoder) optString() (*string, error) {
	if d.r.Null() {
		return nil, nil
	}
	s, err := d.r.String()
	if err != nil {
		return nil, err
	}
	v, ok := internedStrings[s]
	if !ok {
		v = strings.Clone(s)
	}
	return &v, nil
}

// optFloat reads a number (or null) as encoding/json fills a *float64,
// which rejects a number out of float64's range.
func (d *GenerateDecoder) optFloat() (*float64, error) {
	if d.r.Null() {
		return nil, nil
	}
	lit, err := d.r.Number()
	if err != nil {
		return nil, err
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return nil, errSlowPath
	}
	return &f, nil
}

// raw reads any value and returns a copy of its text, as encoding/json
// fills a json.RawMessage (null included).
func (d *GenerateDecoder) raw() (json.RawMessage, error) {
	raw, err := d.r.Raw()
	if err != nil {
		return nil, err
	}
	return append(json.RawMessage(nil), raw...), nil
}

// plainLowerKey reports whether a key is lower-case ASCII, the only keys
// the fast path may skip: encoding/json matches member names
// case-insensitively (with Unicode folding), so any other key might name
// a field.
func plainLowerKey(key string) bool {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c >= 0x80 || ('A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}
