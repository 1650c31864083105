#!/usr/bin/env python3
"""Writes responses_validation_golden.jsonl: the 400 bodies vLLM answers for
refused POST /v1/responses (and /v1/responses/render) bodies, or "ok".

ResponsesRequest is declared as vLLM declares it at the golden commit
(vllm/entrypoints/openai/responses/protocol.py at mlow/vllm bf578e1): the
same members in the same order, typed with openai-python's own types (commit
e43b4224, 3.3.1; imported through the shim openai_shim.sh builds),
and its before-validators. Members vLLM types with its own classes
(structured_outputs, previous_input_messages, vllm_xargs) are Any here: the
cases leave them out. Errors go through the message rules of vLLM's
validation exception handler (gen_validation_golden.py's handle).
Run: PYTHONPATH=<shim>/src python3 gen_responses_validation_golden.py > responses_validation_golden.jsonl
"""
import json
import os
import sys
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "protocol", "testdata"))
from gen_validation_golden import OpenAIBaseModel, VLLMValidationError, handle  # noqa: E402

from openai.types.responses import (ResponseFunctionToolCall, ResponseInputItemParam,  # noqa: E402
                                   ResponseOutputItem, ResponseOutputMessage, ResponsePrompt,
                                   ResponseReasoningItem, ResponseTextConfig)
from openai.types.responses.response import ToolChoice  # noqa: E402
from openai.types.responses.tool import Tool  # noqa: E402
from openai.types.shared import Metadata, Reasoning  # noqa: E402

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


class ResponsesRequest(OpenAIBaseModel):
    background: bool | None = False
    include: list[Literal["code_interpreter_call.outputs", "computer_call_output.output.image_url",
                          "file_search_call.results", "message.input_image.image_url",
                          "message.output_text.logprobs", "reasoning.encrypted_content"]] | None = None
    input: str | list[ResponseInputItemParam | ResponseOutputItem]
    instructions: str | None = None
    max_output_tokens: int | None = None
    max_tool_calls: int | None = None
    metadata: Metadata | None = None
    model: str | None = None
    logit_bias: dict[str, float] | None = None
    parallel_tool_calls: bool | None = True
    previous_response_id: str | None = None
    prompt: ResponsePrompt | None = None
    reasoning: Reasoning | None = None
    include_reasoning: bool = True
    service_tier: Literal["auto", "default", "flex", "scale", "priority"] = "auto"
    store: bool | None = True
    stream: bool | None = False
    temperature: float | None = None
    text: ResponseTextConfig | None = None
    tool_choice: ToolChoice = "auto"
    tools: list[Tool] = Field(default_factory=list)
    top_logprobs: int | None = 0
    top_p: float | None = None
    top_k: int | None = None
    truncation: Literal["auto", "disabled"] | None = "disabled"
    user: str | None = None
    skip_special_tokens: bool = True
    include_stop_str_in_output: bool = False
    presence_penalty: float | None = Field(default=None, ge=-2.0, le=2.0)
    frequency_penalty: float | None = Field(default=None, ge=-2.0, le=2.0)
    prompt_cache_key: str | None = None
    request_id: str = Field(default_factory=lambda: "resp_x")
    media_io_kwargs: dict[str, dict[str, Any]] | None = None
    mm_processor_kwargs: dict[str, Any] | None = None
    priority: int = Field(default=0, ge=_INT64_MIN, le=_INT64_MAX)
    cache_salt: str | None = None
    enable_response_messages: bool = False
    previous_input_messages: Any = None
    structured_outputs: Any = None
    repetition_penalty: float | None = None
    seed: int | None = Field(None, ge=_INT64_MIN, le=_INT64_MAX)
    stop: str | list[str] | None = []
    ignore_eos: bool = False
    vllm_xargs: Any = None
    kv_transfer_params: dict[str, Any] | None = None
    ec_transfer_params: dict[str, Any] | None = None
    chat_template_kwargs: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def validate_background(cls, data):
        if not data.get("background"):
            return data
        if not data.get("store", True):
            raise VLLMValidationError("background can only be used when `store` is true", parameter="background")
        return data

    @model_validator(mode="before")
    @classmethod
    def validate_prompt(cls, data):
        if data.get("prompt") is not None:
            raise VLLMValidationError("prompt template is not supported", parameter="prompt")
        return data

    @model_validator(mode="before")
    @classmethod
    def check_cache_salt_support(cls, data):
        if data.get("cache_salt") is not None and (not isinstance(data["cache_salt"], str) or not data["cache_salt"]):
            raise VLLMValidationError("Parameter 'cache_salt' must be a non-empty string if provided.",
                                      parameter="cache_salt")
        return data

    @model_validator(mode="before")
    @classmethod
    def input_item_parsing(cls, data):
        input_data = data.get("input")
        if input_data is None or isinstance(input_data, (str, bytes)):
            return data
        if not isinstance(input_data, list):
            try:
                input_data = list(input_data)
            except TypeError:
                return data
        processed_input = []
        for item in input_data:
            if not isinstance(item, dict):
                processed_input.append(item)
                continue
            item_type = item.get("type")
            if item_type == "function_call":
                try:
                    processed_input.append(ResponseFunctionToolCall(**item))
                except ValidationError:
                    processed_input.append(item)
            elif item_type == "reasoning":
                if "id" not in item:
                    item = {**item, "id": "rs_x"}
                try:
                    processed_input.append(ResponseReasoningItem(**item))
                except ValidationError:
                    processed_input.append(item)
            elif item_type == "message" and item.get("role") == "assistant":
                content = item.get("content")
                if not isinstance(content, list):
                    processed_input.append(item)
                    continue
                original_item = item
                item = dict(item)
                if "id" not in item:
                    item["id"] = "msg_x"
                if "status" not in item:
                    item["status"] = "completed"
                new_content = []
                for c in content:
                    if isinstance(c, dict) and c.get("type") == "output_text" and "annotations" not in c:
                        c = {**c, "annotations": []}
                    new_content.append(c)
                item["content"] = new_content
                try:
                    processed_input.append(ResponseOutputMessage(**item))
                except ValidationError:
                    processed_input.append(original_item)
            else:
                processed_input.append(item)
        data["input"] = processed_input
        return data

    @model_validator(mode="before")
    @classmethod
    def check_tool_usage(cls, data):
        if not isinstance(data, dict):
            return data
        tools = data.get("tools")
        tool_choice = data.get("tool_choice", "auto")
        has_tools = tools is not None and len(tools) > 0
        is_named_tool_choice = isinstance(tool_choice, dict) and tool_choice.get("type") == "function"
        if not has_tools:
            if tool_choice in ("auto", "none"):
                data["tool_choice"] = "none"
            elif tool_choice == "required":
                raise VLLMValidationError("Tool choice 'required' must be specified with 'tools' parameter.",
                                          parameter="tool_choice")
            elif is_named_tool_choice:
                raise VLLMValidationError("Tool choice 'function' not found in 'tools' parameter.",
                                          parameter="tool_choice")
        elif is_named_tool_choice and tools is not None:
            tool_name = tool_choice.get("name")
            tool_names = set()
            for tool in tools:
                if isinstance(tool, dict):
                    if tool.get("type") == "namespace":
                        namespace = tool.get("name")
                        for namespaced_tool in tool.get("tools", []):
                            namespaced_name = namespaced_tool.get("name")
                            tool_names.add(namespaced_name)
                            tool_names.add(f"{namespace}__{namespaced_name}")
                    else:
                        tool_names.add(tool.get("name"))
                else:
                    tool_names.add(getattr(tool, "name", None))
            if not tool_name or tool_name not in tool_names:
                raise VLLMValidationError("Tool choice 'function' not found in 'tools' parameter.",
                                          parameter="tool_choice")
        return data


def run(body_text):
    body = json.loads(body_text)
    try:
        ResponsesRequest.model_validate(body)
    except ValidationError as e:
        errs = [{**x, "loc": ("body",) + tuple(x["loc"])} for x in e.errors(include_url=False)]
        return handle(errs)
    return {"ok": "ResponsesRequest"}


FN = {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}
U = {"role": "user", "content": "Hi"}


def body(**kw):
    return json.dumps({"model": "m", "input": "Hi", **kw})


cases = [
    # Issue 29 part 3: members typed by OpenAI's types and vLLM's Literals.
    ("reasoning effort bogus", body(reasoning={"effort": "bogus"})),
    ("reasoning effort int", body(reasoning={"effort": 3})),
    ("reasoning not an object", body(reasoning="high")),
    ("reasoning summary bogus", body(reasoning={"summary": "long", "generate_summary": 1})),
    ("reasoning ok", body(reasoning={"effort": "high", "summary": "auto", "mode": "anything"})),
    ("service_tier bogus", body(service_tier="fast")),
    ("service_tier null", body(service_tier=None)),
    ("service_tier ok", body(service_tier="flex")),
    ("include item bogus", body(include=["message.output_text.logprobs", "bogus", 5])),
    ("include not a list", body(include="message.output_text.logprobs")),
    ("include null ok", body(include=None)),
    ("metadata value int", body(metadata={"a": "x", "b": 1, "c": None})),
    ("metadata not a dict", body(metadata=["a"])),
    ("metadata ok", body(metadata={"a": "x"})),
    ("text format type bogus", body(text={"format": {"type": "bogus"}})),
    ("text format json_schema without schema", body(text={"format": {"type": "json_schema", "name": "x"}})),
    ("text format schema not a dict", body(text={"format": {"type": "json_schema", "name": "x", "schema": []}})),
    ("text format not an object", body(text={"format": "json_object"})),
    ("text verbosity bogus", body(text={"verbosity": "loud"})),
    ("text not an object", body(text="plain")),
    ("text ok", body(text={"format": {"type": "json_schema", "name": "x", "schema": {"type": "object"}}, "verbosity": "low"})),
    ("tool parameters not a dict", body(tools=[{"type": "function", "name": "f", "parameters": 5}])),
    ("tool name missing", body(tools=[{"type": "function", "parameters": {}}])),
    ("tool type bogus", body(tools=[{"type": "bogus", "name": "f"}])),
    ("tool not an object", body(tools=["f"])),
    ("tools not a list", body(tools={"type": "function"})),
    ("tools null", body(tools=None)),
    ("tool strict string", body(tools=[{"type": "function", "name": "f", "parameters": None, "strict": "maybe"}])),
    ("tools ok", body(tools=[FN, {"type": "web_search"}])),
    # Issue 29 part 4: tool_choice values the served route refused and render accepted.
    ("tool_choice float", body(tools=[FN], tool_choice=5.5)),
    ("tool_choice list", body(tools=[FN], tool_choice=[1, "a"])),
    ("tool_choice bogus string", body(tools=[FN], tool_choice="bogus")),
    ("tool_choice bogus type", body(tools=[FN], tool_choice={"type": "bogus"})),
    ("tool_choice null", body(tools=[FN], tool_choice=None)),
    ("tool_choice bogus without tools", body(tool_choice="bogus")),
    ("tool_choice named ok", body(tools=[FN], tool_choice={"type": "function", "name": "get_weather"})),
    ("tool_choice named missing", body(tools=[FN], tool_choice={"type": "function", "name": "nope"})),
    ("tool_choice required without tools", body(tool_choice="required")),
    ("tool_choice allowed_tools ok", body(tools=[FN], tool_choice={"type": "allowed_tools", "mode": "auto", "tools": []})),
    ("tool_choice namespaced ok", body(tools=[{"type": "namespace", "name": "ns", "description": "d", "tools": [{"type": "function", "name": "f"}]}],
                                       tool_choice={"type": "function", "name": "ns__f"})),
    # Issue 29 part 5: input items are checked, none is dropped.
    ("input role bogus", body(input=[{"role": "bogus", "content": "Hi"}])),
    ("input role missing", body(input=[{"content": "Hi"}])),
    ("input item not an object", body(input=[U, 5])),
    ("input type bogus", body(input=[{"type": "bogus"}])),
    ("input content int", body(input=[{"role": "user", "content": 5}])),
    ("input missing", json.dumps({"model": "m"})),
    ("input missing with empty tools", json.dumps({"model": "m", "tools": []})),
    ("input missing with tools", json.dumps({"model": "m", "tools": [FN], "tool_choice": "auto"})),
    ("input not a list", body(input=5)),
    ("input null", body(input=None)),
    ("input ok roles", body(input=[{"role": r, "content": "x"} for r in ("user", "assistant", "system", "developer")])),
    ("input assistant output message ok", body(input=[U, {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hello"}]}])),
    ("input assistant output message bad part", body(input=[U, {"type": "message", "role": "assistant", "content": [{"type": "output_text"}]}])),
    ("input reasoning without id ok", body(input=[U, {"type": "reasoning", "summary": []}])),
    ("input reasoning bad summary", body(input=[U, {"type": "reasoning", "summary": "x"}])),
    ("input function_call ok", body(input=[U, {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}])),
    ("input function_call missing arguments", body(input=[U, {"type": "function_call", "call_id": "c", "name": "f"}])),
    ("input function_call_output ok", body(input=[U, {"type": "function_call_output", "call_id": "c", "output": "r"}])),
    # vLLM's own members and validators.
    ("instructions int", body(instructions=5)),
    ("max_output_tokens string", body(max_output_tokens="many")),
    ("stream bad", body(stream="maybe")),
    ("truncation bogus", body(truncation="middle")),
    ("request_id null", body(request_id=None)),
    ("priority too big", body(priority=2**63)),
    ("prompt refused", body(prompt={"id": "pmpt_1"})),
    ("background without store", body(background=True, store=False)),
    ("cache_salt empty", body(cache_salt="")),
    ("several members at once", body(service_tier="x", metadata={"a": 1}, reasoning={"effort": "x"}, include=["y"])),
    # The members shared with chat, validated with the others in declaration order.
    ("presence_penalty above 2", body(presence_penalty=3)),
    ("frequency_penalty below -2", body(frequency_penalty=-2.5)),
    ("penalties at the bounds ok", body(presence_penalty=2, frequency_penalty=-2.0)),
    ("sampling members badly typed", body(temperature="hot", top_p=[], top_k=1.5, logit_bias={"1": "x"},
                                          skip_special_tokens="maybe", include_stop_str_in_output=2,
                                          repetition_penalty={}, seed="s", stop=5, ignore_eos=[],
                                          chat_template_kwargs=[])),
    ("seed too big", body(seed=2**63)),
    ("stop list with a number", body(stop=["a", 1])),
    ("shared and own members interleaved", body(chat_template_kwargs=1, temperature="x", instructions=5,
                                                top_logprobs="y", metadata=[])),
]

if __name__ == "__main__":
    for name, b in cases:
        print(json.dumps({"name": name, "body": b, "result": run(b)}, ensure_ascii=False))
