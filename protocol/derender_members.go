package protocol

import "encoding/json"

// The streaming derender endpoint decodes one small body per generated
// token; encoding/json splits its top-level members at a few tens of
// nanoseconds per byte (it validates the whole text, then walks it again).
// fastMembers is a single validating pass for the common case. It accepts
// only input on which json.Unmarshal into map[string]json.RawMessage
// succeeds with the same result, and declines (ok false) whenever it is
// unsure: escaped or non-ASCII keys, deep nesting, anything malformed. The
// caller then takes the encoding/json path, so every error is reported
// exactly as before.

// fastMembersMaxDepth is the nesting fastMembers follows before declining.
const fastMembersMaxDepth = 128

// fastMembers splits a JSON object into its members; values alias data.
func fastMembers(data []byte) (map[string]json.RawMessage, bool) {
	s := jsonSplitter{s: data}
	i := s.ws(0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	members := make(map[string]json.RawMessage, 8)
	i = s.ws(i + 1)
	if i < len(data) && data[i] == '}' {
		return members, s.ws(i+1) == len(data)
	}
	for {
		key, j, ok := s.key(i)
		if !ok {
			return nil, false
		}
		j = s.ws(j)
		if j >= len(data) || data[j] != ':' {
			return nil, false
		}
		start := s.ws(j + 1)
		end, ok := s.value(start, 0)
		if !ok {
			return nil, false
		}
		// Duplicate keys: the last wins, as in encoding/json.
		members[key] = json.RawMessage(data[start:end])
		i = s.ws(end)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = s.ws(i + 1)
		case '}':
			return members, s.ws(i+1) == len(data)
		default:
			return nil, false
		}
	}
}

type jsonSplitter struct{ s []byte }

func (p *jsonSplitter) ws(i int) int {
	for i < len(p.s) {
		switch p.s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// key reads a plain key: printable ASCII without escapes.
func (p *jsonSplitter) key(i int) (string, int, bool) {
	if i >= len(p.s) || p.s[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(p.s); j++ {
		switch c := p.s[j]; {
		case c == '"':
			return string(p.s[i+1 : j]), j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", 0, false
		}
	}
	return "", 0, false
}

// value validates the value at i and returns the offset after it.
func (p *jsonSplitter) value(i, depth int) (int, bool) {
	if i >= len(p.s) {
		return 0, false
	}
	switch c := p.s[i]; {
	case c == '"':
		return p.str(i + 1)
	case c == '{':
		return p.object(i+1, depth+1)
	case c == '[':
		return p.array(i+1, depth+1)
	case c == 't':
		return p.lit(i, "true")
	case c == 'f':
		return p.lit(i, "false")
	case c == 'n':
		return p.lit(i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number(i)
	}
	return 0, false
}

func (p *jsonSplitter) lit(i int, word string) (int, bool) {
	if len(p.s)-i < len(word) || string(p.s[i:i+len(word)]) != word {
		return 0, false
	}
	return i + len(word), true
}

// str validates a string body from i (after the quote): escapes must be
// JSON's, control characters are refused; other bytes pass, as in
// encoding/json's validator.
func (p *jsonSplitter) str(i int) (int, bool) {
	for i < len(p.s) {
		c := p.s[i]
		switch {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			if i+1 >= len(p.s) {
				return 0, false
			}
			switch p.s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(p.s) {
					return 0, false
				}
				for _, h := range p.s[i+2 : i+6] {
					if !isHexDigit(h) {
						return 0, false
					}
				}
				i += 6
			default:
				return 0, false
			}
		default:
			i++
		}
	}
	return 0, false
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number validates JSON's number grammar.
func (p *jsonSplitter) number(i int) (int, bool) {
	digits := func(j int) int {
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		return j
	}
	if p.s[i] == '-' {
		i++
	}
	switch {
	case i < len(p.s) && p.s[i] == '0':
		i++
	case i < len(p.s) && p.s[i] >= '1' && p.s[i] <= '9':
		i = digits(i + 1)
	default:
		return 0, false
	}
	if i < len(p.s) && p.s[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(p.s) && (p.s[i] == 'e' || p.s[i] == 'E') {
		i++
		if i < len(p.s) && (p.s[i] == '+' || p.s[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func (p *jsonSplitter) object(i, depth int) (int, bool) {
	if depth > fastMembersMaxDepth {
		return 0, false
	}
	i = p.ws(i)
	if i < len(p.s) && p.s[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(p.s) || p.s[i] != '"' {
			return 0, false
		}
		j, ok := p.str(i + 1)
		if !ok {
			return 0, false
		}
		j = p.ws(j)
		if j >= len(p.s) || p.s[j] != ':' {
			return 0, false
		}
		if j, ok = p.value(p.ws(j+1), depth); !ok {
			return 0, false
		}
		i = p.ws(j)
		if i >= len(p.s) {
			return 0, false
		}
		switch p.s[i] {
		case ',':
			i = p.ws(i + 1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

func (p *jsonSplitter) array(i, depth int) (int, bool) {
	if depth > fastMembersMaxDepth {
		return 0, false
	}
	i = p.ws(i)
	if i < len(p.s) && p.s[i] == ']' {
		return i + 1, true
	}
	for {
		j, ok := p.value(i, depth)
		if !ok {
			return 0, false
		}
		i = p.ws(j)
		if i >= len(p.s) {
			return 0, false
		}
		switch p.s[i] {
		case ',':
			i = p.ws(i + 1)
		case ']':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// decodeDerenderBody is decodeBody through fastMembers when it can.
func decodeDerenderBody(data []byte, className string) (*object, *FieldError) {
	if members, ok := fastMembers(data); ok {
		return &object{raw: json.RawMessage(data), members: members}, nil
	}
	return decodeBody(data, className)
}

// membersOf is json.Unmarshal into a member map, fast when it can be.
func membersOf(raw []byte) map[string]json.RawMessage {
	if m, ok := fastMembers(raw); ok {
		return m
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return m
}
