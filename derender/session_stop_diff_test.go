package derender

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// runStops feeds text in the given chunk sizes to both matchers (the
// first minTok chunks unchecked) and reports the first difference.
func diffStops(t *testing.T, text string, stops []string, include bool, sizes []int, unchecked int) {
	t.Helper()
	cfg := StopConfig{Stop: stops, IncludeInOutput: include}
	got, want := newStopText(cfg), newNaiveStopText(cfg)
	runes := []rune(text)
	for i, c := 0, 0; i < len(runes); c++ {
		n := max(sizes[c%len(sizes)], 1)
		piece := string(runes[i:min(i+n, len(runes))])
		i += n
		final := i >= len(runes)
		check := c >= unchecked
		checked := len(piece)
		if check && c == unchecked && len(piece) > 1 {
			checked = len(piece) - len(string([]rune(piece)[0])) // first rune unchecked
		}
		g, gm, gok := got.push(piece, checked, check, final)
		w, wm, wok := want.push(piece, checked, check, final)
		if g != w || gm != wm || gok != wok {
			t.Fatalf("text %q stops %q include %v sizes %v chunk %d: got %q %q %v, want %q %q %v",
				text, stops, include, sizes, c, g, gm, gok, w, wm, wok)
		}
		if gok {
			return
		}
		wide := 0
		for _, b := range got.buf[got.rel:got.n] {
			wide += int(b >> 7)
		}
		if got.wide != wide {
			t.Fatalf("text %q stops %q chunk %d: %d non-ASCII bytes counted unreleased, %d are", text, stops, c, got.wide, wide)
		}
	}
}

func TestStopTextMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("abcé😀 ")
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 20000 {
		stops := make([]string, 1+r.IntN(5))
		for i := range stops {
			stops[i] = word(r.IntN(6))
		}
		sizes := []int{1 + r.IntN(4), 1 + r.IntN(7)}
		diffStops(t, word(r.IntN(40)), stops, r.IntN(2) == 0, sizes, r.IntN(3))
	}
}

func FuzzStopText(f *testing.F) {
	f.Add("one two three", "three\x00two", false, uint8(2), uint8(0))
	f.Add("a😀b😀c", "😀c", true, uint8(1), uint8(1))
	f.Add("abcabcabd", "abd\x00\x00bca", false, uint8(3), uint8(2))
	f.Fuzz(func(t *testing.T, text, stopList string, include bool, size, unchecked uint8) {
		if !utf8.ValidString(text) || !utf8.ValidString(stopList) || len(stopList) > 200 {
			t.Skip() // decoded text and JSON stop strings are valid UTF-8
		}
		stops := strings.Split(stopList, "\x00")
		diffStops(t, text, stops, include, []int{int(size%8) + 1, int(size/8%8) + 1}, int(unchecked%4))
	})
}

// TestStopTextMatchesNaiveWide covers what small stop lists do not reach:
// nodes with enough children for dense rows, many stops sharing prefixes
// (fail chains through lazily expanded nodes), duplicates, and texts long
// enough to collide in the transition memo.
func TestStopTextMatchesNaiveWide(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	word := func(n, width int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(width)]
		}
		return string(b)
	}
	for range 300 {
		width := 6 + r.IntN(len(alphabet)-5)
		stops := make([]string, 1+r.IntN(400))
		for i := range stops {
			stops[i] = word(3+r.IntN(12), width)
		}
		text := word(200+r.IntN(3000), width)
		diffStops(t, text, stops, r.IntN(2) == 0, []int{1 + r.IntN(4), 1 + r.IntN(9)}, r.IntN(3))
	}
}

// TestStopTextBounds drives the automaton past its per-request bounds
// (maxDFARows transition rows, maxWideRows lazy child rows), so that the
// rest of the text goes through the trie walk, and checks the answer
// against a whole-text search: fed one byte per push, the first match is
// the stop ending earliest, the lowest index among those ending there.
func TestStopTextBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "ab"[r.IntN(2)]
		}
		return string(b)
	}
	stops := make([]string, 12000)
	for i := range stops {
		stops[i] = word(40)
	}
	text := word(30000) + stops[7777] + word(50)
	wantEnd, wantStop := len(text)+1, -1
	for i, s := range stops {
		if j := strings.Index(text, s); j >= 0 && (j+len(s) < wantEnd || j+len(s) == wantEnd && i < wantStop) {
			wantEnd, wantStop = j+len(s), i
		}
	}
	if wantStop < 0 {
		t.Fatal("no stop in the text")
	}
	st := newStopText(StopConfig{Stop: stops})
	var out strings.Builder
	for i := 0; i < len(text); i++ {
		got, stop, ok := st.push(text[i:i+1], 1, true, false)
		out.WriteString(got)
		if ok {
			if stop != stops[wantStop] || i+1 != wantEnd {
				t.Fatalf("matched %q ending at %d, want stop %d ending at %d", stop, i+1, wantStop, wantEnd)
			}
			break
		}
	}
	if want := text[:wantEnd-len(stops[wantStop])]; out.String() != want {
		t.Fatalf("released %d bytes, want %d", out.Len(), len(want))
	}
	if rows, wide := len(st.ac.dfaNode), st.ac.wideRows; rows != maxDFARows || wide != maxWideRows {
		t.Fatalf("%d transition rows and %d wide rows: the bounds (%d, %d) were not reached", rows, wide, maxDFARows, maxWideRows)
	}
}
