package parsers

// DeepSeek-V3 reasoning, as vLLM's DeepSeekV3ReasoningParser: with
// chat_template_kwargs "thinking" or "enable_thinking" truthy it is the
// deepseek_r1 parser, otherwise the identity parser (all content).

func newDeepSeekV3Reasoning(v Vocab, req *Request, promptIDs []int) (reasoningMachine, error) {
	a, _ := req.kwargTruthy("thinking")
	b, _ := req.kwargTruthy("enable_thinking")
	if a || b {
		return newThinking(r1Spec, true, v, promptIDs)
	}
	return &identityReasoning{}, nil
}
