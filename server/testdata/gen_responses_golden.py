#!/usr/bin/env python3
"""Writes responses_render_golden.jsonl: Responses bodies and the chat
request vLLM's non-Harmony Responses path builds from each (messages from
construct_input_messages, chat_template_kwargs from build_chat_params,
sampling members from to_sampling_params), or the error vLLM answers.

Cases follow vLLM's own tests at the golden commit (mlow/vllm 2dfaae752):
tests/entrypoints/openai/responses/test_responses_utils.py,
test_sampling_params.py and test_structured_output.py, and the render
route of vllm PR #50195 (previous_response_id refused). Run from this
directory: python3 gen_responses_golden.py > responses_render_golden.jsonl
"""
import json

SRC = "tests/entrypoints/openai/responses/"
AT = "@2dfaae752"


def reasoning(text=None, summary=None, **kw):
    item = {"type": "reasoning", "id": "rs_1", "summary": [], **kw}
    if text is not None:
        item["content"] = [{"type": "reasoning_text", "text": text}]
    if summary is not None:
        item["summary"] = [{"type": "summary_text", "text": summary}]
    return item


def output_message(text, **kw):
    return {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}], **kw}


def function_call(call_id, name="get_weather", arguments='{"city": "Paris"}', id=None):
    item = {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}
    if id is not None:
        item["id"] = id
    return item


def call(call_id, name="get_weather", arguments='{"city": "Paris"}'):
    return {"id": call_id, "function": {"name": name, "arguments": arguments}, "type": "function"}


USER = {"role": "user", "content": "What is the weather?"}
cases = []


def case(name, source, responses, chat=None, error=None):
    c = {"name": name, "source": source, "responses": {"model": "m", **responses}}
    if chat is not None:
        c["chat"] = {"model": "m", **chat}
    if error is not None:
        c["error"] = error
    cases.append(c)


def validator_bad(message, param, items):
    """A VLLMValidationError raised by a ResponsesRequest before-validator, as
    pydantic reports it and vLLM's validation handler answers it (the body
    had `items` members when the validator ran)."""
    err = "{'type': 'value_error', 'loc': 'body', 'msg': %r, 'input': %r, 'ctx': {'error': VLLMValidationError(%r)}}" % (
        f"Value error, {message} (parameter={param})", f"<dict of {items} items>", message)
    return bad("1 validation error:\n  " + err, param, "Bad Request")


def bad(message, param=None, type_="BadRequestError", code=400):
    return {"status": code, "body": {"error": {"message": message, "type": type_, "param": param, "code": code}}}


case("string input", SRC + "test_responses_utils.py" + AT + " construct_input_messages (string input)",
     {"input": "Hello"}, {"messages": [{"role": "user", "content": "Hello"}]})
case("instructions become a system message", SRC + "test_responses_utils.py" + AT
     + " TestConstructInputMessagesInstructionsLeak::test_no_prev_msg",
     {"instructions": "Be brief.", "input": "Hello"},
     {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}]})
case("empty instructions dropped", SRC + "test_responses_utils.py" + AT + " construct_input_messages (falsy instructions)",
     {"instructions": "", "input": "Hello"}, {"messages": [{"role": "user", "content": "Hello"}]})
case("easy input messages as given", SRC + "test_basic.py" + AT + " test_chat (message list input)",
     {"input": [{"role": "system", "content": "You are terse."}, {"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}]},
     {"messages": [{"role": "system", "content": "You are terse."}, {"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}]})
case("reasoning then MCP tool call merge", SRC + "test_responses_utils.py" + AT
     + " TestResponsesUtils::test_construct_chat_messages_with_tool_call",
     {"input": [USER, reasoning("Leroy Jenkins"), function_call("call_123", "python", '{"code": "123+456"}', id="mcp_123")]},
     {"messages": [USER, {"role": "assistant", "reasoning": "Leroy Jenkins", "tool_calls": [call("call_123", "python", '{"code": "123+456"}')]}]})
case("reasoning summary fallback", SRC + "test_responses_utils.py" + AT
     + " TestReasoningItemContentPriority::test_summary_fallback_when_no_content",
     {"input": [USER, reasoning(summary='Hmm, the user has just started with a simple "Hello,"')]},
     {"messages": [USER, {"role": "assistant", "reasoning": 'Hmm, the user has just started with a simple "Hello,"'}]})
case("reasoning content preferred over summary", SRC + "test_responses_utils.py" + AT
     + " TestReasoningItemContentPriority::test_content_preferred_over_summary",
     {"input": [USER, reasoning("from content", "from summary")]},
     {"messages": [USER, {"role": "assistant", "reasoning": "from content"}]})
case("reasoning with neither content nor summary", SRC + "test_responses_utils.py" + AT
     + " TestReasoningItemContentPriority::test_neither_content_nor_summary",
     {"input": [USER, reasoning()]}, {"messages": [USER, {"role": "assistant", "reasoning": ""}]})
case("encrypted reasoning refused", SRC + "test_responses_utils.py" + AT
     + " TestReasoningItemContentPriority::test_encrypted_content_raises",
     {"input": [USER, reasoning(encrypted_content="TOP_SECRET_MESSAGE")]},
     error=bad("Encrypted content is not supported."))
case("function call output dict", SRC + "test_responses_utils.py" + AT
     + " TestResponsesUtils::test_construct_chat_messages_preserves_single_item_conversions",
     {"input": [USER, function_call("temp_dict"), {"type": "function_call_output", "call_id": "temp_dict", "output": "5678"}]},
     {"messages": [USER, {"role": "assistant", "tool_calls": [call("temp_dict")]},
                   {"role": "tool", "content": "5678", "tool_call_id": "temp_dict"}]})
case("output message", SRC + "test_responses_utils.py" + AT
     + " TestResponsesUtils::test_construct_chat_messages_preserves_single_item_conversions",
     {"input": [USER, output_message("dongyi")]},
     {"messages": [USER, {"role": "assistant", "content": "dongyi"}]})
for name, items, want in [
    ("reasoning-output-messages", [reasoning("Let me think"), output_message("Hello")],
     [{"role": "assistant", "reasoning": "Let me think", "content": "Hello"}]),
    ("consecutive-tool-calls", [function_call("call_123"), function_call("call_456")],
     [{"role": "assistant", "tool_calls": [call("call_123"), call("call_456")]}]),
    ("reasoning-tool-call", [reasoning("Let me think"), function_call("call_123")],
     [{"role": "assistant", "reasoning": "Let me think", "tool_calls": [call("call_123")]}]),
    ("output-tool-call", [output_message("Hello"), function_call("call_123")],
     [{"role": "assistant", "content": "Hello", "tool_calls": [call("call_123")]}]),
    ("reasoning-output-tool-call", [reasoning("Thinking"), output_message("Hello"), function_call("call_123"), function_call("call_456")],
     [{"role": "assistant", "reasoning": "Thinking", "content": "Hello", "tool_calls": [call("call_123"), call("call_456")]}]),
    ("reasoning-easyinput-assistant", [reasoning("Let me think"), {"type": "message", "role": "assistant", "content": "Hello"}],
     [{"role": "assistant", "reasoning": "Let me think", "content": "Hello"}]),
    ("consecutive-output-messages", [output_message("Hello"), output_message("World")],
     [{"role": "assistant", "content": "Hello"}, {"role": "assistant", "content": "World"}]),
    ("consecutive-reasoning-messages", [reasoning("Let me think"), reasoning("Let me think more")],
     [{"role": "assistant", "reasoning": "Let me think"}, {"role": "assistant", "reasoning": "Let me think more"}]),
    ("interrupted-by-non-assistant-item", [function_call("call_123"),
                                           {"type": "function_call_output", "call_id": "call_123", "output": "42"},
                                           function_call("call_456")],
     [{"role": "assistant", "tool_calls": [call("call_123")]}, {"role": "tool", "content": "42", "tool_call_id": "call_123"},
      {"role": "assistant", "tool_calls": [call("call_456")]}]),
]:
    case("merge " + name, SRC + "test_responses_utils.py" + AT + " TestConstructChatMessagesCombinePolicy " + name,
         {"input": [USER] + items}, {"messages": [USER] + want})
case("in-progress assistant message is continued", SRC + "test_responses_utils.py" + AT
     + " TestShouldContinueFinalMessage::test_dict_in_progress_message_returns_true",
     {"input": [USER, {"type": "message", "role": "assistant", "content": "The weather is", "status": "in_progress"}]},
     {"messages": [USER, {"role": "assistant", "content": "The weather is"}],
      "add_generation_prompt": False, "continue_final_message": True})
case("reasoning effort reaches the template", "vllm/entrypoints/openai/responses/protocol.py" + AT + " build_chat_params",
     {"input": "Hello", "reasoning": {"effort": "none"}},
     {"messages": [{"role": "user", "content": "Hello"}], "reasoning_effort": "none"})
case("chat_template_kwargs enable_thinking wins over effort", "vllm/entrypoints/openai/responses/protocol.py" + AT + " build_chat_params",
     {"input": "Hello", "reasoning": {"effort": "low"}, "chat_template_kwargs": {"enable_thinking": False}},
     {"messages": [{"role": "user", "content": "Hello"}], "reasoning_effort": "low", "chat_template_kwargs": {"enable_thinking": False}})
case("sampling params", SRC + "test_sampling_params.py" + AT
     + " TestResponsesRequestSamplingParams::test_basic_sampling_params",
     {"input": "test input", "temperature": 0.8, "top_p": 0.95, "top_k": 50, "max_output_tokens": 100},
     {"messages": [{"role": "user", "content": "test input"}], "temperature": 0.8, "top_p": 0.95, "top_k": 50, "max_tokens": 100})
case("extra sampling params", SRC + "test_sampling_params.py" + AT
     + " TestResponsesRequestSamplingParams::test_extra_sampling_params",
     {"input": "test input", "repetition_penalty": 1.2, "seed": 42, "stop": ["END", "STOP"], "ignore_eos": True,
      "vllm_xargs": {"custom": "value", "count": 42}},
     {"messages": [{"role": "user", "content": "test input"}], "repetition_penalty": 1.2, "seed": 42,
      "stop": ["END", "STOP"], "ignore_eos": True, "vllm_xargs": {"custom": "value", "count": 42}})
case("stop string", SRC + "test_sampling_params.py" + AT
     + " TestResponsesRequestSamplingParams::test_stop_string_conversion",
     {"input": "test input", "stop": "STOP"}, {"messages": [{"role": "user", "content": "test input"}], "stop": "STOP"})
case("stream", "vllm/entrypoints/openai/responses/protocol.py" + AT + " to_sampling_params (output_kind DELTA)",
     {"input": "Hello", "stream": True}, {"messages": [{"role": "user", "content": "Hello"}], "stream": True})
case("truncation auto", "vllm/entrypoints/openai/responses/protocol.py" + AT + " build_tok_params",
     {"input": "Hello", "truncation": "auto", "max_output_tokens": 16},
     {"messages": [{"role": "user", "content": "Hello"}], "truncate_prompt_tokens": -1, "max_tokens": 16})
case("logprobs included", "vllm/entrypoints/openai/responses/protocol.py" + AT + " is_include_output_logprobs",
     {"input": "Hello", "include": ["message.output_text.logprobs"], "top_logprobs": 3},
     {"messages": [{"role": "user", "content": "Hello"}], "logprobs": True, "top_logprobs": 3})
schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
case("text.format json_schema", SRC + "test_structured_output.py" + AT + " (text.format json_schema)",
     {"input": "Give me a name", "text": {"format": {"type": "json_schema", "name": "person", "schema": schema, "strict": True}}},
     {"messages": [{"role": "user", "content": "Give me a name"}], "structured_outputs": {"json": schema}})
case("structured_outputs passed through", SRC + "test_sampling_params.py" + AT
     + " TestResponsesRequestSamplingParams::test_structured_outputs_passed_through",
     {"input": "test input", "structured_outputs": {"regex": "[a-z]+"}},
     {"messages": [{"role": "user", "content": "test input"}], "structured_outputs": {"regex": "[a-z]+"}})
case("structured_outputs and text.format conflict", SRC + "test_sampling_params.py" + AT
     + " TestResponsesRequestSamplingParams::test_structured_outputs_and_json_schema_conflict",
     {"input": "test input", "structured_outputs": {"regex": "[a-z]+"},
      "text": {"format": {"type": "json_schema", "name": "x", "schema": schema}}},
     error=bad("Cannot specify both structured_outputs and text.format", "structured_outputs"))
case("previous_response_id refused", "vllm/entrypoints/serve/render/serving.py (vllm PR #50195) render_responses_request",
     {"input": "Hello", "previous_response_id": "resp_123"},
     error=bad("previous_response_id is not supported by the stateless render endpoint.", "previous_response_id",
               "invalid_request_error"))
case("required tool_choice without tools", "vllm/entrypoints/openai/responses/protocol.py" + AT + " check_tool_usage",
     {"input": "Hello", "tool_choice": "required"},
     error=validator_bad("Tool choice 'required' must be specified with 'tools' parameter.", "tool_choice", 3))
case("named tool_choice not among tools", "vllm/entrypoints/openai/responses/protocol.py" + AT + " check_tool_usage",
     {"input": "Hello", "tools": [{"type": "function", "name": "a", "parameters": {}}],
      "tool_choice": {"type": "function", "name": "b"}},
     error=validator_bad("Tool choice 'function' not found in 'tools' parameter.", "tool_choice", 4))
case("prompt template refused", "vllm/entrypoints/openai/responses/protocol.py" + AT + " validate_prompt",
     {"input": "Hello", "prompt": {"id": "pmpt_1"}}, error=validator_bad("prompt template is not supported", "prompt", 4))

for c in cases:
    print(json.dumps(c))
