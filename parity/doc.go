// Package parity is the differential test behind `vrender parity`: it sends
// a user's own chat requests to a running vLLM server and holds vrender to
// vLLM's answers on the user's model and traffic.
//
// Three checks run per request. Render: the prompt token IDs vLLM's
// /tokenize (chat form) and /v1/chat/completions/render return against
// vrender's render of the same request. Parser batch and parser stream:
// the output token IDs vLLM generated for /v1/chat/completions
// (return_token_ids, temperature 0, fixed seed) are derendered by vrender,
// and content, reasoning, tool calls and finish_reason are compared with
// vLLM's non-streaming answer. vrender's contract is that its stream
// accumulates to vLLM's non-streaming answer, so the streaming run is held
// to that answer too; where vLLM's own stream disagrees with its own
// non-streaming answer, that is recorded as a vLLM divergence, never as a
// vrender failure. Differences docs/compatibility.md lists as deliberate
// are classified as known, not failed.
//
// This is not internal/parity, which reads the golden set of ../shared.
package parity
