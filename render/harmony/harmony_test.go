package harmony

import (
	"os"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/wire"
)

// The expectations are openai/harmony's test-data (commit
// ec7606df9e87e3d0a1fec9f50928c1e407f0c438), inputs from its src/tests.rs.
func TestRenderGolden(t *testing.T) {
	sys := DefaultSystem()
	high := sys
	high.ReasoningEffort = "high"
	high.StartDate = "2025-06-28"
	tests := []struct {
		file string
		msgs []Message
	}{
		{"test_simple_convo.txt", []Message{
			{Role: "system", System: &sys},
			{Role: "user", Text: "What is 2 + 2?"},
		}},
		{"test_render_functions_with_parameters.txt", []Message{
			{Role: "system", System: &high},
			{Role: "developer", Developer: &Developer{Instructions: "Always respond in riddles", HasInstr: true, Tools: []Tool{
				{Name: "get_location", Description: "Gets the location of the user."},
				{Name: "get_current_weather", Description: "Gets the current weather in the provided location.", Parameters: schema(t, `{
					"type": "object",
					"properties": {
						"location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
						"format": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"}
					},
					"required": ["location"]}`)},
				{Name: "get_multiple_weathers", Description: "Gets the current weather in the provided list of locations.", Parameters: schema(t, `{
					"type": "object",
					"properties": {
						"locations": {"type": "array", "items": {"type": "string"}, "description": "List of city and state, e.g. [\"San Francisco, CA\", \"New York, NY\"]"},
						"format": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"}
					},
					"required": ["locations"]}`)},
				{Name: "kitchensink", Description: "A function with various complex schemas.", Parameters: schema(t, `{
					"description": "params object",
					"type": "object",
					"properties": {
						"string": {"type": "string", "title": "STRING", "description": "A string", "examples": ["hello", "world"]},
						"string_nullable": {"type": "string", "nullable": true, "description": "A nullable string", "default": "the default"},
						"string_enum": {"type": "string", "enum": ["a", "b", "c"]},
						"oneof_string_or_number": {
							"oneOf": [
								{"type": "string", "default": "default_string_in_oneof"},
								{"type": "number", "description": "numbers can happen too"}
							],
							"description": "a oneof",
							"default": 20
						}
					}}`)},
			}}},
			{Role: "user", Text: "What is the weather like in SF?"},
		}},
	}
	robot := "What is the capital of the largest country in the world?"
	for _, effort := range []string{"low", "medium", "high"} {
		e := sys
		e.ReasoningEffort = effort
		tests = append(tests,
			struct {
				file string
				msgs []Message
			}{"test_simple_convo_" + effort + "_effort.txt", []Message{
				{Role: "system", System: &e},
				{Role: "developer", Developer: &Developer{Instructions: "Answer the user's questions like a robot.", HasInstr: true}},
				{Role: "user", Text: robot},
			}},
			struct {
				file string
				msgs []Message
			}{"test_simple_convo_" + effort + "_effort_no_instruction.txt", []Message{
				{Role: "system", System: &e},
				{Role: "user", Text: robot},
			}})
	}
	reasoning := func(effort string, edit func(*System)) *System {
		s := sys
		s.ReasoningEffort, s.ValidChannels = effort, []string{"analysis", "final"}
		if edit != nil {
			edit(&s)
		}
		return &s
	}
	dated := sys
	dated.StartDate = "2025-06-28"
	tests = append(tests, []struct {
		file string
		msgs []Message
	}{
		{"test_reasoning_system_message.txt", []Message{{Role: "system", System: reasoning("medium", nil)}, {Role: "user", Text: "What is 2 + 2?"}}},
		{"test_reasoning_system_message_no_instruction.txt", []Message{{Role: "system", System: reasoning("high", nil)},
			{Role: "user", Text: "What is the best place to eat candy in the world?"}}},
		{"test_reasoning_system_message_with_dates.txt", []Message{{Role: "system", System: reasoning("medium", func(s *System) {
			s.StartDate, s.KnowledgeCutoff = "2021-01-01", "2021-01"
		})}, {Role: "user", Text: "What is 42 * pi?"}}},
		{"test_no_tools.txt", []Message{{Role: "system", System: &dated}}},
		// auto_drop_analysis off (vLLM renders with it off).
		{"test_preserve_cot.txt", []Message{
			{Role: "user", Text: "What is 2 + 2?"},
			{Role: "assistant", Channel: "analysis", Text: `User asks a simple question: "What is 2 + 2?" The answer: 4.`},
			{Role: "assistant", Channel: "final", Text: "2 + 2 equals 4."},
			{Role: "user", Text: "What about 9 / 2?"},
		}},
		// With auto_drop_analysis on there is nothing to drop here.
		{"test_does_not_drop_if_ongoing_analysis.txt", []Message{
			{Role: "user", Text: "What is the weather in SF?"},
			{Role: "assistant", Channel: "analysis", Text: "User asks: “What is the weather in SF?” We need to use lookup_weather tool."},
			{Role: "assistant", Channel: "commentary", Recipient: "functions.lookup_weather", ContentType: "<|constrain|>json", Text: `{"location": "San Francisco"}`},
			{Role: "tool", Name: "functions.lookup_weather", Text: `{"temperature": 20, "description": "sunny"}`},
		}},
	}...)
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			want, err := goldenText(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := RenderForCompletion(tc.msgs)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// goldenText is a test-data file as src/tests.rs loads it (trim_end).
func goldenText(file string) (string, error) {
	b, err := os.ReadFile("testdata/" + file)
	return strings.TrimRight(string(b), " \t\r\n"), err
}

// openai_harmony drops analysis before the first final message
// (test_dropping_cot_by_default, test_keep_analysis_between_finals); vLLM's
// AutoDropAnalysis drops it before the last one. Both agree on the first
// golden; on the second vLLM also drops "thinking 3+5".
func TestDropRules(t *testing.T) {
	convo := []Message{
		{Role: "user", Text: "What is 2 + 2?"},
		{Role: "assistant", Channel: "analysis", Text: "User asks: “What is 2 + 2?” Simple arithmetic. Provide answer."},
		{Role: "assistant", Channel: "final", Text: "2 + 2 equals 4."},
		{Role: "user", Text: "What about 9 / 2?"},
	}
	want, err := goldenText("test_dropping_cot_by_default.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := RenderForCompletion(AutoDropAnalysis(convo)); err != nil || got != want {
		t.Errorf("dropping_cot_by_default: got\n%s\nwant\n%s (%v)", got, want, err)
	}
	between := []Message{
		{Role: "user", Text: "What is 2 + 2?"},
		{Role: "assistant", Channel: "analysis", Text: "thinking 2+2"},
		{Role: "assistant", Channel: "final", Text: "4"},
		{Role: "user", Text: "What is 3 + 5?"},
		{Role: "assistant", Channel: "analysis", Text: "thinking 3+5"},
		{Role: "assistant", Channel: "final", Text: "8"},
	}
	keep, err := goldenText("test_keep_analysis_between_finals.txt")
	if err != nil {
		t.Fatal(err)
	}
	// openai_harmony's render_conversation of its own drop rule's output.
	harmonyDropped := append(append([]Message{}, between[0]), between[2:]...)
	if got, err := RenderForCompletion(harmonyDropped); err != nil || got != keep+"<|start|>assistant" {
		t.Errorf("keep_analysis_between_finals: got\n%s\nwant\n%s (%v)", got, keep, err)
	}
	vllm := AutoDropAnalysis(between)
	for _, m := range vllm {
		if m.Channel == "analysis" {
			t.Errorf("vLLM's rule kept %q", m.Text)
		}
	}
	if len(vllm) != 4 {
		t.Errorf("vLLM's rule left %d messages, want 4", len(vllm))
	}
}

func TestDeepParameters(t *testing.T) {
	deep := strings.Repeat(`{"a":`, maxDepth+1) + "1" + strings.Repeat("}", maxDepth+1)
	_, err := FunctionsNamespace([]Tool{{Name: "f", Parameters: schema(t, deep)}})
	if err == nil {
		t.Fatal("want an error for parameters nested too deeply")
	}
}

// schema is a tool's parameters as protocol decodes them.
func schema(t testing.TB, text string) *wire.Node {
	t.Helper()
	n, err := wire.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
