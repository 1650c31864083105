package parsers

import "testing"

const (
	graniteThink = "Here is my thought process:"
	graniteResp  = "Here is my response:"
)

// Cases from tests/reasoning/test_granite_reasoning_parser.py plus derived
// ones (spelling variants, text before the phrases, truncation).
var graniteCases = []reasoningCase{
	{name: "simple", parser: "granite", text: graniteThink + "This is a reasoning section" + graniteResp + "This is the rest",
		wantR: new("This is a reasoning section"), wantC: new("This is the rest"), src: "SIMPLE_REASONING"},
	{name: "complete", parser: "granite", text: graniteThink + "This is a reasoning section" + graniteResp,
		wantR: new("This is a reasoning section"), src: "COMPLETE_REASONING"},
	{name: "no reasoning", parser: "granite", text: "This is content", wantC: new("This is content"), src: "NO_REASONING"},
	{name: "multiple lines", parser: "granite", text: graniteThink + "This\nThat" + graniteResp + "This is the rest\nThat",
		wantR: new("This\nThat"), wantC: new("This is the rest\nThat"), src: "MULTIPLE_LINES"},
	{name: "here's spelling", parser: "granite", text: "Here's my thought process: a Here's my response: b",
		wantR: new(" a "), wantC: new(" b"), src: "derived"},
	{name: "prefix dropped", parser: "granite", text: "Sure. " + graniteThink + "x" + graniteResp + "y",
		wantR: new("x"), wantC: new("y"), src: "derived (findall searches)"},
	{name: "truncated", parser: "granite", text: graniteThink + "still thinking", wantC: new(graniteThink + "still thinking"), src: "derived"},
	{name: "response before thought", parser: "granite", text: graniteResp + "a" + graniteThink + "b",
		wantC: new(graniteResp + "a" + graniteThink + "b"), src: "derived"},
	{name: "empty reasoning", parser: "granite", text: graniteThink + graniteResp + "z", wantR: new(""), wantC: new("z"), src: "derived"},
	{name: "later phrases are content", parser: "granite", text: graniteThink + "a" + graniteResp + "b" + graniteResp,
		wantR: new("a"), wantC: new("b" + graniteResp), src: "derived"},
	{name: "empty", parser: "granite", text: "", wantC: new(""), src: "derived"},
}

func TestGraniteReasoning(t *testing.T) { runReasoningCases(t, graniteCases) }
