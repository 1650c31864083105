package parsers

// Qwen3 reasoning, as vLLM's Qwen3Parser engine run with tool parsing
// skipped (its extract_reasoning): output starts in reasoning unless
// chat_template_kwargs.enable_thinking is false; "<think>" inside reasoning
// is dropped, "</think>" ends it and is dropped, "<tool_call>" ends it
// implicitly and stays as content; a "</think>" in content is dropped.
// The machine is the shared engineReasoning (engine_reasoning.go).

const (
	thinkStart = "<think>"
	thinkEnd   = "</think>"
	toolCallOn = "<tool_call>"
)
