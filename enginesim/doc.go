// Package enginesim is a simulated tokens-only vLLM engine
// (`vllm serve MODEL --tokens-only`): it serves POST /inference/v1/generate
// with vLLM's request validation, JSON bodies, SSE framing, logprobs shape,
// kv_transfer_params and abort endpoints, and answers with scripted or
// built-in outputs instead of running a model.
//
// Outputs come from a Script (per-prompt responses matched by a substring
// of the decoded prompt) or, by default, from a reasoning-model imitation:
// a <think> block and an answer, a hermes <tool_call> when tools were
// rendered into the prompt, or JSON satisfying structured_outputs. Like any
// tokens-only engine it never sees tool_choice, so tools in the prompt get a
// call even under "none" (as a real model may, whose raw call text vLLM then
// returns as content); the front's --exclude-tools-when-tool-choice-none
// keeps them out of the prompt, as `make run` does. Latency
// and faults (refused connection, 500, dropped or stalled stream) are
// configurable so clients can be tested against a misbehaving engine.
package enginesim
