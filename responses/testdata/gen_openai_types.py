#!/usr/bin/env python3
"""Writes ../openai_types.json: the pydantic-core schemas of the OpenAI types
vLLM's ResponsesRequest declares members with (Reasoning, ResponseTextConfig,
ToolChoice, Tool, the input item union ResponseInputItemParam |
ResponseOutputItem), reduced to what validation reads, for
responses/openaischema.go to validate request members with.

Source: openai-python's src/openai/types at commit e43b4224 (version 3.3.1),
imported with its three runtime helpers replaced (BaseModel: extra="allow" as
openai's own; PropertyInfo: inert metadata, which pydantic ignores;
SequenceNotStr: Sequence, as openai's _types.py defines it at runtime).
Needs pydantic 2.x. Run: ./openai_shim.sh <openai-python git dir> e43b4224 <shim>, then
PYTHONPATH=<shim>/src python3 gen_openai_types.py > ../openai_types.json
"""
import json
import sys
from typing import Union

from pydantic import TypeAdapter

from openai.types.responses import (ResponseInputItemParam, ResponseOutputItem, ResponseOutputMessage,
                                   ResponseTextConfig)
from openai.types.responses.response import ToolChoice
from openai.types.responses.tool import Tool
from openai.types.shared import Reasoning
from openai.types.shared.metadata import Metadata

ROOTS = {
    "Reasoning": Reasoning,
    "ResponseTextConfig": ResponseTextConfig,
    "ToolChoice": ToolChoice,
    "Tool": Tool,
    "InputItem": Union[ResponseInputItemParam, ResponseOutputItem],
    "Metadata": Metadata,
    # input_item_parsing validates an assistant message against it first.
    "ResponseOutputMessage": ResponseOutputMessage,
}

defs = {}


def stable(ref):
    # pydantic's refs end in ":<id(cls)>", which changes per run.
    return ref.rsplit(":", 1)[0]


def conv(s):
    t = s["type"]
    if t == "definitions":
        for d in s["definitions"]:
            defs[stable(d["ref"])] = None
        for d in s["definitions"]:
            conv(d)  # a model or typed dict with a ref records itself
        return conv(s["schema"])
    if t == "definition-ref":
        return {"k": "ref", "ref": stable(s["schema_ref"])}
    if t == "model":
        if s.get("root_model"):
            raise SystemExit("root model")
        inner = s["schema"]
        assert inner["type"] == "model-fields", inner["type"]
        return class_node(s, fields(inner["fields"], "model"))
    if t == "typed-dict":
        assert s.get("extra_behavior", "ignore") == "ignore"
        return class_node(s, fields(s["fields"], "typed-dict"))
    if t == "union":
        assert s.get("mode", "smart") == "smart" and not s.get("custom_error_type"), s
        out = []
        for c in s["choices"]:
            if isinstance(c, tuple):
                c, label = c
                out.append({"label": label, "s": conv(c)})
            else:
                out.append({"label": label_of(c), "s": conv(c)})
        return {"k": "union", "choices": out}
    if t == "literal":
        for v in s["expected"]:
            assert isinstance(v, str), s
        return {"k": "literal", "values": list(s["expected"])}
    if t in ("str", "int", "float", "bool", "any"):
        extra = set(s) - {"type", "metadata", "serialization"}
        assert not extra, s
        return {"k": t}
    if t == "nullable":
        return {"k": "nullable", "s": conv(s["schema"])}
    if t == "default":
        return conv(s["schema"])
    if t == "list":
        return {"k": "list", "items": conv(s.get("items_schema", {"type": "any"}))}
    if t == "dict":
        return {"k": "dict", "keys": conv(s.get("keys_schema", {"type": "any"})),
                "values": conv(s.get("values_schema", {"type": "any"}))}
    if t == "generator":
        return {"k": "iterable"}
    if t == "json-or-python":
        # Sequence[X]: python_schema is chain(is-instance Sequence, sequence_validator over list[X]).
        py = s["python_schema"]
        assert py["type"] == "chain", py
        fw = py["steps"][1]
        assert fw["type"] == "function-wrap" and "sequence_validator" in repr(fw["function"]), fw
        return {"k": "sequence", "items": conv(fw["schema"])["items"]}
    raise SystemExit("unhandled schema type " + t)


def class_node(s, fs):
    node = {"k": s["type"], "name": s["cls"].__name__, "fields": fs}
    if "ref" in s:
        defs[stable(s["ref"])] = node
        return {"k": "ref", "ref": stable(s["ref"])}
    return node


def label_of(c):
    # pydantic-core's union choice label: the class name for models and
    # typed dicts; every other label (literal[...], str, list[...]) is an
    # internal location segment that vLLM's handler drops.
    t = c["type"]
    if t in ("model", "typed-dict"):
        return c["cls"].__name__
    if t == "definition-ref":
        return "@" + stable(c["schema_ref"])
    return ""


def fields(fs, kind):
    out = []
    for name, f in fs.items():
        s = f["schema"]
        if kind == "model":
            required = s["type"] != "default"
            alias = f.get("validation_alias") or name
        else:
            required = f.get("required", True)
            alias = name
        assert isinstance(alias, str), f
        out.append({"name": alias, "required": required, "s": conv(s)})
    return out


roots = {name: conv(TypeAdapter(t).core_schema) for name, t in ROOTS.items()}


def resolve_labels(n):
    if isinstance(n, dict):
        if n.get("k") == "union":
            for c in n["choices"]:
                if c["label"].startswith("@"):
                    d = defs[c["label"][1:]]
                    c["label"] = d["name"] if d["k"] in ("model", "typed-dict") else ""
        for v in n.values():
            resolve_labels(v)
    elif isinstance(n, list):
        for v in n:
            resolve_labels(v)


resolve_labels(roots)
resolve_labels(defs)
json.dump({"source": "openai-python e43b4224 (3.3.1)", "defs": defs, "roots": roots}, sys.stdout,
          sort_keys=True, separators=(",", ":"))
sys.stdout.write("\n")
