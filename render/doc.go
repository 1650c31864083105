// Package render turns an OpenAI chat request into the prompt vLLM would
// build from it: vLLM's message normalisation (parse_chat_messages), its
// template choice and content-format detection, transformers'
// apply_chat_template call (special tokens, tools and documents passed
// explicitly, continue_final_message cutting) on our own Jinja engine, and
// tokenisation with truncation.
//
// A Renderer compiles the model's and the server's templates once and is
// safe for concurrent use. Every failure a client can cause is a
// *BadRequestError, which the HTTP layer maps to 400 BadRequestError with
// Message as vLLM words it.
package render
