package parity

// issue47931 explains the one finish_reason difference vrender makes on
// purpose (docs/compatibility.md, "vLLM bugs we do not copy").
const issue47931 = "known difference (vLLM bug #47931): vLLM answers finish_reason \"stop\" although it returned " +
	"parsed tool calls; vrender answers \"tool_calls\" as vLLM's in-process server does (docs/compatibility.md)"

// classify turns a parser comparison into an outcome: no difference
// passes; a difference docs/compatibility.md lists as deliberate is known;
// anything else fails.
func classify(vllm, ours Answer, diffs []Difference) (Status, string) {
	if len(diffs) == 0 {
		return Pass, ""
	}
	if len(diffs) == 1 && diffs[0].Field == "finish_reason" &&
		vllm.FinishReason == "stop" && ours.FinishReason == "tool_calls" && len(ours.ToolCalls) > 0 {
		return Known, issue47931
	}
	return Fail, "vrender differs from vLLM's non-streaming answer"
}

// unretractable explains the one way vrender's stream may end up away from
// vLLM's non-streaming answer: a tool call that turns out malformed only
// at its end (truncated by max_tokens, broken markup) is dropped by the
// non-streaming parser, but a stream has already sent it. vLLM's own
// stream sends the same call; the golden set calls these cases "relaxed".
const unretractable = "known difference (stream cannot retract a sent tool call): vLLM's non-streaming answer " +
	"drops a call that turned out malformed at its end, which vLLM's own stream had already sent too; " +
	"reasoning and finish_reason agree (docs/compatibility.md, derender streaming)"

// classifyStream is classify for vrender's stream held to vLLM's
// non-streaming answer, given vLLM's own stream.
func classifyStream(vllm, vllmStream, ours Answer, diffs []Difference) (Status, string) {
	st, reason := classify(vllm, ours, diffs)
	if st != Fail {
		return st, reason
	}
	sameNames := len(ours.ToolCalls) == len(vllmStream.ToolCalls)
	for i := 0; sameNames && i < len(ours.ToolCalls); i++ {
		sameNames = ours.ToolCalls[i].Name == vllmStream.ToolCalls[i].Name
	}
	if sameNames && len(vllm.ToolCalls) < len(ours.ToolCalls) &&
		deref(vllm.Reasoning) == deref(ours.Reasoning) && vllm.FinishReason == ours.FinishReason &&
		len(compareAnswers(vllm, vllmStream, true)) > 0 {
		return Known, unretractable
	}
	return st, reason
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
