package engine

import (
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/vrender/vrender/protocol"
)

// referenceSSE is a direct transcription of the WHATWG event-stream rules
// over a whole body, to check the incremental reader against.
func referenceSSE(in string) (events []string, pending string) {
	var lines []string
	for len(in) > 0 {
		i := strings.IndexAny(in, "\r\n")
		if i < 0 {
			lines = append(lines, in) // a final line without terminator
			break
		}
		lines = append(lines, in[:i])
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			i++
		}
		in = in[i+1:]
	}
	var data []string
	has := false
	for _, l := range lines {
		switch {
		case l == "":
			if has {
				events = append(events, strings.Join(data, "\n"))
			}
			data, has = nil, false
		case l[0] == ':':
		default:
			field, value, found := strings.Cut(l, ":")
			if found {
				value = strings.TrimPrefix(value, " ")
			}
			if field == "data" {
				data, has = append(data, value), true
			}
		}
	}
	if has {
		pending = strings.Join(data, "\n")
	}
	return events, pending
}

// chunkReader returns the input in chunks whose sizes cycle through
// sizes.
type chunkReader struct {
	s     string
	sizes []byte
	n     int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	size := 1 + int(r.sizes[r.n%len(r.sizes)])
	r.n++
	size = min(size, len(p), len(r.s))
	copy(p, r.s[:size])
	r.s = r.s[size:]
	return size, nil
}

func FuzzSSEReader(f *testing.F) {
	f.Add("data: 1\n\ndata: [DONE]\n\n", []byte{3})
	f.Add("data: {\"a\":\r\ndata: 1}\r\n\r\n: c\rdata:x\r\r", []byte{0, 5, 1})
	f.Add("event: e\nid\ndata\n\ndata: 2", []byte{7})
	f.Add("\r\n\r\r\n\ndata:  sp\n\n", []byte{0})
	f.Fuzz(func(t *testing.T, in string, sizes []byte) {
		if len(sizes) == 0 {
			sizes = []byte{0}
		}
		wantEvents, wantPending := referenceSSE(in)
		for _, r := range []io.Reader{strings.NewReader(in), &chunkReader{s: in, sizes: sizes}, iotest.OneByteReader(strings.NewReader(in))} {
			got, pending, err := readAllEvents(t, r)
			if err != io.EOF {
				t.Fatalf("err = %v", err)
			}
			if !reflect.DeepEqual(got, wantEvents) && !(len(got) == 0 && len(wantEvents) == 0) {
				t.Fatalf("events %q, reference %q", got, wantEvents)
			}
			if pending != wantPending {
				t.Fatalf("pending %q, reference %q", pending, wantPending)
			}
		}
	})
}

// FuzzDecodeEvent checks that whatever the fast path accepts,
// encoding/json accepts and decodes to the same value, and that decode
// never panics.
func FuzzDecodeEvent(f *testing.F) {
	for _, s := range []string{eventOneToken, eventFinish, eventUsage, eventLogprobs, eventOldLogps, eventEcho,
		`{"error":{"message":"x","code":500}}`, `{"choices":[{"token_ids":[1,-2,0]}]}`, `{"Usage":{}}`, `{"a":[[[]]]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var d eventDecoder
		fast := new(protocol.GenerateResponse)
		fastErr := d.fast([]byte(in), fast)
		_, _ = d.decode([]byte(in))
		if fastErr != nil {
			return
		}
		want := new(protocol.GenerateResponse)
		if err := json.Unmarshal([]byte(in), want); err != nil {
			t.Fatalf("fast path accepted what encoding/json rejects (%v)", err)
		}
		if g, w := marshalForCompare(t, fast), marshalForCompare(t, want); g != w {
			t.Fatalf("fast %s\njson %s", g, w)
		}
	})
}
