package engine

// The fast event scanner as it was before events were read with
// internal/wire, kept as the reference of the differential tests.

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/vrender/vrender/protocol"
)

// refEventDecoder turns the data of one SSE event into a GenerateResponse.
//
// Engine events have one fixed shape, so a hand-written refScanner decodes
// them several times faster than encoding/json (which also decodes each
// choice twice through GenerateChoice.UnmarshalJSON). The refScanner accepts
// only input it decodes exactly as encoding/json would; anything else —
// escapes, duplicate or case-variant keys, unexpected types, malformed
// JSON — falls back to encoding/json, which stays the reference and
// produces the errors. FuzzDecodeEvent checks that equivalence.
//
// A decoder belongs to one stream: it remembers the last request id so
// that the id every event repeats is allocated once.
type refEventDecoder struct {
	requestID string
	ints      []int // scratch for token id lists
}

// errRefSlowPath means the fast refScanner declined the input.
var errRefSlowPath = errors.New("event needs the general JSON decoder")

// decode returns the event's response, or an *Error for an error event or
// an event that is not valid GenerateResponse JSON.
func (d *refEventDecoder) decode(data []byte) (*protocol.GenerateResponse, error) {
	resp := new(protocol.GenerateResponse)
	if err := d.fast(data, resp); err == nil {
		return resp, nil
	}
	return decodeSlow(data)
}

// Bits recording which members were seen: a repeated member is left to
// encoding/json, whose merging rules for repeats are not worth copying.
const (
	refSeenRequestID = 1 << iota
	refSeenChoices
	refSeenUsage
	refSeenPromptLogprobs
	refSeenKVTransfer
	refSeenMetrics
	refSeenPromptTokenIDs
	refSeenOutputMode
)

func (d *refEventDecoder) fast(data []byte, resp *protocol.GenerateResponse) error {
	s := refScanner{b: data}
	s.ws()
	seen := 0
	err := s.object(func(key []byte) error {
		bit := 0
		var err error
		switch string(key) {
		case "request_id":
			bit = refSeenRequestID
			err = d.requestIDValue(&s, resp)
		case "choices":
			bit = refSeenChoices
			resp.Choices, err = d.choices(&s)
		case "usage":
			bit = refSeenUsage
			resp.Usage, err = refUsage(&s)
		case "prompt_logprobs":
			bit = refSeenPromptLogprobs
			resp.PromptLogprobs, err = s.raw()
		case "kv_transfer_params":
			bit = refSeenKVTransfer
			resp.KVTransferParams, err = s.raw()
		case "metrics":
			bit = refSeenMetrics
			resp.Metrics, err = s.raw()
		case "prompt_token_ids":
			bit = refSeenPromptTokenIDs
			resp.PromptTokenIDs, err = d.intList(&s)
		case "output_mode":
			bit = refSeenOutputMode
			resp.OutputMode, err = refOptString(&s)
		default:
			// "error" (an error event) and any key encoding/json might match
			// case-insensitively go the slow way.
			if string(key) == "error" || !refPlainLowerKey(key) {
				return errRefSlowPath
			}
			return s.skip(0)
		}
		if seen&bit != 0 {
			return errRefSlowPath
		}
		seen |= bit
		return err
	})
	if err != nil {
		return err
	}
	s.ws()
	if s.i != len(s.b) {
		return errRefSlowPath
	}
	return nil
}

func (d *refEventDecoder) requestIDValue(s *refScanner, resp *protocol.GenerateResponse) error {
	if s.null() {
		return nil // encoding/json leaves a string untouched for null
	}
	raw, err := s.stringBytes()
	if err != nil {
		return err
	}
	if string(raw) != d.requestID {
		d.requestID = string(raw)
	}
	resp.RequestID = d.requestID
	return nil
}

func (d *refEventDecoder) choices(s *refScanner) ([]protocol.GenerateChoice, error) {
	if s.null() {
		return nil, nil
	}
	choices := make([]protocol.GenerateChoice, 0, 1)
	err := s.array(func() error {
		choices = append(choices, protocol.GenerateChoice{})
		return d.choice(s, &choices[len(choices)-1])
	})
	return choices, err
}

const (
	refSeenIndex = 1 << iota
	refSeenLogprobs
	refSeenFinish
	refSeenTokenIDs
)

func (d *refEventDecoder) choice(s *refScanner, c *protocol.GenerateChoice) error {
	seen := 0
	return s.object(func(key []byte) error {
		bit := 0
		var err error
		switch string(key) {
		case "index":
			bit = refSeenIndex
			if !s.null() {
				c.Index, err = s.integer()
			}
		case "logprobs":
			bit = refSeenLogprobs
			c.Logprobs, err = d.logprobs(s)
		case "finish_reason":
			bit = refSeenFinish
			c.FinishReason, err = refOptString(s)
		case "token_ids":
			bit = refSeenTokenIDs
			c.TokenIDs, err = d.intList(s)
		default:
			if !refPlainLowerKey(key) {
				return errRefSlowPath
			}
			return s.skip(0)
		}
		if seen&bit != 0 {
			return errRefSlowPath
		}
		seen |= bit
		return err
	})
}

// logprobs reads a choice's logprobs in either historical shape (token
// ids, or "token_id:N" strings with bytes).
func (d *refEventDecoder) logprobs(s *refScanner) (*protocol.GenerateLogProbs, error) {
	if s.null() {
		return nil, nil
	}
	lp := new(protocol.GenerateLogProbs)
	seen := false
	err := s.object(func(key []byte) error {
		if string(key) != "content" {
			if !refPlainLowerKey(key) {
				return errRefSlowPath
			}
			return s.skip(0)
		}
		if seen {
			return errRefSlowPath
		}
		seen = true
		if s.null() {
			return nil
		}
		lp.Content = make([]protocol.LogprobEntry, 0, 1)
		return s.array(func() error {
			lp.Content = append(lp.Content, protocol.LogprobEntry{})
			return d.logprobEntry(s, &lp.Content[len(lp.Content)-1])
		})
	})
	return lp, err
}

const refSeenTopLogprobs = 1 << 4

func (d *refEventDecoder) logprobEntry(s *refScanner, e *protocol.LogprobEntry) error {
	seen := 0
	return s.object(func(key []byte) error {
		if string(key) != "top_logprobs" {
			return d.logprobMember(s, &e.LogprobTop, key, &seen)
		}
		if seen&refSeenTopLogprobs != 0 {
			return errRefSlowPath
		}
		seen |= refSeenTopLogprobs
		if s.null() {
			return nil
		}
		e.TopLogprobs = make([]protocol.LogprobTop, 0, 4)
		return s.array(func() error {
			e.TopLogprobs = append(e.TopLogprobs, protocol.LogprobTop{})
			t := &e.TopLogprobs[len(e.TopLogprobs)-1]
			seen := 0
			return s.object(func(key []byte) error { return d.logprobMember(s, t, key, &seen) })
		})
	})
}

// logprobMember reads one member of a logprob entry or alternative.
func (d *refEventDecoder) logprobMember(s *refScanner, t *protocol.LogprobTop, key []byte, seen *int) error {
	bit := 0
	var err error
	switch string(key) {
	case "token":
		bit = 1
		if !s.null() {
			var raw []byte
			raw, err = s.stringBytes()
			t.Token = string(raw)
		}
	case "token_id":
		bit = 2
		t.TokenID = nil
		if !s.null() {
			var n int
			n, err = s.integer()
			t.TokenID = &n
		}
	case "logprob":
		bit = 4
		t.Logprob, err = s.optFloat()
	case "bytes":
		bit = 8
		t.Bytes, err = d.intList(s)
	default:
		if !refPlainLowerKey(key) {
			return errRefSlowPath
		}
		return s.skip(0)
	}
	if *seen&bit != 0 {
		return errRefSlowPath
	}
	*seen |= bit
	return err
}

func refUsage(s *refScanner) (*protocol.GenerateUsage, error) {
	if s.null() {
		return nil, nil
	}
	u := new(protocol.GenerateUsage)
	seen := 0
	err := s.object(func(key []byte) error {
		var dst **int
		bit := 0
		switch string(key) {
		case "prompt_tokens":
			dst, bit = &u.PromptTokens, 1
		case "completion_tokens":
			dst, bit = &u.CompletionTokens, 2
		default:
			if !refPlainLowerKey(key) {
				return errRefSlowPath
			}
			return s.skip(0)
		}
		if seen&bit != 0 {
			return errRefSlowPath
		}
		seen |= bit
		if s.null() {
			*dst = nil
			return nil
		}
		n, err := s.integer()
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
func (d *refEventDecoder) intList(s *refScanner) ([]int, error) {
	if s.null() {
		return nil, nil
	}
	d.ints = d.ints[:0]
	err := s.array(func() error {
		n, err := s.integer()
		d.ints = append(d.ints, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	return append(make([]int, 0, len(d.ints)), d.ints...), nil
}

// Strings the engine repeats in every event, returned without allocating.
var refInternedStrings = map[string]string{
	"tokens": "tokens", "stop": "stop", "length": "length", "abort": "abort", "error": "error",
}

func refOptString(s *refScanner) (*string, error) {
	if s.null() {
		return nil, nil
	}
	raw, err := s.stringBytes()
	if err != nil {
		return nil, err
	}
	v, ok := refInternedStrings[string(raw)]
	if !ok {
		v = string(raw)
	}
	return &v, nil
}

// refPlainLowerKey reports whether a key is lower-case ASCII, the only keys
// the fast path may skip: encoding/json matches member names
// case-insensitively (with Unicode folding), so any other key might name
// a field.
func refPlainLowerKey(key []byte) bool {
	for _, c := range key {
		if c >= 0x80 || ('A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// refScanner is a strict JSON refScanner over one event. Every method returns
// errRefSlowPath for input it does not handle exactly as encoding/json.
type refScanner struct {
	b []byte
	i int
}

// refMaxSkipDepth bounds recursion on nested values the fast path skips;
// deeper input goes to encoding/json.
const refMaxSkipDepth = 256

func (s *refScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *refScanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// null consumes a null literal if one comes next.
func (s *refScanner) null() bool {
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// object reads an object, calling member with the refScanner positioned at
// each member's value (after whitespace); member must consume the value.
func (s *refScanner) object(member func(key []byte) error) error {
	if s.peek() != '{' {
		return errRefSlowPath
	}
	s.i++
	s.ws()
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		key, err := s.stringBytes()
		if err != nil {
			return err
		}
		s.ws()
		if s.peek() != ':' {
			return errRefSlowPath
		}
		s.i++
		s.ws()
		if err := member(key); err != nil {
			return err
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
			s.ws()
		case '}':
			s.i++
			return nil
		default:
			return errRefSlowPath
		}
	}
}

// array reads an array, calling elem at each element (after whitespace).
func (s *refScanner) array(elem func() error) error {
	if s.peek() != '[' {
		return errRefSlowPath
	}
	s.i++
	s.ws()
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
			s.ws()
		case ']':
			s.i++
			return nil
		default:
			return errRefSlowPath
		}
	}
}

// stringBytes reads a string with no escapes and valid UTF-8, returning
// its contents in place; other strings need encoding/json's decoding.
func (s *refScanner) stringBytes() ([]byte, error) {
	if s.peek() != '"' {
		return nil, errRefSlowPath
	}
	start := s.i + 1
	ascii := true
	for j := start; j < len(s.b); j++ {
		c := s.b[j]
		switch {
		case c == '"':
			s.i = j + 1
			if !ascii && !utf8.Valid(s.b[start:j]) {
				return nil, errRefSlowPath
			}
			return s.b[start:j], nil
		case c == '\\' || c < 0x20:
			return nil, errRefSlowPath
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, errRefSlowPath
}

// integer reads a JSON number that is an integer fitting an int, written
// as encoding/json accepts it for an int field.
func (s *refScanner) integer() (int, error) {
	start := s.i
	j := s.i
	if j < len(s.b) && s.b[j] == '-' {
		j++
	}
	digits := j
	for j < len(s.b) && s.b[j] >= '0' && s.b[j] <= '9' {
		j++
	}
	if j == digits || (s.b[digits] == '0' && j-digits > 1) {
		return 0, errRefSlowPath
	}
	if j < len(s.b) && (s.b[j] == '.' || s.b[j] == 'e' || s.b[j] == 'E') {
		return 0, errRefSlowPath
	}
	n, err := strconv.ParseInt(string(s.b[start:j]), 10, strconv.IntSize)
	if err != nil {
		return 0, errRefSlowPath
	}
	s.i = j
	return int(n), nil
}

// optFloat reads a number (or null) as encoding/json fills a *float64.
func (s *refScanner) optFloat() (*float64, error) {
	if s.null() {
		return nil, nil
	}
	start := s.i
	if err := s.skipNumber(); err != nil {
		return nil, err
	}
	f, err := strconv.ParseFloat(string(s.b[start:s.i]), 64)
	if err != nil {
		return nil, errRefSlowPath
	}
	return &f, nil
}

// raw reads any value and returns a copy of its text, as encoding/json
// fills a json.RawMessage (null included).
func (s *refScanner) raw() (json.RawMessage, error) {
	start := s.i
	if err := s.skip(0); err != nil {
		return nil, err
	}
	return append(json.RawMessage(nil), s.b[start:s.i]...), nil
}

// skip consumes one value, validating it as strictly as encoding/json.
func (s *refScanner) skip(depth int) error {
	if depth > refMaxSkipDepth {
		return errRefSlowPath
	}
	switch c := s.peek(); {
	case c == '{':
		return s.object(func([]byte) error { return s.skip(depth + 1) })
	case c == '[':
		return s.array(func() error { return s.skip(depth + 1) })
	case c == '"':
		return s.skipString()
	case c == '-' || (c >= '0' && c <= '9'):
		return s.skipNumber()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return errRefSlowPath
}

func (s *refScanner) literal(lit string) error {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return nil
	}
	return errRefSlowPath
}

func (s *refScanner) skipString() error {
	for j := s.i + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return nil
		case c < 0x20:
			return errRefSlowPath
		case c == '\\':
			j++
			if j >= len(s.b) {
				return errRefSlowPath
			}
			switch s.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s.b) || !refIsHex(s.b[j+1]) || !refIsHex(s.b[j+2]) || !refIsHex(s.b[j+3]) || !refIsHex(s.b[j+4]) {
					return errRefSlowPath
				}
				j += 4
			default:
				return errRefSlowPath
			}
		}
	}
	return errRefSlowPath
}

func refIsHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func refIsDigit(c byte) bool { return '0' <= c && c <= '9' }

// skipNumber consumes a number of JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *refScanner) skipNumber() error {
	j := s.i
	if j < len(s.b) && s.b[j] == '-' {
		j++
	}
	switch {
	case j < len(s.b) && s.b[j] == '0':
		j++
	case j < len(s.b) && refIsDigit(s.b[j]):
		for j < len(s.b) && refIsDigit(s.b[j]) {
			j++
		}
	default:
		return errRefSlowPath
	}
	if j < len(s.b) && s.b[j] == '.' {
		j++
		if j >= len(s.b) || !refIsDigit(s.b[j]) {
			return errRefSlowPath
		}
		for j < len(s.b) && refIsDigit(s.b[j]) {
			j++
		}
	}
	if j < len(s.b) && (s.b[j] == 'e' || s.b[j] == 'E') {
		j++
		if j < len(s.b) && (s.b[j] == '+' || s.b[j] == '-') {
			j++
		}
		if j >= len(s.b) || !refIsDigit(s.b[j]) {
			return errRefSlowPath
		}
		for j < len(s.b) && refIsDigit(s.b[j]) {
			j++
		}
	}
	s.i = j
	return nil
}
