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
// keeps them out of the prompt, as `make run` does.
//
// A request's `features` (rendered images) are checked as vLLM's generate
// route checks them (features.Decode, CheckPrompt; a Qwen item's grid must
// fill its placeholder): a bad one is a 400 with vLLM's text. The built-in
// plain answer then begins with what arrived, deterministically: "I see 1
// image: 1288x728 (grid 1x52x92), mm_hash 4f0c1d2e3f4a…." (size from
// image_grid_thw and the patch side pixel_values' rows imply, the hash's
// first 12 characters; "size unknown" for a null item the engine has not
// seen, which ec_transfer_params or requires_kv stand for). A null item
// whose mm_hash an earlier request brought resolves from the engine's item
// cache (Config.MMProcessorCacheBytes), as vLLM's receiver cache resolves
// it; one the cache lacks fails the request as vLLM's engine core fails it
// (itemcache.go). An item's base64 text the
// engine decoded before (a conversation re-sends its pictures every turn)
// is not decoded again: its bytes are remembered under the text's seeded
// xxh3-128 (up to 1 GiB), which a differential test holds to decoding.
// Tool calls, structured outputs and Harmony answers
// are unchanged. The prefix cache and KV events key each block that
// overlaps an image by (mm_hash, offset in the block), as vLLM does.
//
// Latency
// and faults (refused connection, 500, dropped or stalled stream) are
// configurable so clients can be tested against a misbehaving engine.
package enginesim
