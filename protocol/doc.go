// Package protocol holds the OpenAI wire types vrender shares with vLLM:
// request and response bodies, the error envelope, and the decoders that
// turn a request body into a typed value the way vLLM's pydantic models do
// (over internal/pylax, which the Anthropic and Responses front ends use for
// their own request types too).
//
// Responses marshal every field, nulls included, in vLLM's field order,
// because vLLM answers with model_dump() and clients compare whole bodies.
// Requests are decoded with pydantic's lax rules (a JSON 1 is a valid bool,
// "7" a valid int) and report failures as a *pylax.ValidationError whose message
// matches vLLM's "N validation errors: …" text.
package protocol
