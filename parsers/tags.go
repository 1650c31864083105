package parsers

// The tags of the Qwen-style formats, shared by the families whose models
// were trained on them (qwen3, glm45/47, seed_oss's translation, hermes,
// granite, kimi_k2, minimax_m2, hunyuan_a13b, the thinking families).
const (
	thinkStart    = "<think>"
	thinkEnd      = "</think>"
	toolCallStart = "<tool_call>"
	toolCallEnd   = "</tool_call>"
)
