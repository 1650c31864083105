package enginesim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/vrender/vrender/tokenizer"
)

// Script is a list of canned outputs, each chosen by a substring of the
// decoded prompt. It is immutable after loading.
//
// A script file is JSONL (one entry per line) or one JSON list of entries:
//
//	{"match": "weather in Paris", "text": "<tool_call>\n...\n</tool_call>"}
//	{"match": "count", "token_ids": [16, 17, 18], "eos": true}
//	{"match": "slow", "text": "ok", "first_token_latency": "200ms", "token_latency": "20ms"}
//	{"match": "flaky", "text": "ok", "fault": {"kind": "drop", "after_tokens": 2}}
//	{"default": true, "text": "I am a scripted default."}
//
// Entries are tried in order; the first whose match occurs in the prompt
// (decoded with special tokens) wins, else the default entry, else the
// built-in behaviour. "text" is tokenised on load with the model's
// tokenizer and ends with the model's EOS token unless "eos" is false;
// "token_ids" are sent as given, with EOS appended only when "eos" is true.
type Script struct {
	entries []scriptEntry
	def     *scriptEntry
}

type scriptEntry struct {
	match             string
	tokens            []int
	eos               bool
	firstTokenLatency *time.Duration
	tokenLatency      *time.Duration
	fault             *Fault
}

// scriptLine is one entry as written in the file.
type scriptLine struct {
	Match             *string    `json:"match"`
	Default           bool       `json:"default"`
	Text              *string    `json:"text"`
	TokenIDs          []int      `json:"token_ids"`
	EOS               *bool      `json:"eos"`
	FirstTokenLatency *string    `json:"first_token_latency"`
	TokenLatency      *string    `json:"token_latency"`
	Fault             *faultLine `json:"fault"`
}

type faultLine struct {
	Kind        string  `json:"kind"`
	AfterTokens int     `json:"after_tokens"`
	Rate        float64 `json:"rate"`
}

// LoadScript reads a script file and tokenises its texts with tok.
func LoadScript(path string, tok *tokenizer.Tokenizer) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	s, err := ParseScript(data, tok)
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	return s, nil
}

// ParseScript parses a script (JSONL or a JSON list) and tokenises its
// texts with tok.
func ParseScript(data []byte, tok *tokenizer.Tokenizer) (*Script, error) {
	if tok == nil {
		return nil, errors.New("a tokenizer is required to load a script")
	}
	lines, err := splitScript(data)
	if err != nil {
		return nil, err
	}
	s := &Script{}
	for i, raw := range lines {
		e, isDefault, err := parseEntry(raw, tok)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		if isDefault {
			if s.def != nil {
				return nil, fmt.Errorf("entry %d: a second default entry", i+1)
			}
			s.def = &e
			continue
		}
		s.entries = append(s.entries, e)
	}
	if len(s.entries) == 0 && s.def == nil {
		return nil, errors.New("no entries")
	}
	return s, nil
}

// splitScript returns the raw entries of a JSON list or of JSONL.
func splitScript(data []byte) ([]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(trimmed, &list); err != nil {
			return nil, fmt.Errorf("parse JSON list: %w", err)
		}
		return list, nil
	}
	var out []json.RawMessage
	for n, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if !json.Valid(line) {
			return nil, fmt.Errorf("line %d: not valid JSON", n+1)
		}
		out = append(out, json.RawMessage(line))
	}
	return out, nil
}

func parseEntry(raw json.RawMessage, tok *tokenizer.Tokenizer) (scriptEntry, bool, error) {
	var l scriptLine
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return scriptEntry{}, false, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return scriptEntry{}, false, errors.New("trailing data after the entry")
	}
	var e scriptEntry
	switch {
	case l.Default && l.Match != nil:
		return e, false, errors.New(`"default" and "match" are exclusive`)
	case !l.Default && (l.Match == nil || *l.Match == ""):
		return e, false, errors.New(`an entry needs a non-empty "match" or "default": true`)
	case l.Match != nil:
		e.match = *l.Match
	}
	switch {
	case l.Text != nil && l.TokenIDs != nil:
		return e, false, errors.New(`"text" and "token_ids" are exclusive`)
	case l.Text != nil:
		e.tokens = tok.Encode(*l.Text, false)
		e.eos = l.EOS == nil || *l.EOS
	case l.TokenIDs != nil:
		for _, id := range l.TokenIDs {
			if id < 0 || id >= tok.Len() {
				return e, false, fmt.Errorf("token id %d is outside the vocabulary (size %d)", id, tok.Len())
			}
		}
		e.tokens = l.TokenIDs
		e.eos = l.EOS != nil && *l.EOS
	default:
		return e, false, errors.New(`an entry needs "text" or "token_ids"`)
	}
	var err error
	if e.firstTokenLatency, err = parseLatency("first_token_latency", l.FirstTokenLatency); err != nil {
		return e, false, err
	}
	if e.tokenLatency, err = parseLatency("token_latency", l.TokenLatency); err != nil {
		return e, false, err
	}
	if l.Fault != nil {
		f := Fault{Kind: l.Fault.Kind, AfterTokens: l.Fault.AfterTokens, Rate: l.Fault.Rate}
		if err := f.Validate(); err != nil {
			return e, false, err
		}
		e.fault = &f
	}
	return e, l.Default, nil
}

func parseLatency(name string, s *string) (*time.Duration, error) {
	if s == nil {
		return nil, nil
	}
	d, err := time.ParseDuration(*s)
	if err != nil || d < 0 {
		return nil, fmt.Errorf("%s %q is not a non-negative duration", name, *s)
	}
	return &d, nil
}

// lookup returns the entry for a decoded prompt, or nil.
func (s *Script) lookup(prompt string) *scriptEntry {
	if s == nil {
		return nil
	}
	for i := range s.entries {
		if strings.Contains(prompt, s.entries[i].match) {
			return &s.entries[i]
		}
	}
	return s.def
}
