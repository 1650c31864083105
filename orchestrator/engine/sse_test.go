package engine

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// readAllEvents runs an sseReader to the end and returns the events and
// what was left pending.
func readAllEvents(t *testing.T, r io.Reader) (events []string, pending string, err error) {
	t.Helper()
	s := newSSEReader(r, 4<<20)
	for {
		data, err := s.next()
		if err != nil {
			if p, ok := s.pending(); ok {
				pending = string(p)
			}
			return events, pending, err
		}
		events = append(events, string(data))
	}
}

func TestSSEFraming(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		pending string
	}{
		{"single event", "data: {\"a\":1}\n\n", []string{`{"a":1}`}, ""},
		{"two events and done", "data: 1\n\ndata: 2\n\ndata: [DONE]\n\n", []string{"1", "2", "[DONE]"}, ""},
		{"crlf", "data: 1\r\n\r\ndata: 2\r\n\r\n", []string{"1", "2"}, ""},
		{"bare cr", "data: 1\r\rdata: 2\r\r", []string{"1", "2"}, ""},
		{"mixed endings", "data: 1\r\n\ndata: 2\r\r\ndata: 3\n\r", []string{"1", "2", "3"}, ""},
		{"comments ignored", ": ping\n\n: keep-alive\ndata: 1\n: inside\n\n", []string{"1"}, ""},
		{"multi-line data joined", "data: {\"a\":\ndata: 1}\n\n", []string{"{\"a\":\n1}"}, ""},
		{"no space after colon", "data:1\n\n", []string{"1"}, ""},
		{"only one space stripped", "data:  1\n\n", []string{" 1"}, ""},
		{"other fields ignored", "event: message\nid: 7\nretry: 10\ndata: 1\n\n", []string{"1"}, ""},
		{"field without colon", "data\n\n", []string{""}, ""},
		{"unknown field without colon", "bogus\ndata: 1\n\n", []string{"1"}, ""},
		{"leading blank lines", "\n\n\r\ndata: 1\n\n", []string{"1"}, ""},
		{"event of comments only", ": a\n: b\n\ndata: 1\n\n", []string{"1"}, ""},
		{"done without blank line at end", "data: 1\n\ndata: [DONE]\n", []string{"1"}, "[DONE]"},
		{"done without newline at end", "data: 1\n\ndata: [DONE]", []string{"1"}, "[DONE]"},
		{"cut-off event", "data: 1\n\ndata: {\"trunc", []string{"1"}, "{\"trunc"},
		{"empty body", "", nil, ""},
		{"data colon inside value", "data: a:b\n\n", []string{"a:b"}, ""},
		{"field name is case sensitive", "Data: 1\n\ndata: 2\n\n", []string{"2"}, ""},
	}
	readers := map[string]func(string) io.Reader{
		"whole":    func(s string) io.Reader { return strings.NewReader(s) },
		"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"half":     func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
		"data+eof": func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) },
	}
	for _, tt := range tests {
		for rname, mk := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				got, pending, err := readAllEvents(t, mk(tt.in))
				if err != io.EOF {
					t.Fatalf("err = %v, want io.EOF", err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("events = %q, want %q", got, tt.want)
				}
				if pending != tt.pending {
					t.Errorf("pending = %q, want %q", pending, tt.pending)
				}
			})
		}
	}
}

func TestSSEReadErrorSurfaces(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: 1\n\ndata: 2"), iotest.ErrReader(boom))
	got, pending, err := readAllEvents(t, r)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if !reflect.DeepEqual(got, []string{"1"}) || pending != "2" {
		t.Errorf("events %q pending %q", got, pending)
	}
}

func TestSSEEventSizeLimit(t *testing.T) {
	big := "data: " + strings.Repeat("x", 5000) + "\n\n"
	s := newSSEReader(strings.NewReader(big), 4096)
	if _, err := s.next(); !errors.Is(err, errEventTooLarge) {
		t.Fatalf("err = %v, want errEventTooLarge", err)
	}
	// Many data lines, each small, still add up to one event.
	lines := strings.Repeat("data: "+strings.Repeat("y", 100)+"\n", 50) + "\n"
	s = newSSEReader(strings.NewReader(lines), 4096)
	if _, err := s.next(); !errors.Is(err, errEventTooLarge) {
		t.Fatalf("multi-line err = %v, want errEventTooLarge", err)
	}
}

func TestSSELargeEventGrowsBuffer(t *testing.T) {
	payload := strings.Repeat("z", 3*sseInitialBuffer)
	got, _, err := readAllEvents(t, iotest.HalfReader(strings.NewReader("data: "+payload+"\n\ndata: 2\n\n")))
	if err != io.EOF || len(got) != 2 || got[0] != payload || got[1] != "2" {
		t.Fatalf("got %d events, err %v", len(got), err)
	}
}

// zeroReader returns no data and no error forever.
type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestSSENoProgress(t *testing.T) {
	_, _, err := readAllEvents(t, zeroReader{})
	if !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("err = %v, want io.ErrNoProgress", err)
	}
}

// A long event arriving a byte at a time must cost linear time: the reader
// neither rescans nor recopies what it already holds.
func TestSSELongLineInSmallReadsIsLinear(t *testing.T) {
	payload := strings.Repeat("w", 2<<20)
	var got []string
	var err error
	within(t, 5*time.Second, "2 MiB event read a byte at a time", func() {
		got, _, err = readAllEvents(t, iotest.OneByteReader(strings.NewReader("data: "+payload+"\r\n\r\n")))
	})
	if err != io.EOF || len(got) != 1 || len(got[0]) != len(payload) {
		t.Fatalf("got %d events, err %v", len(got), err)
	}
}
