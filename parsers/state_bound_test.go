package parsers

import (
	"fmt"
	"strings"
	"testing"
)

// boundedProse is n sentences of plain prose, as a model answers after
// its reasoning: no markup, an occasional "<" or "[".
func boundedProse(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "Step %d reads the queue, x < y holds for item [%d], and the worker keeps its cache. ", i, i%7)
	}
	return b.String()
}

// TestStreamingStateBounded checks that a streaming parser's state does
// not grow with the output: a checkpoint of a long answer, or of many
// calls, is no larger than a short one's plus a small constant. The prose
// families are those whose answer without calls differs from their
// answer with calls (qwen3_coder, minimax_m2 and glm45 strip leading
// whitespace only when a call follows; llama3_json returns the content
// only when no call follows); the call families those whose fallback or
// grammar reads the whole output.
func TestStreamingStateBounded(t *testing.T) {
	req, err := decodeRequest([]byte(stateTools))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		head string
	}{
		{"qwen3_coder", Config{ReasoningParser: "qwen3", ToolParser: "qwen3_coder", EnableAutoToolChoice: true}, "<think>\nhm\n</think>\n\n"},
		{"minimax_m2", Config{ReasoningParser: "minimax_m2", ToolParser: "minimax_m2", EnableAutoToolChoice: true}, "<think>\nhm\n</think>\n\n"},
		{"glm45", Config{ReasoningParser: "glm45", ToolParser: "glm45", EnableAutoToolChoice: true}, "<think>hm</think>\n"},
		{"hermes", Config{ReasoningParser: "qwen3", ToolParser: "hermes", EnableAutoToolChoice: true}, "<think>\nhm\n</think>\n\n"},
		{"llama3_json", Config{ToolParser: "llama3_json", EnableAutoToolChoice: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size := func(sentences int) (int, string) {
				p, err := New(tc.cfg, everyVocab{}, &req, nil)
				if err != nil {
					t.Fatal(err)
				}
				p.SetStreaming()
				text := tc.head + boundedProse(sentences)
				var acc Accumulator
				most := 0
				for i := 0; i < len(text); i += 5 {
					acc.Add(pushDelta(p, text[i:min(i+5, len(text))]))
					most = max(most, len(p.AppendState(nil)))
				}
				acc.Add(finishDelta(p))
				return most, acc.Content()
			}
			short, _ := size(20)
			long, content := size(80)
			if long > short+64 {
				t.Errorf("state grew with the answer: %d bytes at 20 sentences, %d at 80", short, long)
			}
			if !strings.HasSuffix(content, boundedProse(80)) {
				t.Errorf("content %.80q... is not the prose", content)
			}
		})
	}
}

// boundedCalls is n calls of a family's format, each with a string
// argument of a few hundred bytes, or with long one call whose argument
// has n times that.
func boundedCalls(n int, long bool, one func(i int, q string) string, sep string) string {
	if long {
		return one(0, strings.Repeat("line: total = sum(x, y) ", 12*n))
	}
	parts := make([]string, n)
	for i := range parts {
		parts[i] = one(i, strings.Repeat(fmt.Sprintf("line %03d: total = sum(x, %03d) ", i, i), 12))
	}
	return strings.Join(parts, sep)
}

func TestStreamingCallStateBounded(t *testing.T) {
	req, err := decodeRequest([]byte(stateTools))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		cfg        Config
		head, tail string
		sep        string
		one        func(i int, q string) string
		// long: one call with a growing argument (the family holds a
		// JSON body to re-serialise it).
		long bool
	}{
		{"llama3_json", Config{ToolParser: "llama3_json", EnableAutoToolChoice: true}, "", "", "; ",
			func(i int, q string) string { return fmt.Sprintf(`{"name": "search", "parameters": {"q": "%s"}}`, q) }, false},
		{"pythonic", Config{ToolParser: "pythonic", EnableAutoToolChoice: true}, "[", "]", ", ",
			func(i int, q string) string { return fmt.Sprintf(`search(q="%s", days=%d)`, q, 100+i) }, false},
		{"deepseek_v3", Config{ToolParser: "deepseek_v3", EnableAutoToolChoice: true}, "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "",
			func(i int, q string) string {
				return fmt.Sprintf("<｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n{\"q\": \"%s\", \"days\": %d}\n```<｜tool▁call▁end｜>", q, 100+i)
			}, false},
		{"openai", Config{ReasoningParser: "openai_gptoss", ToolParser: "openai", EnableAutoToolChoice: true},
			"<|channel|>analysis<|message|>plan<|end|>", "", "",
			func(i int, q string) string {
				return fmt.Sprintf(`<|start|>assistant<|channel|>commentary to=functions.search <|constrain|>json<|message|>{"q":"%s","days":%d}<|call|>`, q, 100+i)
			}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size := func(n int) (int, int) {
				p, err := New(tc.cfg, everyVocab{}, &req, nil)
				if err != nil {
					t.Fatal(err)
				}
				p.SetStreaming()
				text := tc.head + boundedCalls(n, tc.long, tc.one, tc.sep) + tc.tail
				var acc Accumulator
				most := 0
				for i := 0; i < len(text); i += 5 {
					acc.Add(pushDelta(p, text[i:min(i+5, len(text))]))
					most = max(most, len(p.AppendState(nil)))
				}
				acc.Add(finishDelta(p))
				return most, len(acc.Calls())
			}
			short, calls := size(4)
			long, more := size(16)
			if long > short+64 {
				t.Errorf("state grew with the calls: %d bytes at scale 4, %d at 16", short, long)
			}
			want := [2]int{4, 16}
			if tc.long {
				want = [2]int{1, 1}
			}
			if calls != want[0] || more != want[1] {
				t.Errorf("%d and %d calls, want %v", calls, more, want)
			}
		})
	}
}
