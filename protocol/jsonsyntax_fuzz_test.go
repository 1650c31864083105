package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vrender/vrender/internal/wire"
)

// FuzzWireValidMatchesReference: internal/wire's scanner, validating
// (ParseJSONBody) and building the tree (ParseJSONTree), gives exactly the
// answer of the scanner it replaced (refParseJSONBody): the same accepted
// text or the same error, message and position; and an accepted tree holds
// what encoding/json decodes from the same text.
func FuzzWireValidMatchesReference(f *testing.F) {
	for _, s := range []string{`{}`, `{"prompt":"hi"}`, `[1,2.5e3,-0,"\u00e9"]`, `{"a":`, `"\ud800"`, `01`, `[1,]`,
		"\ufeff{}", `{"a" "b"}`, `tru`, ` `, `{"a":1,"a":2,"b":3}`, `"\ud83d\ude00x\n"`, `1e`, `-`, `[1.5e+3, 1E-2]`,
		`{"messages":[{"role":"user","content":"x\ty"}]}`, `"\u00zz"`, `"a\x01"`, `[[[[]]]]`, `{"k":[true,false,null]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := refParseJSONBody(data)
		got, err := ParseJSONBody(data)
		if !reflect.DeepEqual(err, wantErr) || !bytes.Equal(got, want) {
			t.Fatalf("%q: ParseJSONBody = %q, %v; reference %q, %v", data, got, err, want, wantErr)
		}
		text, root, err := ParseJSONTree(data)
		if !reflect.DeepEqual(err, wantErr) || !bytes.Equal(text, want) {
			t.Fatalf("%q: ParseJSONTree err = %v; reference %v", data, err, wantErr)
		}
		if err != nil {
			return
		}
		if !bytes.Equal(root.Raw, bytes.TrimSpace(want)) {
			t.Fatalf("%q: root.Raw = %q", data, root.Raw)
		}
		var v any
		d := json.NewDecoder(bytes.NewReader(want))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%q: accepted, but encoding/json: %v", data, err)
		}
		if g := treeAny(root); !reflect.DeepEqual(g, v) {
			t.Fatalf("%q: tree %#v, encoding/json %#v", data, g, v)
		}
	})
}

// treeAny is a tree as encoding/json's generic decode makes it.
func treeAny(n *wire.Node) any {
	switch n.Kind {
	case wire.Bool:
		return n.B
	case wire.Number:
		return json.Number(n.S)
	case wire.String:
		return n.S
	case wire.Array:
		out := make([]any, len(n.Arr))
		for i, c := range n.Arr {
			out[i] = treeAny(c)
		}
		return out
	case wire.Object:
		out := make(map[string]any, len(n.Keys))
		for i, k := range n.Keys {
			out[k] = treeAny(n.Vals[i])
		}
		return out
	}
	return nil
}

func TestWireParseDuplicateKeys(t *testing.T) {
	_, root, err := ParseJSONTree([]byte(`{"a":1,"b":2,"a":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := root.Keys; !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("keys %q, want first positions [a b]", got)
	}
	if root.Vals[0].S != "3" {
		t.Fatalf("a = %s, want the last value 3", root.Vals[0].S)
	}
	if _, _, err := ParseJSONTree(bytes.Repeat([]byte("["), wire.MaxDepth+1)); !errors.Is(err, ErrBodyNotParsable) {
		t.Fatalf("too deep: %v", err)
	}
}

// FuzzBodyText: the ASCII fast path accepts exactly what utf8.Valid does.
func FuzzBodyText(f *testing.F) {
	for _, s := range []string{"", "{}", `{"a":"é"}`, "\xef\xbb\xbf{}", "{\"a\":\"\xff\"}", "\xed\xa0\x80", "\x7f\x80",
		strings.Repeat("data:image/jpeg;base64,QUJD", 40) + "\xc3"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := bodyText(b)
		if want := utf8.Valid(bytes.TrimPrefix(b, utf8BOM)); (err == nil) != want {
			t.Fatalf("%q: bodyText error %v, utf8.Valid %v", b, err, want)
		}
	})
}

// BenchmarkBodyText checks the body of a request with a 140 KB photo's
// data URL; "utf8.Valid" is the check alone, as it was.
func BenchmarkBodyText(b *testing.B) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,` +
		strings.Repeat("/9j/4AAQSkZJRgABAQ", 140<<10/18*4/3) + `"}}]}]}`)
	b.Run("bodyText", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := bodyText(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("utf8.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !utf8.Valid(body) {
				b.Fatal("invalid")
			}
		}
	})
}
