package parsers

import "testing"

// TestFastArgsTakenOnlyWhenSafe checks when the steady-state shortcut
// applies; the golden and split tests check that it answers as the
// general path does.
func TestFastArgsTakenOnlyWhenSafe(t *testing.T) {
	req := mustRequest(t, weatherTools)
	for _, tc := range []struct {
		name, head, push string
		taken            bool
	}{
		{"plain text in the argument", `{"name": "get_weather", "arguments": {"city": "Pa`, "ris a", true},
		{"verbatim escapes", `{"name": "get_weather", "arguments": {"city": "Pa`, `\n\"x\"`, true},
		{"closing quote", `{"name": "get_weather", "arguments": {"city": "Pa`, `ris"`, false},
		{"escape split across pushes", `{"name": "get_weather", "arguments": {"city": "Pa`, `ris\`, false},
		{"escape that changes form", `{"name": "get_weather", "arguments": {"city": "Pa`, `\/`, false},
		{"marker byte", `{"name": "get_weather", "arguments": {"city": "Pa`, "ris <", false},
		{"before the name", `{"arguments": {"city": "Pa`, "ris", false},
		{"inside the name", `{"name": "get_`, "weather", false},
		{"a non-string argument", `{"name": "get_weather", "arguments": {"days": 1`, "2", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, reuse := range []bool{false, true} {
				p, err := New(qwen3Hermes, testVocab, req, nil)
				if err != nil {
					t.Fatal(err)
				}
				pushDelta(p, "<think>hm</think><tool_call>"+tc.head)
				var d Delta
				if reuse {
					d.ToolCalls = make([]ToolCallDelta, 0, 4)
				}
				taken := p.fastArgs(&d, tc.push)
				if taken != tc.taken {
					t.Fatalf("reuse %v: taken %v, want %v", reuse, taken, tc.taken)
				}
				if taken && (len(d.ToolCalls) != 1 || d.ToolCalls[0].Arguments != tc.push || d.Content != "" || d.Reasoning != "") {
					t.Fatalf("reuse %v: delta %+v", reuse, d)
				}
			}
		})
	}
}

// TestHotPathAnswersAsMachines streams outputs whose arguments hold
// escapes split across pushes, marker bytes and closing quotes through a
// streaming parser (where the hot path engages), optionally saving and
// restoring the state before every push as a checkpointing server does.
// The accumulation must be the one of the same pushes with the hot path
// dropped after every push (the machines see everything), and for
// well-formed calls the batch answer.
func TestHotPathAnswersAsMachines(t *testing.T) {
	req := mustRequest(t, weatherTools)
	call := func(args string) string {
		return "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"" + args + "\"}}\n</tool_call>"
	}
	for ti, tc := range []struct {
		text       string
		wellFormed bool
	}{
		{"<think>\nplain reasoning, long enough to stay hot\n</think>\n\n" + call(`x0 := f(0)\nx1 := f(1)\nx2 := f(2)\n`), true},
		{"<think>r</think>" + call(`a\\b\"c\td\u00e9e\/f\\\\g\n`), true},
		{"<think>r</think>" + call(`a <b> </tool_c c`) + "\n" + call(`\\\n\"`), true},
		{"<think>r <not a marker> r</think>" + call(`trailing backslash pair \\`), true},
		// A streamed call cannot be taken back: both stream runs agree,
		// the batch answer differs (vLLM's too).
		{"<think>r</think>" + call(`bad escape \q then text`), false},
	} {
		var want string
		if tc.wellFormed {
			pb, err := New(qwen3Hermes, testVocab, req, nil)
			if err != nil {
				t.Fatal(err)
			}
			var batch Accumulator
			batch.Add(pushDelta(pb, tc.text))
			batch.Add(finishDelta(pb))
			want = dump(normalise(batch.Result(pb, "stop")))
		}
		for size := 1; size <= 4; size++ {
			ref := streamHot(t, req, tc.text, size, false, false)
			if tc.wellFormed && ref != want {
				t.Fatalf("text %d, %d-byte pushes without the hot path:\n got %s\nwant %s", ti, size, ref, want)
			}
			for _, restore := range []bool{false, true} {
				got := streamHot(t, req, tc.text, size, true, restore)
				if got != ref {
					t.Errorf("text %d, %d-byte pushes, restore %v:\n got %s\nwant %s", ti, size, restore, got, ref)
				}
			}
		}
	}
}

// streamHot streams text in size-byte pushes through a streaming parser,
// with the hot path (checked to engage) or without it, saving and
// restoring the state before every push when restore is set, into fresh
// and reused Deltas by turns.
func streamHot(t *testing.T, req *Request, text string, size int, hot, restore bool) string {
	t.Helper()
	p, err := New(qwen3Hermes, testVocab, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.SetStreaming()
	var acc Accumulator
	var scratch Delta
	engaged := false
	for i := 0; i < len(text); i += size {
		if restore {
			st, err := marshalState(p)
			if err != nil {
				t.Fatal(err)
			}
			if p, err = Restore(qwen3Hermes, testVocab, req, st); err != nil {
				t.Fatal(err)
			}
			p.SetStreaming()
		}
		piece := text[i:min(i+size, len(text))]
		engaged = engaged || p.hot.kind != hotNone
		acc.Add(pushAlternating(p, i/size, piece, &scratch))
		engaged = engaged || p.hot.kind != hotNone
		if !hot {
			p.settle()
		}
	}
	acc.Add(finishDelta(p))
	if hot && !engaged {
		t.Fatalf("%d-byte pushes: the hot path never engaged: the test no longer covers it", size)
	}
	return dump(normalise(acc.Result(p, "stop")))
}
