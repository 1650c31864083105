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
				p.Push("<think>hm</think><tool_call>"+tc.head, nil)
				var d Delta
				taken := p.fastArgs(&d, tc.push, reuse)
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
			batch.Add(pb.Push(tc.text, nil))
			batch.Add(pb.Finish())
			want = dump(normalise(batch.Result(pb, "stop")))
		}
		for size := 1; size <= 4; size++ {
			ref := streamHot(t, req, tc.text, size, false, false, false)
			if tc.wellFormed && ref != want {
				t.Fatalf("text %d, %d-byte pushes without the hot path:\n got %s\nwant %s", ti, size, ref, want)
			}
			for _, restore := range []bool{false, true} {
				for _, viaPushHot := range []bool{false, true} {
					got := streamHot(t, req, tc.text, size, true, restore, viaPushHot)
					if got != ref {
						t.Errorf("text %d, %d-byte pushes, restore %v, PushHot %v:\n got %s\nwant %s",
							ti, size, restore, viaPushHot, got, ref)
					}
				}
			}
		}
	}
}

// streamHot streams text in size-byte pushes through a streaming parser,
// with the hot path (checked to engage) or without it, saving and
// restoring the state before every push when restore is set, and trying
// PushHot before each push when viaPushHot is set.
func streamHot(t *testing.T, req *Request, text string, size int, hot, restore, viaPushHot bool) string {
	t.Helper()
	p, err := New(qwen3Hermes, testVocab, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.SetStreaming()
	var acc Accumulator
	engaged := false
	for i := 0; i < len(text); i += size {
		if restore {
			st, err := p.MarshalState()
			if err != nil {
				t.Fatal(err)
			}
			if p, err = Restore(qwen3Hermes, testVocab, req, st); err != nil {
				t.Fatal(err)
			}
			p.SetStreaming()
		}
		piece := text[i:min(i+size, len(text))]
		engaged = engaged || p.hot.kind != HotNone
		kind := HotNone
		if viaPushHot {
			var idx int
			var out string
			// Every other push asks PushPlain first, as a session does.
			if k, ix, ok := p.PushPlain(piece); ok && (i/size)%2 == 0 {
				kind, idx, out = k, ix, piece
			} else if !ok || (i/size)%2 == 1 {
				kind, idx, out = p.PushHot(piece)
			}
			switch {
			case kind == HotReasoning:
				acc.Add(Delta{Reasoning: out})
			case kind == HotArgs && out != "":
				acc.Add(Delta{ToolCalls: []ToolCallDelta{{Index: idx, Arguments: out}}})
			}
		}
		if kind == HotNone {
			acc.Add(pushAlternating(p, i, piece, nil))
		}
		engaged = engaged || p.hot.kind != HotNone
		if !hot {
			p.settle()
		}
	}
	acc.Add(p.Finish())
	if hot && !engaged {
		t.Fatalf("%d-byte pushes: the hot path never engaged: the test no longer covers it", size)
	}
	return dump(normalise(acc.Result(p, "stop")))
}
