package harmony

import (
	"os"
	"strings"
	"testing"
)

func str(s string) *string { return &s }

// vLLM always sets a start date, so its rendering of harmony's
// test_simple_convo_high_effort conversation is that file with the
// "Current date" line get_system_message adds.
func TestBuildHighEffort(t *testing.T) {
	want, err := os.ReadFile("testdata/test_simple_convo_high_effort.txt")
	if err != nil {
		t.Fatal(err)
	}
	wantS := strings.Replace(string(want), "Knowledge cutoff: 2024-06\n", "Knowledge cutoff: 2024-06\nCurrent date: 2025-06-28\n", 1)
	msgs, err := Build([]ChatMessage{
		{Role: "system", Content: str("Answer the user's questions like a robot.")},
		{Role: "user", Content: str("What is the capital of the largest country in the world?")},
	}, nil, Options{ReasoningEffort: "high", StartDate: "2025-06-28"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := RenderForCompletion(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if got != wantS {
		t.Errorf("got\n%s\nwant\n%s", got, wantS)
	}
}

// Expectations written from harmony_utils.py at vLLM bf578e1.
func TestBuildConversation(t *testing.T) {
	chat := []ChatMessage{
		{Role: "user", Content: str("2+2?")},
		{Role: "assistant", Reasoning: "easy", Content: str("4")},
		{Role: "user", Content: str("weather?")},
		{Role: "assistant", Reasoning: "need tool", ToolCalls: []ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city":"SF"}`}}},
		{Role: "tool", ToolCallID: "c1", IsList: true, Parts: []string{"sun", "ny"}},
	}
	msgs, err := Build(chat, []Tool{{Name: "get_weather", Description: "Weather."}}, Options{StartDate: "2025-01-02"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := RenderForCompletion(msgs)
	if err != nil {
		t.Fatal(err)
	}
	want := "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\nCurrent date: 2025-01-02\n\nReasoning: medium\n\n" +
		"# Valid channels: analysis, commentary, final. Channel must be included for every message.\nCalls to these tools must go to the commentary channel: 'functions'.<|end|>" +
		"<|start|>developer<|message|># Tools\n\n## functions\n\nnamespace functions {\n\n// Weather.\ntype get_weather = () => any;\n\n} // namespace functions<|end|>" +
		"<|start|>user<|message|>2+2?<|end|>" +
		// the first turn's analysis goes: it precedes the last final message
		"<|start|>assistant<|channel|>final<|message|>4<|end|>" +
		"<|start|>user<|message|>weather?<|end|>" +
		"<|start|>assistant<|channel|>analysis<|message|>need tool<|end|>" +
		"<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\":\"SF\"}<|call|>" +
		"<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>sunny<|end|>" +
		"<|start|>assistant"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestAutoDropAnalysis(t *testing.T) {
	msgs := []Message{
		{Role: "assistant", Channel: "analysis", Text: "a1"},
		{Role: "assistant", Channel: "final", Text: "f1"},
		{Role: "assistant", Channel: "analysis", Text: "a2"},
		{Role: "assistant", Channel: "final", Text: "f2"},
		{Role: "assistant", Channel: "analysis", Text: "a3"},
	}
	var got []string
	for _, m := range AutoDropAnalysis(msgs) {
		got = append(got, m.Text)
	}
	if strings.Join(got, ",") != "f1,f2,a3" {
		t.Errorf("kept %v, want f1,f2,a3", got)
	}
}

func TestBuildErrors(t *testing.T) {
	for _, effort := range []string{"none", "extreme"} {
		if _, err := Build(nil, nil, Options{ReasoningEffort: effort}); err == nil {
			t.Errorf("reasoning_effort %q: want an error", effort)
		}
	}
}
