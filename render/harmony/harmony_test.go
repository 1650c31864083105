package harmony

import (
	"os"
	"testing"
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
				{Name: "get_current_weather", Description: "Gets the current weather in the provided location.", Parameters: []byte(`{
					"type": "object",
					"properties": {
						"location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
						"format": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"}
					},
					"required": ["location"]}`)},
				{Name: "get_multiple_weathers", Description: "Gets the current weather in the provided list of locations.", Parameters: []byte(`{
					"type": "object",
					"properties": {
						"locations": {"type": "array", "items": {"type": "string"}, "description": "List of city and state, e.g. [\"San Francisco, CA\", \"New York, NY\"]"},
						"format": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"}
					},
					"required": ["locations"]}`)},
				{Name: "kitchensink", Description: "A function with various complex schemas.", Parameters: []byte(`{
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
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			want, err := os.ReadFile("testdata/" + tc.file)
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

func TestBadParameters(t *testing.T) {
	_, err := FunctionsNamespace([]Tool{{Name: "f", Parameters: []byte(`{"type":`)}})
	if err == nil {
		t.Fatal("want an error for truncated JSON")
	}
}
