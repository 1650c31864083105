// Package responses is vLLM's OpenAI Responses API on the non-Harmony path
// (/v1/responses, /v1/responses/render): the request type and its
// validation over openai-python's pydantic types (DecodeRequest,
// byte-identical to vLLM's 400s), the conversion to chat messages (ToChat),
// rendering through render's API-neutral hooks, the answer and its event
// stream. The server's route table calls these; nothing else in the tree
// knows the API.
package responses
