package wire

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// readTree builds the tree of a document with the Reader alone, so that
// it can be compared with Parse's.
func readTree(data []byte) (*Node, error) {
	r := NewReader(data)
	n, err := readNode(r)
	if err != nil {
		return nil, err
	}
	return n, r.End()
}

func readNode(r *Reader) (*Node, error) {
	k, ok := r.Kind()
	if !ok {
		_, err := r.Raw() // the syntax error
		return nil, err
	}
	switch k {
	case Null:
		if !r.Null() {
			_, err := r.Raw()
			return nil, err
		}
		return &Node{Kind: Null}, nil
	case Bool:
		b, err := r.Bool()
		return &Node{Kind: Bool, B: b}, err
	case Number:
		s, err := r.Number()
		return &Node{Kind: Number, S: s}, err
	case String:
		s, err := r.String()
		return &Node{Kind: String, S: s}, err
	case Array:
		n := &Node{Kind: Array, Arr: []*Node{}}
		err := r.Array(func() error {
			v, err := readNode(r)
			n.Arr = append(n.Arr, v)
			return err
		})
		return n, err
	}
	n := &Node{Kind: Object}
	err := r.Object(func(key string) error {
		v, err := readNode(r)
		n.Set(key, v)
		return err
	})
	return n, err
}

// dump writes a tree's kinds, keys and values (not Raw or Depth).
func dump(b *strings.Builder, n *Node) {
	switch n.Kind {
	case Null:
		b.WriteString("null")
	case Bool:
		fmt.Fprint(b, n.B)
	case Number:
		b.WriteString("#" + n.S)
	case String:
		b.WriteString(strconv.Quote(n.S))
	case Array:
		b.WriteByte('[')
		for _, v := range n.Arr {
			dump(b, v)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		for i, k := range n.Keys {
			b.WriteString(strconv.Quote(k) + ":")
			dump(b, n.Vals[i])
			b.WriteByte(',')
		}
		b.WriteByte('}')
	}
}

// checkReaderMatchesParse fails unless reading data with the Reader gives
// Parse's tree, or Parse's error.
func checkReaderMatchesParse(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := Parse(data)
	got, err := readTree(data)
	if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("%q: Reader err %v, Parse err %v", data, err, wantErr)
	}
	if err != nil {
		return
	}
	var g, w strings.Builder
	dump(&g, got)
	dump(&w, want)
	if g.String() != w.String() {
		t.Fatalf("%q: Reader %s\nParse %s", data, g.String(), w.String())
	}
}

var readerSeeds = []string{
	`{"request_id":"r","choices":[{"index":0,"token_ids":[1,2,3],"finish_reason":null}],"usage":null}`,
	` { "a" : [ 1 , -2.5e+3 , true , false , null , "s\"\\\u00e9\ud83d\ude00" ] , "b" : { } , "a" : [ ] } `,
	`"\ud800x"`, "\"\xff\xfe\"", `[1e]`, `[1.]`, `[-]`, `[01]`, `{"a" 1}`, `{"a":}`, `{"a":1,}`, `[1,]`,
	`{'a':1}`, `[1] x`, `NaN`, `"abc`, "\"a\x01\"", `"\q"`, `"\u12"`, `"\ud800\u12"`, `[tru]`, `nul`, ``, ` `,
	`{"model":{"vocab":{"a":0,"b":1},"merges":["a b",["a","b"]]}}`,
}

func TestReaderMatchesParse(t *testing.T) {
	for _, s := range readerSeeds {
		checkReaderMatchesParse(t, []byte(s))
	}
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	checkReaderMatchesParse(t, []byte(deep))
	tooDeep := strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1)
	if _, err := readTree([]byte(tooDeep)); !errors.Is(err, ErrTooDeep) {
		t.Errorf("too deep: %v", err)
	}
	checkReaderMatchesParse(t, []byte(tooDeep))
}

func FuzzReader(f *testing.F) {
	for _, s := range readerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkReaderMatchesParse(t, data) })
}

func TestReaderTypedValues(t *testing.T) {
	r := NewReader([]byte(`{"i":-12,"big":9223372036854775807,"s":"x\ny","raw":{"a": [1]},"skipped":[{}],"n":null,"f":1.5}`))
	var got []string
	err := r.Object(func(key string) error {
		switch key {
		case "i", "big":
			n, err := r.Int()
			got = append(got, fmt.Sprint(key, "=", n))
			return err
		case "s":
			s, err := r.String()
			got = append(got, key+"="+s)
			return err
		case "raw":
			raw, err := r.Raw()
			got = append(got, key+"="+string(raw))
			return err
		case "n":
			got = append(got, fmt.Sprint(key, "=", r.Null()))
		case "f":
			lit, err := r.Number()
			got = append(got, key+"="+lit)
			return err
		}
		return nil // skipped
	})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint([]string{"i=-12", fmt.Sprint("big=", math.MaxInt64), "s=x\ny", `raw={"a": [1]}`, "n=true", "f=1.5"})
	if fmt.Sprint(got) != want {
		t.Errorf("got %v, want %v", got, want)
	}
	if err := r.End(); err != nil {
		t.Fatal(err)
	}
}

func TestReaderValueErrors(t *testing.T) {
	for _, tt := range []struct {
		in   string
		read func(*Reader) error
		msg  string
	}{
		{`[1.5]`, readInts, "Expecting an integer (char 1)"},
		{`[1e3]`, readInts, "Expecting an integer (char 1)"},
		{`[ 9223372036854775808]`, readInts, "Integer out of range (char 2)"},
		{`["a"]`, readInts, "Expecting a number (char 1)"},
		{`[é, 1]`, readInts, "Expecting value (char 1)"},
		{`[1 2]`, readInts, "Expecting ',' delimiter (char 3)"},
		{`{"a":1}`, readInts, "Expecting an array (char 0)"},
		{`[1]`, func(r *Reader) error { _, err := r.String(); return err }, "Expecting a string (char 0)"},
		{`1`, func(r *Reader) error { return r.Object(func(string) error { return nil }) }, "Expecting an object (char 0)"},
		{`[1] 2`, func(r *Reader) error { r.Skip(); return r.End() }, "Extra data (char 4)"},
		{`{"a":1 "b"}`, func(r *Reader) error { return r.Object(func(string) error { return nil }) }, "Expecting ',' delimiter (char 7)"},
	} {
		err := tt.read(NewReader([]byte(tt.in)))
		if err == nil || err.Error() != tt.msg {
			t.Errorf("%s: err %v, want %q", tt.in, err, tt.msg)
		}
	}
}

func readInts(r *Reader) error {
	return r.Array(func() error { _, err := r.Int(); return err })
}

// TestReaderStringsOutliveReset: escaped strings live in an arena that is
// only appended to, so a string read from one document survives reading
// the next with the same Reader.
func TestReaderStringsOutliveReset(t *testing.T) {
	var r Reader
	var kept []string
	for i := range 3000 {
		r.Reset([]byte(`"a\n` + strings.Repeat("b", i%50) + `"`))
		s, err := r.String()
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, s)
	}
	for i, s := range kept {
		if s != "a\n"+strings.Repeat("b", i%50) {
			t.Fatalf("string %d = %q", i, s)
		}
	}
}

func BenchmarkReaderInts(b *testing.B) {
	var sb strings.Builder
	sb.WriteByte('[')
	for i := range 4096 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(100000 + i*37))
	}
	sb.WriteByte(']')
	data := []byte(sb.String())
	var r Reader
	ids := make([]int, 0, 4096)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(data)
		ids = ids[:0]
		if err := r.Array(func() error {
			n, err := r.Int()
			ids = append(ids, n)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}
