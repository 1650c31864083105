package standin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/vrender/vrender/parity"
)

// promptFields decide the prompt: the cases of one golden file that agree
// on them have the same prompt ids.
var promptFields = []string{"messages", "tools", "chat_template_kwargs"}

// addedFields are what `vrender parity` adds to or drops from the client's
// request for /v1/chat/completions; they do not identify a case.
var addedFields = map[string]bool{
	"model": true, "stream": true, "stream_options": true, "return_token_ids": true, "temperature": true,
	"seed": true, "logprobs": true, "top_logprobs": true, "n": true, "request_id": true,
	"prompt_logprobs": true, "use_beam_search": true,
}

// canonical re-encodes a JSON value with sorted keys, so equal values
// compare equal whatever their key order or spacing.
func canonical(v json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return "", err
	}
	b, err := json.Marshal(x)
	return string(b), err
}

// key is the canonical form of obj's fields that keep says to keep; a
// null value counts as absent, as vLLM reads it.
func key(obj map[string]json.RawMessage, keep func(string) bool) (string, error) {
	sub := map[string]json.RawMessage{}
	for k, v := range obj {
		if keep(k) && string(bytes.TrimSpace(v)) != "null" {
			sub[k] = v
		}
	}
	b, err := json.Marshal(sub)
	if err != nil {
		return "", err
	}
	return canonical(b)
}

func promptKey(obj map[string]json.RawMessage) (string, error) {
	return key(obj, func(k string) bool {
		for _, f := range promptFields {
			if k == f {
				return true
			}
		}
		return false
	})
}

func requestKey(obj map[string]json.RawMessage) (string, error) {
	return key(obj, func(k string) bool { return !addedFields[k] })
}

func (c *Case) object() (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(c.ChatRequest, &obj); err != nil {
		return nil, fmt.Errorf("case %s: chat_request: %w", c.ID, err)
	}
	return obj, nil
}

// errNoCase is a request the golden set has no answer for.
var errNoCase = errors.New("no golden case matches this request")

// findPrompt is the first case whose prompt fields match.
func (s *Server) findPrompt(obj map[string]json.RawMessage) (*Case, error) {
	want, err := promptKey(obj)
	if err != nil {
		return nil, err
	}
	for i := range s.cases {
		co, err := s.cases[i].object()
		if err != nil {
			return nil, err
		}
		if k, err := promptKey(co); err == nil && k == want {
			return &s.cases[i], nil
		}
	}
	return nil, errNoCase
}

// findCase is the case a chat completion request asks for: the one whose
// chat request matches; among several, the one the request_id names.
func (s *Server) findCase(obj map[string]json.RawMessage) (*Case, error) {
	want, err := requestKey(obj)
	if err != nil {
		return nil, err
	}
	var named string
	if raw, ok := obj["request_id"]; ok {
		var id string
		if json.Unmarshal(raw, &id) == nil {
			named = caseNameOf(id)
		}
	}
	var found []*Case
	for i := range s.cases {
		co, err := s.cases[i].object()
		if err != nil {
			return nil, err
		}
		if k, err := requestKey(co); err == nil && k == want {
			found = append(found, &s.cases[i])
		}
	}
	for _, c := range found {
		if c.ID == named {
			return c, nil
		}
	}
	switch len(found) {
	case 0:
		return nil, errNoCase
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("%d golden cases share this chat request and request_id %q names none of them", len(found), named)
}

// caseNameOf reads the case name back from the request_id `vrender
// parity` sends: PREFIX MODE-LINE-NAME.
func caseNameOf(id string) string {
	rest, ok := strings.CutPrefix(id, parity.RequestIDPrefix)
	if !ok {
		return ""
	}
	parts := strings.SplitN(rest, "-", 3)
	if len(parts) != 3 {
		return ""
	}
	return parts[2]
}
