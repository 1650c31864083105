package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// sseReader splits a text/event-stream body into the data of its events,
// following the WHATWG framing rules the engine's clients rely on: lines
// end in \n, \r\n or \r; a line starting with ':' is a comment; the data
// lines of one event are joined with \n; a blank line dispatches the
// event; other fields (event, id, retry) are ignored.
//
// It reads into one buffer it reuses, so a steady stream of events costs
// no allocation.
type sseReader struct {
	r          io.Reader
	buf        []byte
	start, end int // unread bytes are buf[start:end]
	scan       int // buf[start:scan] holds no line terminator
	eof        bool
	readErr    error // the error that ended reading, io.EOF for a clean end
	data       []byte
	hasData    bool
	maxEvent   int
}

const (
	sseInitialBuffer = 8 << 10
	// defaultMaxEvent bounds one event: prompt_token_ids echoes and
	// logprobs make events large, but never this large.
	defaultMaxEvent = 64 << 20
)

// errEventTooLarge is returned for an event or line over the size limit.
var errEventTooLarge = errors.New("SSE event exceeds the size limit")

func newSSEReader(r io.Reader, maxEvent int) *sseReader {
	if maxEvent <= 0 {
		maxEvent = defaultMaxEvent
	}
	return &sseReader{r: r, buf: make([]byte, sseInitialBuffer), maxEvent: maxEvent}
}

// next returns the data of the next event. The slice is valid until the
// following call. At the end of the body it returns the reading error
// (io.EOF for a clean end); a final event without its blank line is
// dropped, as the SSE rules say, except by the caller's own check (see
// pending).
func (s *sseReader) next() ([]byte, error) {
	s.data = s.data[:0]
	s.hasData = false
	for {
		line, err := s.line()
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			if s.hasData {
				return s.data, nil
			}
			continue // blank lines between events, or an event of comments only
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		if string(field) != "data" {
			continue
		}
		if len(s.data)+len(value)+1 > s.maxEvent {
			return nil, errEventTooLarge
		}
		if s.hasData {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, value...)
		s.hasData = true
	}
}

// pending is the data of an event cut off by the end of the body (no
// blank line after it); callers use it to accept a final "[DONE]" whose
// blank line a sloppy server left out.
func (s *sseReader) pending() ([]byte, bool) { return s.data, s.hasData }

// line returns the next line without its terminator; the slice points
// into the buffer and is valid until the next call.
func (s *sseReader) line() ([]byte, error) {
	for {
		// buf[start:scan] is known to hold no \r or \n, so a long line
		// arriving in small reads is scanned once, not once per read.
		region := s.buf[s.scan:s.end]
		if i := indexLineEnd(region); i >= 0 {
			pos := s.scan + i
			next := pos + 1
			if s.buf[pos] == '\r' {
				if next == s.end && !s.eof {
					// A \r that may be the first half of \r\n: wait for the
					// next byte.
					s.scan = pos
					if err := s.fill(); err != nil {
						return nil, err
					}
					continue
				}
				if next < s.end && s.buf[next] == '\n' {
					next++
				}
			}
			line := s.buf[s.start:pos]
			s.start, s.scan = next, next
			return line, nil
		}
		s.scan = s.end
		if s.eof {
			if s.start < s.end {
				// The last line of a body without a final newline.
				line := s.buf[s.start:s.end]
				s.start = s.end
				return line, nil
			}
			return nil, s.readErr
		}
		if err := s.fill(); err != nil {
			return nil, err
		}
	}
}

// indexLineEnd is the index of the first \r or \n in b, or -1.
func indexLineEnd(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	search := b
	if i >= 0 {
		search = b[:i]
	}
	if j := bytes.IndexByte(search, '\r'); j >= 0 {
		return j
	}
	return i
}

// fill reads more of the body into the free end of the buffer, first
// moving the unread bytes to the front or growing the buffer when it is
// full.
func (s *sseReader) fill() error {
	if s.end == len(s.buf) {
		if s.start > 0 {
			n := copy(s.buf, s.buf[s.start:s.end])
			s.scan -= s.start
			s.start, s.end = 0, n
		} else {
			if len(s.buf) >= s.maxEvent {
				return errEventTooLarge
			}
			grown := make([]byte, min(2*len(s.buf), s.maxEvent))
			copy(grown, s.buf[:s.end])
			s.buf = grown
		}
	}
	for range 100 {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.eof, s.readErr = true, err
			return nil
		}
		if n > 0 {
			return nil
		}
	}
	s.eof, s.readErr = true, fmt.Errorf("reading the event stream: %w", io.ErrNoProgress)
	return nil
}
