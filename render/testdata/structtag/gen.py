#!/usr/bin/env python3
"""Regenerates golden.json: vLLM's structural tags for tool calling.

Runs the real pure-Python builders: vllm/tool_parsers/structural_tag_registry.py
(vLLM at bf578e1: hermes, minimax and the dispatch to xgrammar) and
xgrammar v0.2.3's python/xgrammar/{structural_tag,openai_tool_call_schema,
builtin_structural_tag}.py (the version vLLM's requirements/test/*.txt pin),
with the real pydantic. Only the modules these files import but never use
for chat-completions tools are stubbed: xgrammar's compiled bindings (the
package __init__ is bypassed), the openai Responses types, and vLLM's
protocol models (re-declared with the same fields and serializers).

  python3 gen.py XGRAMMAR_CHECKOUT VLLM_CHECKOUT > golden.json

where each checkout is a directory holding the repository's tree, e.g.
  git --git-dir=$(fetch mlc-ai/xgrammar) archive v0.2.3 python | tar -x -C X
  git --git-dir=$(fetch mlow/vllm) archive bf578e1 vllm/tool_parsers | tar -x -C V
Each case is what _apply_structural_tag puts in structured_outputs:
json.dumps(tag.model_dump()) with reasoning=False.
"""
import importlib.util
import json
import sys
import types
from typing import Any, Literal

from pydantic import BaseModel

xg_root, vllm_root = sys.argv[1], sys.argv[2]

# xgrammar without its compiled bindings: a bare package whose submodules
# load from the checkout.
xg = types.ModuleType("xgrammar")
xg.__path__ = [xg_root + "/python/xgrammar"]
sys.modules["xgrammar"] = xg
import xgrammar.structural_tag  # noqa: E402
import xgrammar.openai_tool_call_schema  # noqa: E402
import xgrammar.builtin_structural_tag as bst  # noqa: E402

xg.StructuralTag = xgrammar.structural_tag.StructuralTag
xg.normalize_tool_choice = bst.normalize_tool_choice
xg.get_model_structural_tag = bst.get_model_structural_tag


def stub(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


class _Unused:  # Responses API types: never instances for chat requests.
    pass


for n in ["openai", "openai.types", "openai.types.responses", "openai.types.responses.response",
          "openai.types.responses.tool", "openai.types.responses.tool_choice_allowed",
          "openai.types.responses.tool_choice_function"]:
    stub(n)
sys.modules["openai.types.responses"].FunctionTool = type("FunctionTool", (_Unused,), {})
sys.modules["openai.types.responses.response"].ToolChoice = Any
sys.modules["openai.types.responses.tool"].Tool = Any
sys.modules["openai.types.responses.tool_choice_allowed"].ToolChoiceAllowed = type("ToolChoiceAllowed", (_Unused,), {})
sys.modules["openai.types.responses.tool_choice_function"].ToolChoiceFunction = type("ToolChoiceFunction", (_Unused,), {})


# vLLM's protocol models (vllm/entrypoints/openai/{engine,chat_completion}/
# protocol.py): the fields _dump_tool_for_xgrammar dumps with exclude_none.
class FunctionDefinition(BaseModel):
    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None
    defer_loading: bool | None = None


class ChatCompletionToolsParam(BaseModel):
    type: Literal["function"] = "function"
    function: FunctionDefinition


class ChatCompletionNamedFunction(BaseModel):
    name: str


class ChatCompletionNamedToolChoiceParam(BaseModel):
    function: ChatCompletionNamedFunction
    type: Literal["function"] = "function"


for n in ["vllm", "vllm.entrypoints", "vllm.entrypoints.openai", "vllm.entrypoints.openai.chat_completion"]:
    stub(n)
stub("vllm.entrypoints.openai.chat_completion.protocol",
     ChatCompletionToolsParam=ChatCompletionToolsParam,
     ChatCompletionNamedToolChoiceParam=ChatCompletionNamedToolChoiceParam)

spec = importlib.util.spec_from_file_location(
    "structural_tag_registry", vllm_root + "/vllm/tool_parsers/structural_tag_registry.py")
reg = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reg)

# The tool parsers' structural_tag_model keys (vllm/tool_parsers/*.py).
MODELS = ["hermes", "llama", "kimi", "deepseek_r1", "deepseek_v3_1", "deepseek_v3_2",
          "deepseek_v4", "glm_4_7", "qwen_3_coder", "minimax"]


def tool(name, params=None, strict=None, description=None):
    f = {"name": name}
    if description is not None:
        f["description"] = description
    if params is not None:
        f["parameters"] = params
    if strict is not None:
        f["strict"] = strict
    return {"type": "function", "function": f}


WEATHER = {"type": "object", "properties": {"city": {"type": "string", "description": "Città <b> & \"q\""},
                                            "unit": {"type": "string", "enum": ["c", "f"]}},
           "required": ["city"]}
NESTED = {"type": "object", "$defs": {"Loc": {"type": "object", "properties": {"lat": {"type": "number", "minimum": -90.0},
                                                                               "lon": {"type": "number", "maximum": 1e2}}}},
          "properties": {"where": {"$ref": "#/$defs/Loc"},
                         "tags": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "integer"}}}}},
          "required": ["where"], "additionalProperties": False}
TOOLSETS = {
    "one": [tool("get_weather", WEATHER, strict=True, description="Weather")],
    "several": [tool("get_weather", WEATHER, strict=True), tool("get_time", {"type": "object", "properties": {"tz": {"type": "string"}}}),
                tool("search", {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})],
    "mixed": [tool("locate", NESTED, strict=True), tool("loose", WEATHER, strict=False), tool("ping"),
              tool("empty", {})],
    # no strict tool: auto is left unconstrained (no structural tag)
    "unstrict": [tool("get_time", {"type": "object", "properties": {"tz": {"type": "string"}}}), tool("ping")],
}
CHOICES = {
    "auto": "auto",
    "required": "required",
    "named": None,  # the last tool of the set, by name
}

cases = []
for model in MODELS:
    for set_name, tools in TOOLSETS.items():
        for choice_name, choice in CHOICES.items():
            if choice_name == "named":
                choice = {"type": "function", "function": {"name": tools[-1]["function"]["name"]}}
            params = [ChatCompletionToolsParam.model_validate(t) for t in tools]
            tc = ChatCompletionNamedToolChoiceParam.model_validate(choice) if isinstance(choice, dict) else choice
            tag = reg.get_model_structural_tag(model=model, tools=params, tool_choice=tc, reasoning=False)
            cases.append({"model": model, "tools": set_name, "tool_choice": choice,
                          "structural_tag": None if tag is None else json.dumps(tag.model_dump())})
json.dump({"tools": TOOLSETS, "cases": cases}, sys.stdout, indent=1, ensure_ascii=False)
sys.stdout.write("\n")
