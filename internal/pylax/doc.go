// Package pylax emulates pydantic's lax ("python") validation of a JSON
// request body, as vLLM runs it on the result of json.loads: true, 1, "yes"
// and 1.0 are bools, 7, 7.0 and "7" ints. An Object is one JSON object under
// validation; its field readers return typed values and record each
// failure as a FieldError in pydantic's order, and a ValidationError renders
// them as vLLM's 400 message, byte for byte (str() of the error dicts,
// sanitize_message, the ten-error cap).
//
// The wire types live with the API that owns them (protocol for OpenAI's,
// anthropic and responses for theirs); each of those packages reads its
// own models with this one machinery.
package pylax
