// Package engine is the HTTP client vrender's orchestrator uses to drive a
// tokens-only vLLM engine (vllm serve --tokens-only, or vrender engine-sim):
// POST /inference/v1/generate, streaming or not, and
// POST /inference/v1/abort_requests.
//
// The engine speaks the wire format of vllm-api.md §4: SSE events
// "data: <GenerateResponse JSON>" separated by blank lines, an optional
// final usage event, "data: [DONE]", and errors either as an HTTP status
// with an error body or, once streaming has started, as an in-stream
// "data: {"error":{...}}" event.
//
// Every failure the caller sees is an *Error carrying the status vrender
// should answer its own OpenAI client with (400/404 passthrough of the
// engine's client errors, 502 for a misbehaving engine, 503 for an
// unreachable or overloaded one, 504 for one that stopped talking), except
// cancellation by the caller's own context, which is returned as an error
// wrapping ctx.Err().
//
// Retries happen only before the engine sent any response byte, so a
// request is never replayed after tokens were delivered.
package engine
