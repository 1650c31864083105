package parsers

import (
	"fmt"
	"strings"
	"testing"
)

func TestCallArenaSlicesAreDisjoint(t *testing.T) {
	var a callArena
	var got [][]ToolCallDelta
	for i := range 3 * arenaBlock {
		calls := append(a.free(), ToolCallDelta{Index: i, Arguments: "a"})
		if i%5 == 0 {
			calls = append(calls, ToolCallDelta{Index: i, Arguments: "b"})
		}
		calls = a.commit(calls)
		if cap(calls) != len(calls) {
			t.Fatalf("push %d: slice not capped: len %d cap %d", i, len(calls), cap(calls))
		}
		got = append(got, calls)
		// A caller appending to a handed-out slice must not touch the
		// arena's next slot.
		_ = append(calls, ToolCallDelta{Index: -1})
	}
	for i, calls := range got {
		if calls[0].Index != i || calls[0].Arguments != "a" || i%5 == 0 && (len(calls) != 2 || calls[1].Arguments != "b") {
			t.Fatalf("push %d: overwritten: %+v", i, calls)
		}
	}
	if a.commit(a.free()) != nil {
		t.Fatal("an empty push should give nil")
	}
}

// TestKeptDeltasSurvive keeps every delta of a one-byte stream and joins
// them only at the end: deltas carved from the arena must not be
// overwritten by later pushes.
func TestKeptDeltasSurvive(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		tools string
		text  string
		calls int
	}{
		{"hermes", qwen3Hermes, weatherTools, "<think>\nhm\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"" +
			strings.Repeat("Paris \\\"x\\\"\\n", 40) + "\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"days\": 3}}\n</tool_call>", 2},
		{"qwen3_coder", qcQwen3, qcTools, "<think>\nhm\n</think>\n\n" + qcBuild("get_weather", "city", strings.Repeat("Paris ", 40), "date", "2026-04-29") +
			qcBuild("get_weather", "city", "SF"), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := mustRequest(t, tc.tools)
			want, _ := runSplits(t, tc.cfg, req, tc.text, nil)
			if len(want.ToolCalls) != tc.calls {
				t.Fatalf("want %d calls, got %s", tc.calls, dump(want))
			}
			p, err := New(tc.cfg, testVocab, req, nil)
			if err != nil {
				t.Fatal(err)
			}
			p.SetStreaming()
			var kept []Delta
			for i := range len(tc.text) {
				kept = append(kept, pushDelta(p, tc.text[i:i+1]))
			}
			kept = append(kept, finishDelta(p))
			var acc Accumulator
			for _, d := range kept {
				acc.Add(d)
			}
			if got := acc.Result(p, "stop"); dump(normalise(got)) != dump(normalise(want)) {
				t.Fatalf("kept deltas:\n got %s\nwant %s", dump(normalise(got)), dump(normalise(want)))
			}
		})
	}
}

// TestTextArenaKeepsStrings checks that strings the arena handed out
// never change as it hands out more, across buffer changes.
func TestTextArenaKeepsStrings(t *testing.T) {
	var a textArena
	var got, want []string
	for i := range 2000 {
		x, y := fmt.Sprint(i), strings.Repeat("y", i%300)
		got = append(got, a.join(x, y))
		want = append(want, x+y)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("string %d changed: %q, want %q", i, got[i], want[i])
		}
	}
	if n := testing.AllocsPerRun(100, func() { a.join("\\", "nx") }); n > 0.1 {
		t.Errorf("%.2f allocations per short join, want ~0", n)
	}
}

// TestTextArenaEscaped checks the memoised backslash join.
func TestTextArenaEscaped(t *testing.T) {
	var a textArena
	for _, s := range []string{"nx", "nx", "", "t", "nx", "", ""} {
		if got := a.escaped(s); got != "\\"+s {
			t.Fatalf("escaped(%q) = %q", s, got)
		}
	}
}
