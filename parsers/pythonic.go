package parsers

import "github.com/vrender/vrender/internal/statecodec"

// Pythonic tool calls, as vLLM's PythonicToolParser and
// Llama4PythonicToolParser extract_tool_calls: the whole output must be a
// Python list of calls, `[get_weather(city="Paris"), get_time()]`. vLLM
// first requires its TOOL_CALL_REGEX to match at the start of the text,
// then ast.parse of the whole text to give a list of calls whose keyword
// values are literals; arguments are json.dumps of the keyword dict.
// Anything else returns no calls and the text as content.
//
// Text that does not start with "[" streams as content at once. A list is
// held back: its calls stream as they are read (name at "(", arguments a
// keyword at a time) and, once it is known not to be a valid call list,
// the held text goes out as content and the calls no longer count.
// llama4_pythonic first drops a leading "<|python_start|>" and, in that
// case only, every "<|python_end|>" — also from the content vLLM returns.

const (
	pythonStart = "<|python_start|>"
	pythonEnd   = "<|python_end|>"
)

var pythonEndMarkers = []string{pythonEnd}

// pyPhase is where a pythonic machine is.
type pyPhase uint8

const (
	pyStart  pyPhase = iota // nothing read yet
	pyPlain                 // not a list: content
	pyList                  // reading a list of calls
	pyFailed                // the list is not a valid call list: content
)

// pythonic is the pythonic / llama4_pythonic tool-call machine.
type pythonic struct {
	llama4 bool
	// head holds the first bytes while they may be "<|python_start|>";
	// Decided is set once they are known.
	head    []byte
	decided bool
	// stripped is set when "<|python_start|>" led the text, so every
	// "<|python_end|>" is removed.
	stripped bool
	end      markerScan

	phase pyPhase
	// raw is the list text read so far: the content if it fails.
	raw []byte
	// rawDropped is set once a streamed call went out: the client has it,
	// so the fallback to the whole list can no longer be reached, and raw
	// stops growing (a checkpoint stays flat inside a long list).
	rawDropped bool
	rx         pyRegex
	lex        pyLexer
	parse      pyCallList
	ok         bool

	streaming bool // set by SetStreaming; configuration, not state
}

// setStreaming implements streamingMachine.
func (p *pythonic) setStreaming() { p.streaming = true }

func newPythonic(Vocab, *Request) (toolMachine, error) {
	return &pythonic{decided: true}, nil
}

func newLlama4Pythonic(Vocab, *Request) (toolMachine, error) {
	return &pythonic{llama4: true}, nil
}

// Push implements toolMachine.
func (p *pythonic) Push(text string) (content string, calls []ToolCallDelta) {
	if !p.decided {
		p.head = append(p.head, text...)
		if len(p.head) < len(pythonStart) && pythonStart[:len(p.head)] == string(p.head) {
			return "", nil
		}
		text = p.decide()
	}
	if p.stripped {
		text = p.dropEnds(text)
	}
	return p.feed(text)
}

// decide settles whether the text starts with "<|python_start|>" and
// returns the held text without it.
func (p *pythonic) decide() string {
	p.decided = true
	head := string(p.head)
	p.head = nil
	if len(head) >= len(pythonStart) && head[:len(pythonStart)] == pythonStart {
		p.stripped = true
		return head[len(pythonStart):]
	}
	return head
}

// dropEnds removes "<|python_end|>" markers, holding back a partial one.
func (p *pythonic) dropEnds(text string) string {
	var out []byte
	for {
		before, marker, rest := p.end.next(text, pythonEndMarkers)
		out = append(out, before...)
		if marker == "" {
			return string(out)
		}
		text = rest
	}
}

func (p *pythonic) feed(text string) (content string, calls []ToolCallDelta) {
	if text == "" {
		return "", nil
	}
	if p.phase == pyStart {
		p.phase = pyPlain
		if text[0] == '[' {
			p.phase = pyList
		}
	}
	if p.phase != pyList {
		if p.phase == pyFailed && p.rawDropped {
			return "", nil // a streamed list failed: vLLM's stream adds nothing
		}
		return text, nil
	}
	if !p.rawDropped {
		p.raw = append(p.raw, text...)
	}
	// The lexer only sees the bytes the regex still allows: a call it
	// read past the regex's failure would stream in one push but not when
	// the failing byte came alone, and the result would take it back.
	n := p.rx.feed(text)
	lexOK := p.lex.feed(text[:n], p.parse.token)
	calls, p.parse.out = p.parse.out, nil
	if len(calls) > 0 && p.streaming {
		p.raw, p.rawDropped = nil, true
	}
	if n < len(text) || !lexOK {
		return p.fail(), calls
	}
	return "", calls
}

// fail turns the list into content for good.
func (p *pythonic) fail() string {
	p.phase = pyFailed
	raw := string(p.raw)
	p.raw = nil
	return raw
}

// Finish implements toolMachine.
func (p *pythonic) Finish() (content string, calls []ToolCallDelta) {
	text := ""
	if !p.decided {
		text = p.decide()
	}
	if p.stripped {
		text = p.dropEnds(text) + p.end.flush()
	}
	content, calls = p.feed(text)
	if p.phase != pyList {
		return content, calls
	}
	ok := p.lex.end(p.parse.token) && p.parse.end() && p.rx.ok()
	calls = append(calls, p.parse.out...)
	p.parse.out = nil
	if !ok {
		return content + p.fail(), calls
	}
	p.ok = true
	return content, calls
}

// Called implements toolMachine.
func (p *pythonic) Called() bool { return p.ok }

// pyRegex checks vLLM's TOOL_CALL_REGEX
//
//	\[(N\((N=.*,\s*)*(N=.*\s)?\),\s*)*(N\((N=.*,\s*)*(N=.*\s*)?\)\s*)+\]
//
// (N = [a-zA-Z]+\w*, DOTALL) as a prefix match. Once a call's first
// argument "N=" is read, ".*" can absorb anything, so the match then only
// needs a later ")\s*]"; before that, argument-less calls chain with ","
// (while no call was followed by bare whitespace) or whitespace.
type pyRegex struct {
	state rxState
	// c2 is set once a call was followed by whitespace rather than ",".
	c2 bool
}

type rxState uint8

const (
	rxOpen     rxState = iota // expecting '['
	rxNameHead                // a name's first byte, an ASCII letter
	rxName                    // rest of a call name, then '('
	rxParen                   // after '(': ')' or an argument name
	rxKw                      // rest of an argument name, then '='
	rxAbsorb                  // waiting for ')'
	rxClose                   // after ')' in rxAbsorb: whitespace then ']'
	rxAfter                   // after an argument-less call
	rxSpace                   // whitespace, then a call name (or ']' if C2)
	rxOK                      // matched
	rxFail                    // cannot match
)

func isRxWord(c byte) bool { return isPyNameByte(c) }

func isRxSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// feed advances over text and returns how many of its bytes keep a match
// possible: len(text) unless a byte in it rules the match out.
func (r *pyRegex) feed(text string) int {
	if r.state == rxFail {
		return 0
	}
	for i := 0; i < len(text) && r.state != rxOK; {
		c := text[i]
		i++
		switch r.state {
		case rxOpen:
			r.state = rxFail
			if c == '[' {
				r.state = rxNameHead
			}
		case rxNameHead:
			r.state = rxFail
			if isASCIILetter(c) {
				r.state = rxName
			}
		case rxName:
			switch {
			case c == '(':
				r.state = rxParen
			case !isRxWord(c):
				r.state = rxFail
			}
		case rxParen:
			switch {
			case c == ')':
				r.state = rxAfter
			case isASCIILetter(c):
				r.state = rxKw
			default:
				r.state = rxFail
			}
		case rxKw:
			switch {
			case c == '=':
				r.state = rxAbsorb
			case !isRxWord(c):
				r.state = rxFail
			}
		case rxAbsorb:
			if c == ')' {
				r.state = rxClose
			}
		case rxClose:
			switch {
			case c == ']':
				r.state = rxOK
			case c == ')' || isRxSpace(c):
			default:
				r.state = rxAbsorb
			}
		case rxAfter:
			if c == ',' && !r.c2 {
				r.state = rxSpace
				continue
			}
			r.c2 = true
			r.state = rxSpace
			i-- // see c again as whitespace, ']' or a name
		case rxSpace:
			switch {
			case isRxSpace(c):
			case c == ']' && r.c2:
				r.state = rxOK
			case isASCIILetter(c):
				r.state = rxName
			default:
				r.state = rxFail
			}
		}
		if r.state == rxFail {
			return i - 1
		}
	}
	return len(text)
}

func (r *pyRegex) ok() bool { return r.state == rxOK }

// codec saves and restores the state of a pythonic.
func (p *pythonic) codec(c *statecodec.Codec) {
	c.Bool(&p.llama4)
	c.ByteSlice(&p.head)
	c.Bool(&p.decided)
	c.Bool(&p.stripped)
	p.end.codec(c)
	statecodec.Enum(c, &p.phase, 4)
	c.ByteSlice(&p.raw)
	c.Bool(&p.rawDropped)
	p.rx.codec(c)
	p.lex.codec(c)
	p.parse.codec(c)
	c.Bool(&p.ok)
}

// codec saves and restores the state of a pyRegex.
func (r *pyRegex) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &r.state, 11)
	c.Bool(&r.c2)
}
