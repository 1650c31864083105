package render

import (
	"encoding/json"
	"testing"

	"github.com/vrender/vrender/internal/structtaggolden"
	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
)

// TestStructuralTagGolden compares the structural tags with the ones
// vLLM's and xgrammar's Python builders produced (testdata/structtag:
// gen.py and README.md), byte for byte.
func TestStructuralTagGolden(t *testing.T) {
	golden, err := structtaggolden.Load()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range golden.Cases {
		seen[c.Model] = true
		req := &protocol.ChatCompletionRequest{Tools: decodeTools(t, golden.Tools[c.Tools]...), ToolChoice: toolChoice(c.ToolChoice)}
		got, ok, err := structuralTagFor(c.Model, req)
		if err != nil {
			t.Errorf("%s/%s/%s: %v", c.Model, c.Tools, c.ToolChoice, err)
			continue
		}
		switch {
		case c.StructuralTag == nil && ok:
			t.Errorf("%s/%s/%s: got a tag, vLLM sets none", c.Model, c.Tools, c.ToolChoice)
		case c.StructuralTag != nil && !ok:
			t.Errorf("%s/%s/%s: no tag", c.Model, c.Tools, c.ToolChoice)
		case c.StructuralTag != nil && got != *c.StructuralTag:
			t.Errorf("%s/%s/%s:\n got %s\nwant %s", c.Model, c.Tools, c.ToolChoice, got, *c.StructuralTag)
		}
	}
	// Every parser with a structural tag model is covered by the goldens.
	for _, name := range parsers.ToolParsers() {
		if m := parsers.StructuralTagModel(name); m != "" && !seen[m] {
			t.Errorf("tool parser %s: structural tag model %q has no golden cases", name, m)
		}
	}
	for m := range structuralTagBuilders {
		if !seen[m] {
			t.Errorf("builder %q has no golden cases", m)
		}
	}
}

func TestStructuralTagNoneChoice(t *testing.T) {
	tools := decodeTools(t, json.RawMessage(`{"type":"function","function":{"name":"a","strict":true}}`))
	for _, choice := range []string{`"none"`, ``} {
		req := &protocol.ChatCompletionRequest{Tools: tools, ToolChoice: toolChoice([]byte(choice))}
		if choice == "" {
			req.Tools = nil
		}
		if _, ok, err := structuralTagFor("hermes", req); ok || err != nil {
			t.Errorf("choice %q: ok %v err %v", choice, ok, err)
		}
	}
}

// TestStructuralTagPayloadKeysRaw: keys are written as json.dumps writes
// them (<>& not escaped).
func TestStructuralTagPayloadKeysRaw(t *testing.T) {
	got, err := structuralTagPayload(mustNode(`{"type":"structural_tag","format":{"type":"any_text"},"x<&>":"<&>"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type": "structural_tag", "format": {"type": "any_text"}, "x<&>": "<&>"}`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}
