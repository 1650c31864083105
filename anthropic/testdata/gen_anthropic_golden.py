"""Regenerates anthropic_validation_golden.jsonl: the 400 bodies vLLM's
POST /v1/messages/render returns for Messages bodies that fail validation.
The models below declare the fields, defaults and validators of vLLM's
AnthropicMessagesRequest, AnthropicMessage, AnthropicContentBlock,
AnthropicTool, AnthropicToolChoice and AnthropicOutputConfig
(vllm/entrypoints/anthropic/protocol.py as stored at vllm-project/vllm
00589e5). Error bodies go through the same emulation of vLLM's validation
handler as protocol/testdata/gen_validation_golden.py.
Run: python3 gen_anthropic_golden.py > anthropic_validation_golden.jsonl"""
import json
import os
import sys
from typing import Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError, field_validator, model_validator

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "protocol", "testdata"))
from gen_validation_golden import handle  # noqa: E402


class AnthropicContentBlock(BaseModel):
    type: Literal["text", "image", "tool_use", "tool_result", "tool_reference", "thinking", "redacted_thinking"]
    text: str | None = None
    source: dict[str, Any] | None = None
    id: str | None = None
    tool_use_id: str | None = None
    name: str | None = None
    input: dict[str, Any] | None = None
    content: str | list[dict[str, Any]] | None = None
    is_error: bool | None = None
    tool_name: str | None = None
    thinking: str | None = None
    signature: str | None = None
    data: str | None = None


class AnthropicMessage(BaseModel):
    role: Literal["user", "assistant", "system"]
    content: str | list[AnthropicContentBlock]

    @field_validator("role", mode="before")
    @classmethod
    def normalize_role(cls, v):
        return {"ctx": "user", "msg": "user"}.get(v, v)


class AnthropicTool(BaseModel):
    name: str
    description: str | None = None
    input_schema: dict[str, Any]
    strict: bool | None = None
    defer_loading: bool | None = None

    @field_validator("input_schema")
    @classmethod
    def validate_input_schema(cls, v):
        if "type" not in v:
            v["type"] = "object"
        return v


class AnthropicToolChoice(BaseModel):
    type: Literal["auto", "any", "tool", "none"]
    name: str | None = None

    @model_validator(mode="after")
    def validate_name_required_for_tool(self):
        if self.type == "tool" and not self.name:
            raise ValueError("tool_choice.name is required when type is 'tool'")
        return self


class AnthropicJsonOutputFormat(BaseModel):
    json_schema: dict[str, Any] | None = Field(default=None, alias="schema")
    type: Literal["json_schema"] = "json_schema"


class AnthropicOutputConfig(BaseModel):
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None
    format: AnthropicJsonOutputFormat | None = None


class AnthropicMessagesRequest(BaseModel):
    model: str
    messages: list[AnthropicMessage]
    max_tokens: int
    metadata: dict[str, Any] | None = None
    output_config: AnthropicOutputConfig | None = None
    stop_sequences: list[str] | None = None
    stream: bool | None = False
    system: str | list[AnthropicContentBlock] | None = None
    temperature: float | None = None
    tool_choice: AnthropicToolChoice | None = None
    tools: list[AnthropicTool] | None = None
    top_k: int | None = None
    top_p: float | None = None
    kv_transfer_params: dict[str, Any] | None = None
    chat_template_kwargs: dict[str, Any] | None = None
    vllm_xargs: dict[str, Any] | None = None  # passed through by vLLM's conversion tests at 017ad41

    @field_validator("model")
    @classmethod
    def validate_model(cls, v):
        if not v:
            raise ValueError("Model is required")
        return v

    @field_validator("max_tokens")
    @classmethod
    def validate_max_tokens(cls, v):
        if v <= 0:
            raise ValueError("max_tokens must be positive")
        return v


ADAPTER = TypeAdapter(AnthropicMessagesRequest)


def run(body_text):
    body = json.loads(body_text)
    if body is None:
        return handle([{"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}])
    try:
        ADAPTER.validate_python(body)
    except ValidationError as e:
        return handle([{**x, "loc": ("body",) + tuple(x["loc"])} for x in e.errors(include_url=False)])
    return {"ok": "AnthropicMessagesRequest"}


U = '"messages":[{"role":"user","content":"Hi"}]'
cases = [
    # tests/entrypoints/anthropic: requests built with model, max_tokens and messages.
    ("ok_minimal", '{"model":"m","max_tokens":16,' + U + '}'),
    ("ok_roles_ctx_msg", '{"model":"m","max_tokens":16,"messages":[{"role":"ctx","content":"a"},{"role":"msg","content":"b"}]}'),
    ("ok_every_block", '{"model":"m","max_tokens":16,"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},'
     '{"type":"redacted_thinking","data":"x"},{"type":"tool_use","id":"c","name":"f","input":{}}]},'
     '{"role":"user","content":[{"type":"tool_result","tool_use_id":"c","content":[{"type":"text","text":"r"}],"is_error":false}]}]}'),
    ("no_body_fields", '{}'),
    ("null_body", 'null'),
    ("array_body", '[1]'),
    ("empty_model", '{"model":"","max_tokens":16,' + U + '}'),
    ("max_tokens_missing", '{"model":"m",' + U + '}'),
    ("max_tokens_zero", '{"model":"m","max_tokens":0,' + U + '}'),
    ("max_tokens_negative_string", '{"model":"m","max_tokens":"-3",' + U + '}'),
    ("max_tokens_float", '{"model":"m","max_tokens":1.5,' + U + '}'),
    ("messages_not_list", '{"model":"m","max_tokens":16,"messages":"hi"}'),
    ("message_bad_role", '{"model":"m","max_tokens":16,"messages":[{"role":"tool","content":"x"}]}'),
    ("message_no_content", '{"model":"m","max_tokens":16,"messages":[{"role":"user"}]}'),
    ("message_content_number", '{"model":"m","max_tokens":16,"messages":[{"role":"user","content":5}]}'),
    ("block_bad_type", '{"model":"m","max_tokens":16,"messages":[{"role":"user","content":[{"type":"document","text":"x"}]}]}'),
    ("block_no_type", '{"model":"m","max_tokens":16,"messages":[{"role":"user","content":[{"text":"x"}]}]}'),
    ("block_not_object", '{"model":"m","max_tokens":16,"messages":[{"role":"user","content":["x"]}]}'),
    ("block_text_number", '{"model":"m","max_tokens":16,"messages":[{"role":"user","content":[{"type":"text","text":1}]}]}'),
    ("tool_result_content_number", '{"model":"m","max_tokens":16,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":3}]}]}'),
    ("system_number", '{"model":"m","max_tokens":16,' + U + ',"system":7}'),
    ("tool_choice_tool_without_name", '{"model":"m","max_tokens":16,' + U + ',"tool_choice":{"type":"tool"}}'),
    ("tool_choice_bad_type", '{"model":"m","max_tokens":16,' + U + ',"tool_choice":{"type":"required"}}'),
    ("tool_without_schema", '{"model":"m","max_tokens":16,' + U + ',"tools":[{"name":"f"}]}'),
    ("tool_schema_not_dict", '{"model":"m","max_tokens":16,' + U + ',"tools":[{"name":"f","input_schema":[]}]}'),
    ("stop_sequences_not_strings", '{"model":"m","max_tokens":16,' + U + ',"stop_sequences":["a",1]}'),
    ("sampling_types", '{"model":"m","max_tokens":16,' + U + ',"temperature":"hot","top_k":1.5,"top_p":"x","stream":"maybe"}'),
    ("output_config_bad_effort", '{"model":"m","max_tokens":16,' + U + ',"output_config":{"effort":"extreme"}}'),
    ("vllm_xargs_not_dict", '{"model":"m","max_tokens":16,' + U + ',"vllm_xargs":[1]}'),
    ("metadata_not_dict", '{"model":"m","max_tokens":16,' + U + ',"metadata":"x"}'),
]

# Issue 29: every member of AnthropicMessagesRequest given each badly typed
# value, and the nested models' members one by one.
BASE = {"model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": "Hi"}]}
BAD_VALUES = [5, 1.5, "x", True, None, [], [1], {}, {"a": 1}, "", -1, 0, "16"]
MEMBERS = ["model", "max_tokens", "messages", "metadata", "output_config", "stop_sequences", "stream", "system",
           "temperature", "tool_choice", "tools", "top_k", "top_p", "kv_transfer_params", "chat_template_kwargs",
           "vllm_xargs"]
for m in MEMBERS:
    for i, v in enumerate(BAD_VALUES):
        cases.append((f"member_{m}_{i}", json.dumps({**BASE, m: v})))
NESTED = [
    {"messages": [{"role": "bogus", "content": "x"}]},
    {"messages": [{"role": "user", "content": [5]}]},
    {"messages": [{"role": "user", "content": [{"type": "bogus"}]}]},
    {"messages": [{"role": "user", "content": [{"type": "image", "source": "x"}]}]},
    {"messages": [{"role": "user", "content": [{"type": "tool_use", "id": 1, "name": [], "input": "x"}]}]},
    {"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": 5, "is_error": "maybe"}]}]},
    {"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": [5, "x"]}]}]},
    {"messages": [{"role": "user", "content": [{"type": "thinking", "thinking": 1, "signature": 2},
                                               {"type": "redacted_thinking", "data": 3}]}]},
    {"messages": [{"role": "user", "content": [{"type": "tool_reference", "tool_name": 4}]}]},
    {"tools": [{"name": 5, "input_schema": {}, "description": 1, "strict": "maybe", "defer_loading": []}]},
    {"tools": [5]},
    {"tool_choice": {"type": "bogus", "name": 5}},
    {"tool_choice": {"name": "f"}},
    {"output_config": {"effort": "huge", "format": {"type": "text", "schema": []}}},
    {"output_config": {"format": 5}},
    {"system": [{"type": "text", "text": 1}]},
    {"system": [5]},
    {"stop_sequences": ["a", 1, None]},
    {"metadata": {"user_id": 5}},
    {"max_tokens": -5}, {"max_tokens": 1.0}, {"max_tokens": "7"},
]
for i, n in enumerate(NESTED):
    cases.append((f"nested_{i}", json.dumps({**BASE, **n})))

# Issue 30: the members the one-pass decoder reads from the body's trees —
# nulls where a Literal or a union is required, mapped roles beside other
# errors, repeated keys and whitespace inside blocks, schemas and lists.
M = '{"model":"m","max_tokens":16,'
EDGES = [
    M + '"messages":[{"role":"user","content":[{"type":null}]}]}',
    M + '"messages":[{"role":null,"content":"x"}]}',
    M + '"messages":[{"role":"ctx"}]}',
    M + '"messages":[{"role":"msg","content":[{"type":"text","text":"a"},{"type":null,"text":2}]}]}',
    M + '"messages":[{"role":"user","content":[ {"type":"text","text":"a"} , 7 , {"type":"image","source":[] } ]}]}',
    M + '"messages":[{"role":"user","content":[{"type":"tool_result","content":null,"is_error":null},'
    '{"type":"tool_result","content":[{"type":"text"}, [1] , null]}]}]}',
    M + '"messages":[{"role":"user","content":"a","role":"bogus"}]}',
    M + '"messages":[{"role":"user","content":[{"type":"bogus","type":"text","input":{"a":1,"a":[]},"source":{ }}]}]}',
    M + U + ',"tool_choice":{"type":null}}',
    M + U + ',"tool_choice":{"type":"tool","name":""}}',
    M + U + ',"tool_choice":{"type":"tool","name":null,"type":"auto"}}',
    M + U + ',"tools":[{"name":"f","input_schema":{"type":null}},{"name":"g","input_schema":{ "a" : 1 , "a" : 2 }},{"name":"h","input_schema":null}]}',
    M + U + ',"output_config":{"format":{"type":null,"schema":null}}}',
    M + U + ',"output_config":{"effort":null,"format":{}}}',
    M + U + ',"system":[{"type":null,"text":"s"},{"type":"text","text":"t"}]}',
    M + U + ',"system":[]}',
    M + U + ',"stop_sequences":null,"stream":null,"temperature":null,"top_k":null,"top_p":null,"tools":null,"tool_choice":null}',
    '{"model":"m","max_tokens":16,"messages":[{"role":"user","content":"a"}],"max_tokens":0}',
]
for i, b in enumerate(EDGES):
    cases.append((f"edge_{i}", b))

if __name__ == "__main__":
    for n, b in cases:
        print(json.dumps({"name": n, "body": b, "result": run(b)}, ensure_ascii=False))
