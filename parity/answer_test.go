package parity

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vrender/vrender/protocol"
)

func sp(s string) *string { return &s }

func TestCompareAnswers(t *testing.T) {
	base := Answer{Content: sp("Hello"), Reasoning: nil, ToolCalls: []ToolCall{{Name: "f", Arguments: `{"a": 1}`}}, FinishReason: "tool_calls"}
	with := func(f func(*Answer)) Answer {
		a := base
		a.ToolCalls = append([]ToolCall(nil), base.ToolCalls...)
		f(&a)
		return a
	}
	tests := []struct {
		name   string
		got    Answer
		stream bool
		want   []string // "field: detail substring"
		equal  bool     // JSONEqual on the first difference
	}{
		{name: "equal", got: base},
		{name: "null vs empty", got: with(func(a *Answer) { a.Reasoning = sp("") }), want: []string{"reasoning: vLLM null, vrender \"\""}},
		{name: "null vs empty in a stream", got: with(func(a *Answer) { a.Reasoning = sp("") }), stream: true},
		{name: "content", got: with(func(a *Answer) { a.Content = sp("Help") }),
			want: []string{`content: first difference at character 3 (lengths 5 and 4): vLLM "Hello", vrender "Help"`}},
		{name: "arguments as strings only", got: with(func(a *Answer) { a.ToolCalls[0].Arguments = `{"a":1}` }),
			want: []string{"tool_calls[0].arguments: equal as JSON, differ as strings"}, equal: true},
		{name: "arguments as JSON", got: with(func(a *Answer) { a.ToolCalls[0].Arguments = `{"a": 2}` }),
			want: []string{"tool_calls[0].arguments: differ as JSON: first difference at character 6"}},
		{name: "number spelling is a JSON difference", got: with(func(a *Answer) { a.ToolCalls[0].Arguments = `{"a": 1.0}` }),
			want: []string{"tool_calls[0].arguments: differ as JSON"}},
		{name: "arguments not JSON", got: with(func(a *Answer) { a.ToolCalls[0].Arguments = `{"a": 1` }),
			want: []string{"tool_calls[0].arguments: vrender's are not JSON"}},
		{name: "name", got: with(func(a *Answer) { a.ToolCalls[0].Name = "g" }), want: []string{`tool_calls[0].name: vLLM "f", vrender "g"`}},
		{name: "call count", got: with(func(a *Answer) { a.ToolCalls = nil }), want: []string{`tool_calls: vLLM 1 call(s) ["f"], vrender 0 call(s) []`}},
		{name: "all in order", got: Answer{Content: sp("x"), Reasoning: sp("r"), FinishReason: "stop"},
			want: []string{"content:", "reasoning:", "tool_calls:", "finish_reason: vLLM \"tool_calls\", vrender \"stop\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diffs := compareAnswers(base, tt.got, tt.stream)
			if len(diffs) != len(tt.want) {
				t.Fatalf("differences %v, want %d", diffs, len(tt.want))
			}
			for i, d := range diffs {
				if !strings.Contains(d.String(), tt.want[i]) {
					t.Errorf("difference %d = %q, want it to contain %q", i, d, tt.want[i])
				}
			}
			if len(diffs) > 0 && diffs[0].JSONEqual != tt.equal {
				t.Errorf("JSONEqual = %v, want %v", diffs[0].JSONEqual, tt.equal)
			}
		})
	}
}

func TestCompareIDs(t *testing.T) {
	decode := func(ids []int) (string, error) {
		var b strings.Builder
		for _, id := range ids {
			b.WriteByte(byte('a' + id%26))
		}
		return b.String(), nil
	}
	long := make([]int, 30)
	for i := range long {
		long[i] = i
	}
	changed := append([]int(nil), long...)
	changed[20] = 99
	tests := []struct {
		name      string
		want, got []int
		diff      string
	}{
		{name: "equal", want: []int{1, 2}, got: []int{1, 2}},
		{name: "changed id", want: long, got: changed,
			diff: `first difference at position 20 (lengths 30 and 30): vLLM [… 12 13 14 15 16 17 18 19 >20< 21 22 23 24 25 26 27 …] "mnopqrst"|"uvwxyzab", vrender [… 12 13 14 15 16 17 18 19 >99< 21`},
		{name: "longer", want: []int{1, 2}, got: []int{1, 2, 3}, diff: `first difference at position 2 (lengths 2 and 3): vLLM [1 2] "bc"|"", vrender [1 2 >3<] "bc"|"d"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := compareIDs(tt.want, tt.got, decode)
			switch {
			case tt.diff == "" && d != nil:
				t.Errorf("difference %q for equal ids", d)
			case tt.diff != "" && (d == nil || !strings.Contains(d.Detail, tt.diff)):
				t.Errorf("difference %v, want it to contain %q", d, tt.diff)
			}
		})
	}
}

func TestAccumulator(t *testing.T) {
	var chunks = `[
		{"role":"assistant","content":""},
		{"reasoning_content":"think"},
		{"content":"Hi"},
		{"tool_calls":[{"index":0,"id":"x","type":"function","function":{"name":"f","arguments":""}}]},
		{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\""}}]},
		{"tool_calls":[{"index":1,"function":{"name":"g","arguments":"{}"}},{"index":0,"function":{"arguments":": 1}"}}]}
	]`
	var acc accumulator
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(chunks), &raw); err != nil {
		t.Fatal(err)
	}
	for i, r := range raw {
		var d protocol.DeltaMessage
		if err := json.Unmarshal(r, &d); err != nil {
			t.Fatal(err)
		}
		var fin *string
		if i == len(raw)-1 {
			fin = sp("tool_calls")
		}
		acc.add(&d, fin)
	}
	got := acc.answer()
	want := Answer{Content: sp("Hi"), Reasoning: sp("think"),
		ToolCalls: []ToolCall{{Name: "f", Arguments: `{"a": 1}`}, {Name: "g", Arguments: "{}"}}, FinishReason: "tool_calls"}
	if diffs := compareAnswers(want, got, false); len(diffs) > 0 {
		t.Errorf("accumulated %+v: %v", got, diffs)
	}
}

func TestClassify(t *testing.T) {
	call := []ToolCall{{Name: "f", Arguments: "{}"}}
	tests := []struct {
		name             string
		vllm, vstream, o Answer
		stream           bool
		want             Status
	}{
		{name: "equal", vllm: Answer{FinishReason: "stop"}, o: Answer{FinishReason: "stop"}, want: Pass},
		{name: "47931", vllm: Answer{ToolCalls: call, FinishReason: "stop"}, o: Answer{ToolCalls: call, FinishReason: "tool_calls"}, want: Known},
		{name: "tool_calls without calls is not 47931", vllm: Answer{FinishReason: "stop"}, o: Answer{FinishReason: "tool_calls"}, want: Fail},
		{name: "47931 plus another difference fails", vllm: Answer{Content: sp("a"), ToolCalls: call, FinishReason: "stop"},
			o: Answer{Content: sp("b"), ToolCalls: call, FinishReason: "tool_calls"}, want: Fail},
		{name: "unretractable call vLLM streamed too", stream: true, vllm: Answer{Content: sp("<tool_call>{"), FinishReason: "length"},
			vstream: Answer{ToolCalls: call, FinishReason: "length"}, o: Answer{ToolCalls: call, FinishReason: "length"}, want: Known},
		{name: "call vLLM did not stream", stream: true, vllm: Answer{Content: sp("<tool_call>{"), FinishReason: "length"},
			vstream: Answer{Content: sp("<tool_call>{"), FinishReason: "length"}, o: Answer{ToolCalls: call, FinishReason: "length"}, want: Fail},
		{name: "unretractable but reasoning differs", stream: true, vllm: Answer{Reasoning: sp("r"), FinishReason: "length"},
			vstream: Answer{ToolCalls: call, FinishReason: "length"}, o: Answer{ToolCalls: call, FinishReason: "length"}, want: Fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diffs := compareAnswers(tt.vllm, tt.o, tt.stream)
			var got Status
			if tt.stream {
				got, _ = classifyStream(tt.vllm, tt.vstream, tt.o, diffs)
			} else {
				got, _ = classify(tt.vllm, tt.o, diffs)
			}
			if got != tt.want {
				t.Errorf("%s, want %s (differences %v)", got, tt.want, diffs)
			}
		})
	}
}
