package parsers

// DeepSeek-R1 reasoning, as vLLM's DeepSeekR1ReasoningParser.extract_reasoning
// (BaseThinkingReasoningParser, see reasoning_thinking.go) with "<think>"/"</think>".
// When the prompt already closed the reasoning (enable_thinking=false
// renders "<think>\n\n</think>"), newer vLLM passes the prompt ids and the
// whole output is content.

var r1Spec = newThinkingSpec("deepseek_r1", thinkStart, thinkEnd)
