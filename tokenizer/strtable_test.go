package tokenizer

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// checkStrIndex holds newStrIndex(keys, vals) to a Go map built the same
// way (later duplicates win): every key, its value, the size, the iteration
// and keys that are absent.
func checkStrIndex(t *testing.T, keys []string, probes []string) {
	t.Helper()
	var b strListBuilder
	vals := make([]int32, len(keys))
	want := map[string]int32{}
	for i, k := range keys {
		b.add(k)
		vals[i] = int32(i * 7)
		want[k] = vals[i]
	}
	x := newStrIndex(b.list(), vals)
	if x.len() != len(want) {
		t.Fatalf("len %d, want %d", x.len(), len(want))
	}
	got := map[string]int32{}
	for k, v := range x.all {
		if _, dup := got[k]; dup {
			t.Fatalf("all yields %q twice", k)
		}
		got[k] = v
	}
	if !maps.Equal(got, want) {
		t.Fatalf("all = %v, want %v", got, want)
	}
	for _, p := range append(probes, keys...) {
		v, ok := x.get(p)
		w, wok := want[p]
		if v != w || ok != wok {
			t.Fatalf("get(%q) = %d, %v; want %d, %v", p, v, ok, w, wok)
		}
	}
}

func TestStrIndex(t *testing.T) {
	many := make([]string, 5000)
	for i := range many {
		many[i] = fmt.Sprintf("tok%d", i)
	}
	cases := []struct {
		name         string
		keys, probes []string
	}{
		{"empty", nil, []string{"", "a"}},
		{"empty key", []string{"", "a"}, []string{"b", "aa"}},
		{"duplicates, last wins", []string{"a", "b", "a", "c", "b", "a"}, []string{"d"}},
		{"prefixes", []string{"ab", "abc", "a", "abcd"}, []string{"abcde", "b", "bc"}},
		{"many", many, []string{"tok5000", "tok", "tok-1"}},
		{"unicode", []string{"▁▁", "Ġhello", "日本", "\x00", "\xff"}, []string{"▁", "日"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkStrIndex(t, c.keys, c.probes) })
	}
}

func TestStrList(t *testing.T) {
	in := []string{"", "a", "", "bcd", "▁x", ""}
	var b strListBuilder
	for _, s := range in {
		b.add(s)
	}
	l := b.list()
	if l.len() != len(in) {
		t.Fatalf("len %d, want %d", l.len(), len(in))
	}
	for i, s := range in {
		if got := l.at(i); got != s {
			t.Errorf("at(%d) = %q, want %q", i, got, s)
		}
	}
}

// FuzzStrIndex holds the index to a Go map on keys cut from the input at
// each '|' (so duplicates and empty keys come up), probed with every key
// and every prefix of the input.
func FuzzStrIndex(f *testing.F) {
	f.Add("a|b|a||c")
	f.Add("▁|▁▁|Ġ|x|x")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		keys := strings.Split(s, "|")
		var probes []string
		for i := range min(len(s), 64) {
			probes = append(probes, s[:i])
		}
		checkStrIndex(t, keys, probes)
	})
}

// TestTokenizerPointers counts the pointers a loaded tokenizer holds, the
// work the garbage collector repeats on every cycle: strList and strIndex
// exist to keep it far below a pointer per vocabulary entry (qwen3's maps and
// token lists held ~450,000, three per token, and cost ~10 ms a cycle; after,
// a cycle with the model loaded costs 1.6 ms against 0.6 ms without). The
// bound leaves room for gemma3's 6,415 added tokens, five pointers each.
func TestTokenizerPointers(t *testing.T) {
	for _, name := range []string{"qwen3", "llama3_1", "deepseek_v3", "gptoss", "gemma3"} {
		t.Run(name, func(t *testing.T) {
			tok := loadModel(t, name)
			c := pointerCounter{seen: map[uintptr]bool{}, by: map[string]int{}}
			c.walk(reflect.ValueOf(tok), "Tokenizer")
			if limit := tok.Len() / 4; c.total > limit {
				t.Errorf("%d pointers for %d tokens, want at most %d; the largest holders: %v", c.total, tok.Len(), limit, c.top(5))
			}
		})
	}
}

// pointerCounter walks a value the way the collector marks it, counting the
// pointer words it meets (strings, slices, maps, pointers, interfaces) by the
// field path that holds them.
type pointerCounter struct {
	seen  map[uintptr]bool
	by    map[string]int
	total int
}

func (c *pointerCounter) count(path string, n int) {
	c.by[path] += n
	c.total += n
}

func (c *pointerCounter) walk(v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.String:
		if v.Len() > 0 {
			c.count(path, 1)
		}
	case reflect.Pointer, reflect.UnsafePointer:
		if v.IsNil() {
			return
		}
		c.count(path, 1)
		if v.Kind() == reflect.UnsafePointer || c.seen[v.Pointer()] {
			return
		}
		c.seen[v.Pointer()] = true
		c.walk(v.Elem(), path)
	case reflect.Interface:
		if !v.IsNil() {
			c.count(path, 1)
			c.walk(v.Elem(), path)
		}
	case reflect.Slice:
		if v.IsNil() {
			return
		}
		c.count(path, 1)
		if v.Len() == 0 || c.seen[v.Pointer()] {
			return
		}
		c.seen[v.Pointer()] = true
		fallthrough
	case reflect.Array:
		for i := range v.Len() {
			c.walk(v.Index(i), path+"[]")
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		c.count(path, 1)
		it := v.MapRange()
		for it.Next() {
			c.walk(it.Key(), path+"{k}")
			c.walk(it.Value(), path+"{v}")
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[sync.Pool]() {
			return // pooled scratch: transient, and not the model's
		}
		for i := range v.NumField() {
			c.walk(v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	}
}

func (c *pointerCounter) top(n int) []string {
	paths := slices.Collect(maps.Keys(c.by))
	slices.SortFunc(paths, func(a, b string) int { return c.by[b] - c.by[a] })
	var out []string
	for _, p := range paths[:min(n, len(paths))] {
		out = append(out, fmt.Sprintf("%s: %d", p, c.by[p]))
	}
	return out
}
