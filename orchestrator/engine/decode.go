package engine

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/vrender/vrender/protocol"
)

// eventDecoder turns the data of one SSE event into a GenerateResponse.
//
// Engine events have one fixed shape, so a hand-written scanner decodes
// them several times faster than encoding/json (which also decodes each
// choice twice through GenerateChoice.UnmarshalJSON). The scanner accepts
// only input it decodes exactly as encoding/json would; anything else —
// escapes, duplicate or case-variant keys, unexpected types, malformed
// JSON — falls back to encoding/json, which stays the reference and
// produces the errors. FuzzDecodeEvent checks that equivalence.
//
// A decoder belongs to one stream: it remembers the last request id so
// that the id every event repeats is allocated once.
type eventDecoder struct {
	requestID string
	ints      []int // scratch for token id lists
}

// errSlowPath means the fast scanner declined the input.
var errSlowPath = errors.New("event needs the general JSON decoder")

// decode returns the event's response, or an *Error for an error event or
// an event that is not valid GenerateResponse JSON.
func (d *eventDecoder) decode(data []byte) (*protocol.GenerateResponse, error) {
	resp := new(protocol.GenerateResponse)
	if err := d.fast(data, resp); err == nil {
		return resp, nil
	}
	return decodeSlow(data)
}

// decodeSlow is the encoding/json path, also the only one that recognises
// error events.
func decodeSlow(data []byte) (*protocol.GenerateResponse, error) {
	var probe struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &probe) == nil && len(probe.Error) > 0 && string(probe.Error) != "null" {
		return nil, eventError(data)
	}
	resp := new(protocol.GenerateResponse)
	if err := json.Unmarshal(data, resp); err != nil {
		return nil, badGateway(err, "engine sent an event that is not a generate response: %v", err)
	}
	return resp, nil
}

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

func (d *eventDecoder) fast(data []byte, resp *protocol.GenerateResponse) error {
	s := scanner{b: data}
	s.ws()
	seen := 0
	err := s.object(func(key []byte) error {
		bit := 0
		var err error
		switch string(key) {
		case "request_id":
			bit = seenRequestID
			err = d.requestIDValue(&s, resp)
		case "choices":
			bit = seenChoices
			resp.Choices, err = d.choices(&s)
		case "usage":
			bit = seenUsage
			resp.Usage, err = usage(&s)
		case "prompt_logprobs":
			bit = seenPromptLogprobs
			resp.PromptLogprobs, err = s.raw()
		case "kv_transfer_params":
			bit = seenKVTransfer
			resp.KVTransferParams, err = s.raw()
		case "metrics":
			bit = seenMetrics
			resp.Metrics, err = s.raw()
		case "prompt_token_ids":
			bit = seenPromptTokenIDs
			resp.PromptTokenIDs, err = d.intList(&s)
		case "output_mode":
			bit = seenOutputMode
			resp.OutputMode, err = optString(&s)
		default:
			// "error" (an error event) and any key encoding/json might match
			// case-insensitively go the slow way.
			if string(key) == "error" || !plainLowerKey(key) {
				return errSlowPath
			}
			return s.skip(0)
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
	s.ws()
	if s.i != len(s.b) {
		return errSlowPath
	}
	return nil
}

func (d *eventDecoder) requestIDValue(s *scanner, resp *protocol.GenerateResponse) error {
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

func (d *eventDecoder) choices(s *scanner) ([]protocol.GenerateChoice, error) {
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
	seenIndex = 1 << iota
	seenLogprobs
	seenFinish
	seenTokenIDs
)

func (d *eventDecoder) choice(s *scanner, c *protocol.GenerateChoice) error {
	seen := 0
	return s.object(func(key []byte) error {
		bit := 0
		var err error
		switch string(key) {
		case "index":
			bit = seenIndex
			if !s.null() {
				c.Index, err = s.integer()
			}
		case "logprobs":
			bit = seenLogprobs
			c.Logprobs, err = d.logprobs(s)
		case "finish_reason":
			bit = seenFinish
			c.FinishReason, err = optString(s)
		case "token_ids":
			bit = seenTokenIDs
			c.TokenIDs, err = d.intList(s)
		default:
			if !plainLowerKey(key) {
				return errSlowPath
			}
			return s.skip(0)
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
func (d *eventDecoder) logprobs(s *scanner) (*protocol.GenerateLogProbs, error) {
	if s.null() {
		return nil, nil
	}
	lp := new(protocol.GenerateLogProbs)
	seen := false
	err := s.object(func(key []byte) error {
		if string(key) != "content" {
			if !plainLowerKey(key) {
				return errSlowPath
			}
			return s.skip(0)
		}
		if seen {
			return errSlowPath
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

const seenTopLogprobs = 1 << 4

func (d *eventDecoder) logprobEntry(s *scanner, e *protocol.LogprobEntry) error {
	seen := 0
	return s.object(func(key []byte) error {
		if string(key) != "top_logprobs" {
			return d.logprobMember(s, &e.LogprobTop, key, &seen)
		}
		if seen&seenTopLogprobs != 0 {
			return errSlowPath
		}
		seen |= seenTopLogprobs
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
func (d *eventDecoder) logprobMember(s *scanner, t *protocol.LogprobTop, key []byte, seen *int) error {
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
		if !plainLowerKey(key) {
			return errSlowPath
		}
		return s.skip(0)
	}
	if *seen&bit != 0 {
		return errSlowPath
	}
	*seen |= bit
	return err
}

func usage(s *scanner) (*protocol.GenerateUsage, error) {
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
			if !plainLowerKey(key) {
				return errSlowPath
			}
			return s.skip(0)
		}
		if seen&bit != 0 {
			return errSlowPath
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
func (d *eventDecoder) intList(s *scanner) ([]int, error) {
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
var internedStrings = map[string]string{
	"tokens": "tokens", "stop": "stop", "length": "length", "abort": "abort", "error": "error",
}

func optString(s *scanner) (*string, error) {
	if s.null() {
		return nil, nil
	}
	raw, err := s.stringBytes()
	if err != nil {
		return nil, err
	}
	v, ok := internedStrings[string(raw)]
	if !ok {
		v = string(raw)
	}
	return &v, nil
}

// plainLowerKey reports whether a key is lower-case ASCII, the only keys
// the fast path may skip: encoding/json matches member names
// case-insensitively (with Unicode folding), so any other key might name
// a field.
func plainLowerKey(key []byte) bool {
	for _, c := range key {
		if c >= 0x80 || ('A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// scanner is a strict JSON scanner over one event. Every method returns
// errSlowPath for input it does not handle exactly as encoding/json.
type scanner struct {
	b []byte
	i int
}

// maxSkipDepth bounds recursion on nested values the fast path skips;
// deeper input goes to encoding/json.
const maxSkipDepth = 256

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// null consumes a null literal if one comes next.
func (s *scanner) null() bool {
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// object reads an object, calling member with the scanner positioned at
// each member's value (after whitespace); member must consume the value.
func (s *scanner) object(member func(key []byte) error) error {
	if s.peek() != '{' {
		return errSlowPath
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
			return errSlowPath
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
			return errSlowPath
		}
	}
}

// array reads an array, calling elem at each element (after whitespace).
func (s *scanner) array(elem func() error) error {
	if s.peek() != '[' {
		return errSlowPath
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
			return errSlowPath
		}
	}
}

// stringBytes reads a string with no escapes and valid UTF-8, returning
// its contents in place; other strings need encoding/json's decoding.
func (s *scanner) stringBytes() ([]byte, error) {
	if s.peek() != '"' {
		return nil, errSlowPath
	}
	start := s.i + 1
	ascii := true
	for j := start; j < len(s.b); j++ {
		c := s.b[j]
		switch {
		case c == '"':
			s.i = j + 1
			if !ascii && !utf8.Valid(s.b[start:j]) {
				return nil, errSlowPath
			}
			return s.b[start:j], nil
		case c == '\\' || c < 0x20:
			return nil, errSlowPath
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, errSlowPath
}

// integer reads a JSON number that is an integer fitting an int, written
// as encoding/json accepts it for an int field.
func (s *scanner) integer() (int, error) {
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
		return 0, errSlowPath
	}
	if j < len(s.b) && (s.b[j] == '.' || s.b[j] == 'e' || s.b[j] == 'E') {
		return 0, errSlowPath
	}
	n, err := strconv.ParseInt(string(s.b[start:j]), 10, strconv.IntSize)
	if err != nil {
		return 0, errSlowPath
	}
	s.i = j
	return int(n), nil
}

// optFloat reads a number (or null) as encoding/json fills a *float64.
func (s *scanner) optFloat() (*float64, error) {
	if s.null() {
		return nil, nil
	}
	start := s.i
	if err := s.skipNumber(); err != nil {
		return nil, err
	}
	f, err := strconv.ParseFloat(string(s.b[start:s.i]), 64)
	if err != nil {
		return nil, errSlowPath
	}
	return &f, nil
}

// raw reads any value and returns a copy of its text, as encoding/json
// fills a json.RawMessage (null included).
func (s *scanner) raw() (json.RawMessage, error) {
	start := s.i
	if err := s.skip(0); err != nil {
		return nil, err
	}
	return append(json.RawMessage(nil), s.b[start:s.i]...), nil
}

// skip consumes one value, validating it as strictly as encoding/json.
func (s *scanner) skip(depth int) error {
	if depth > maxSkipDepth {
		return errSlowPath
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
	return errSlowPath
}

func (s *scanner) literal(lit string) error {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return nil
	}
	return errSlowPath
}

func (s *scanner) skipString() error {
	for j := s.i + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return nil
		case c < 0x20:
			return errSlowPath
		case c == '\\':
			j++
			if j >= len(s.b) {
				return errSlowPath
			}
			switch s.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s.b) || !isHex(s.b[j+1]) || !isHex(s.b[j+2]) || !isHex(s.b[j+3]) || !isHex(s.b[j+4]) {
					return errSlowPath
				}
				j += 4
			default:
				return errSlowPath
			}
		}
	}
	return errSlowPath
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// skipNumber consumes a number of JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) skipNumber() error {
	j := s.i
	if j < len(s.b) && s.b[j] == '-' {
		j++
	}
	switch {
	case j < len(s.b) && s.b[j] == '0':
		j++
	case j < len(s.b) && isDigit(s.b[j]):
		for j < len(s.b) && isDigit(s.b[j]) {
			j++
		}
	default:
		return errSlowPath
	}
	if j < len(s.b) && s.b[j] == '.' {
		j++
		if j >= len(s.b) || !isDigit(s.b[j]) {
			return errSlowPath
		}
		for j < len(s.b) && isDigit(s.b[j]) {
			j++
		}
	}
	if j < len(s.b) && (s.b[j] == 'e' || s.b[j] == 'E') {
		j++
		if j < len(s.b) && (s.b[j] == '+' || s.b[j] == '-') {
			j++
		}
		if j >= len(s.b) || !isDigit(s.b[j]) {
			return errSlowPath
		}
		for j < len(s.b) && isDigit(s.b[j]) {
			j++
		}
	}
	s.i = j
	return nil
}
