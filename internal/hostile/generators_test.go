package hostile

import (
	"encoding/json"
	"io"
	"runtime"
	"testing"
)

func TestGenerators(t *testing.T) {
	tests := []struct {
		gen, body, want string
		wantErr         bool
	}{
		{gen: "deep_array:3", want: "[[[]]]"},
		{gen: "deep_object:2", want: `{"a":{"a":1}}`},
		{gen: "big_string:5", want: `"aaaaa"`},
		{gen: "int_list:3:-1", body: `{"p":@@}`, want: `{"p":[-1,-1,-1]}`},
		{gen: "int_list:0:1", want: `[]`},
		{gen: "str_list:2:a\"b", want: `["a\"b","a\"b"]`},
		{gen: "hex:7b 22 ff 7d", want: "{\"\xff}"},
		{gen: "nope:1", wantErr: true},
		{gen: "deep_array:-1", wantErr: true},
		{gen: "deep_array:1", body: `{"a":1}`, wantErr: true},
		{gen: "deep_array:1", body: `@@@@`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.gen, func(t *testing.T) {
			r, err := Expand(&Case{Gen: tt.gen, Body: tt.body}, Generators())
			if tt.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("got %q, want %q", b, tt.want)
			}
		})
	}
}

// The 100 MB generator must stream: reading it allocates a small buffer,
// not the body.
func TestBigStringStreams(t *testing.T) {
	const n = 100 << 20
	r, err := Expand(&Case{Gen: "big_string:104857600", Body: `{"prompt":@@}`}, Generators())
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := io.Copy(io.Discard, r)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("streaming 100 MB allocated %d bytes", alloc)
	}
	if want := int64(n + len(`{"prompt":""}`)); got != want {
		t.Fatalf("streamed %d bytes, want %d", got, want)
	}
}

func TestDeepArrayIsJSON(t *testing.T) {
	r, _ := Expand(&Case{Gen: "deep_array:100", Body: `{"x":@@}`}, Generators())
	b, _ := io.ReadAll(r)
	if !json.Valid(b) {
		t.Fatalf("not JSON: %.40s", b)
	}
}
