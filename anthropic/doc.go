// Package anthropic is vLLM's Anthropic Messages API (/v1/messages,
// /v1/messages/count_tokens, /v1/messages/render): the request types and
// their pydantic-lax validation (DecodeMessagesRequest, byte-identical to
// vLLM's 400s), the conversion to the chat request vLLM runs
// (ToChat), the answer and the event stream in Anthropic's shape, and the
// error body vLLM's router gives. The server's route table calls these;
// nothing else in the tree knows the API.
package anthropic
