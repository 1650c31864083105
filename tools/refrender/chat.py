#!/usr/bin/env python3
"""Reference chat renderer for vrender's render parity test.

Applies vLLM's text-only message handling (vllm/entrypoints/chat_utils.py
parse_chat_messages and _postprocess_messages, the content-format detection
of vllm/renderers/hf.py on the real Jinja2 AST, the chat-template kwargs of
build_chat_params) and then transformers' render_jinja_template call
(special tokens, tools and documents passed explicitly, continue_final_message
cutting), on the Jinja2 environment of render.py (imported, not changed).

Protocol: one JSON object per stdin line,
  {"template": str, "request": {...chat request fields...},
   "special_tokens": {"bos_token": ..., ...}, "content_format": "auto",
   "default_kwargs": {...}, "exclude_tools_when_tool_choice_none": false,
   "now": "YYYY-MM-DDTHH:MM:SS"}
and one JSON object per stdout line,
  {"ok": true, "prompt": str, "content_format": "string"|"openai"}
  {"ok": false, "error_type": str, "message": str}
"""

import copy
import functools
import json
import os
import sys
from collections import deque
from datetime import datetime

import jinja2.nodes

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import render as ref  # noqa: E402  the jinja engineer's environment

TEXT_KEYS = {"text": "text", "input_text": "text", "output_text": "text",
             "refusal": "refusal", "thinking": "thinking"}
MEDIA = {"image_url", "input_image", "image_embeds", "audio_embeds", "prompt_embeds",
         "image_pil", "audio_url", "input_audio", "video_url"}
CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "
APPLY_PARAMS = {"conversation", "tools", "documents", "chat_template", "add_generation_prompt",
                "continue_final_message", "tokenize", "padding", "truncation", "max_length",
                "return_tensors", "return_dict", "return_assistant_tokens_mask", "tokenizer_kwargs"}


class BadRequest(ValueError):
    pass


# ---- content format detection: vllm/renderers/hf.py, on the Jinja2 AST ----

def _is_var_access(node, varname):
    return isinstance(node, jinja2.nodes.Name) and node.ctx == "load" and node.name == varname


def _is_attr_access(node, varname, key):
    if isinstance(node, jinja2.nodes.Getitem):
        return (_is_var_access(node.node, varname) and isinstance(node.arg, jinja2.nodes.Const)
                and node.arg.value == key)
    if isinstance(node, jinja2.nodes.Getattr):
        return _is_var_access(node.node, varname) and node.attr == key
    return False


def _is_var_or_elems_access(node, varname, key=None):
    if isinstance(node, jinja2.nodes.Filter):
        return node.node is not None and _is_var_or_elems_access(node.node, varname, key)
    if isinstance(node, jinja2.nodes.Test):
        return _is_var_or_elems_access(node.node, varname, key)
    if isinstance(node, jinja2.nodes.Getitem) and isinstance(node.arg, jinja2.nodes.Slice):
        return _is_var_or_elems_access(node.node, varname, key)
    return _is_attr_access(node, varname, key) if key else _is_var_access(node, varname)


def _messages_vars(root):
    yield "messages"
    related = deque(["messages"])
    while related:
        name = related.popleft()
        for assign in root.find_all(jinja2.nodes.Assign):
            if _is_var_or_elems_access(assign.node, name):
                assert isinstance(assign.target, jinja2.nodes.Name)
                yield assign.target.name
                if assign.target.name != name:
                    related.append(assign.target.name)


def _loop_targets(root, varnames, key=None):
    for loop in root.find_all(jinja2.nodes.For):
        for v in varnames:
            if _is_var_or_elems_access(loop.iter, v, key):
                assert isinstance(loop.target, jinja2.nodes.Name)
                yield loop.target.name
                break


def _content_loops(root, message_vars):
    # vllm/renderers/hf.py _iter_nodes_assign_content_item at bf578e1: a loop
    # over a message's content, or over a variable named "content" (as in
    # Qwen3-VL/Qwen3.5's render_content(content) macro).
    for loop in root.find_all(jinja2.nodes.For):
        for v in message_vars:
            if _is_var_or_elems_access(loop.iter, v, "content"):
                assert isinstance(loop.target, jinja2.nodes.Name)
                yield loop.target.name
                break
        if isinstance(loop.iter, jinja2.nodes.Name) and loop.iter.name == "content":
            assert isinstance(loop.target, jinja2.nodes.Name)
            yield loop.target.name


@functools.lru_cache(maxsize=64)  # vLLM caches it the same way
def detect_content_format(source):
    try:
        ast = ref.compile_template(source).environment.parse(source)
    except Exception:
        return "string"
    try:
        message_vars = list(_loop_targets(ast, list(_messages_vars(ast))))
        next(_content_loops(ast, message_vars))
    except StopIteration:
        return "string"
    except Exception:
        return "string"
    return "openai"


# ---- message normalisation: vllm/entrypoints/chat_utils.py ----

def parse_part(part):
    if isinstance(part, str):
        return ("text", part)
    typ = part.get("type")
    if isinstance(typ, str) and part.get("uuid") is None:
        if typ in TEXT_KEYS:
            v = part.get(TEXT_KEYS[typ])
            return None if v is None else ("text", v)
        if typ in MEDIA:
            raise BadRequest("multimodal input is not supported")
        if typ == "tool_reference":
            return ("tool_reference", part.get("name"))
        raise BadRequest("Unsupported chat content part type")
    raise BadRequest("bad part")


def parse_message(msg, fmt):
    role = msg["role"]
    content = msg.get("content")
    if content is None:
        content = []
    elif isinstance(content, str):
        content = [{"type": "text", "text": content}]
    parts = [p for p in (parse_part(p) for p in content) if p is not None]
    if fmt == "openai":
        out_content = [{"type": "text", "text": v} if t == "text" else {"type": t, "name": v}
                       for t, v in parts]
    else:
        out_content = "\n".join(v for _, v in parts)
    out = {"role": role, "content": out_content}
    if role == "assistant":
        if msg.get("tool_calls") is not None:
            out["tool_calls"] = list(msg["tool_calls"])
        reasoning = msg.get("reasoning")
        if reasoning is None:
            reasoning = msg.get("reasoning_content")
        if reasoning is not None:
            out["reasoning"] = reasoning
            out["reasoning_content"] = reasoning
    elif role == "tool":
        if "tool_call_id" in msg:
            out["tool_call_id"] = msg["tool_call_id"]
        if isinstance(out["content"], list):
            if not any(isinstance(i, dict) and i.get("type") != "text" for i in out["content"]):
                texts = [i.get("text", "") for i in out["content"]]
                out["content"] = "\n".join(texts) if texts else ""
    if isinstance(msg.get("name"), str):
        out["name"] = msg["name"]
    if isinstance(msg.get("task"), str):
        out["task"] = msg["task"]
    if role == "developer":
        out["tools"] = msg.get("tools")
    return out


def postprocess(messages):
    for m in messages:
        if m["role"] != "assistant" or "tool_calls" not in m:
            continue
        tcs = m["tool_calls"]
        if not isinstance(tcs, list):
            continue
        if not tcs:
            m.pop("tool_calls")
            continue
        for item in tcs:
            fn = item.get("function")
            if content := fn.get("arguments"):
                if not isinstance(content, (dict, list)):
                    parsed = json.loads(content)
                    fn["arguments"] = parsed if parsed is not None else {}
            else:
                fn["arguments"] = {}


def merge_developer(messages):
    """vllm-project/vllm#43590 for templates without 'developer': developer
    messages become system ones (their tools dropped) and all string system
    messages merge into one leading system message."""
    if not any(m["role"] == "developer" for m in messages):
        return messages
    for m in messages:
        if m["role"] == "developer":
            m["role"] = "system"
            m.pop("tools", None)
    first, texts, rest = None, [], []
    for m in messages:
        if m["role"] != "system" or not isinstance(m["content"], str):
            rest.append(m)
            continue
        texts.append(m["content"])
        if first is None:
            first = m
    if first is None:
        return messages
    first["content"] = "\n\n".join(texts)
    return [first] + rest


def dump_tool(tool):
    fn = tool["function"]
    dfn = {"name": fn["name"], "description": fn.get("description"), "parameters": fn.get("parameters")}
    dfn.update({k: v for k, v in fn.items() if k not in dfn})
    out = {"type": tool.get("type", "function"), "function": dfn}
    out.update({k: v for k, v in tool.items() if k not in out})
    return out


# ---- transformers' render_jinja_template ----

def render_chat(req):
    source = req["template"]
    body = req["request"]
    if body.get("continue_final_message") and body.get("add_generation_prompt"):
        raise BadRequest("Cannot set both `continue_final_message` and `add_generation_prompt` to True.")
    fmt = req.get("content_format") or "auto"
    if fmt == "auto":
        fmt = detect_content_format(source)
    uses_dev = "'developer'" in source or '"developer"' in source
    conversation = [parse_message(m, fmt) for m in body.get("messages", [])]
    postprocess(conversation)
    if not uses_dev:
        conversation = merge_developer(conversation)

    tools = body.get("tools")
    if tools is not None:
        if req.get("exclude_tools_when_tool_choice_none") and body.get("tool_choice") == "none":
            tools = None
        else:
            tools = [dump_tool(t) for t in tools]

    kwargs = dict(req.get("default_kwargs") or {})
    ctk = body.get("chat_template_kwargs") or {}
    kwargs.update(ctk)
    effort = body.get("reasoning_effort")
    if effort is not None:
        kwargs["reasoning_effort"] = effort
        if "enable_thinking" not in ctk:
            kwargs["enable_thinking"] = effort != "none"
    kwargs = {k: v for k, v in kwargs.items() if k not in APPLY_PARAMS}
    documents = body.get("documents")
    if documents is not None:
        for d in documents:
            if not isinstance(d, dict):
                raise TypeError("Documents should be a list of dicts with 'title' and 'text' keys!")

    template = ref.compile_template(source)
    chat = conversation
    final_message = None
    if body.get("continue_final_message"):
        chat = copy.deepcopy(chat)
        final_message = chat[-1].get("content")
        if final_message is None:
            raise ValueError('continue_final_message is set but the final message has no "content" to continue!')
        if "content" not in source:
            raise ValueError('continue_final_message is set to "content" but this is not an accepted field in the chat_template')
        if isinstance(final_message, (list, tuple)):
            for block in reversed(final_message):
                if "text" in block:
                    final_message = block["text"]
                    block["text"] = block["text"] + CONTINUE_TAG
                    break
            else:
                raise ValueError("continue_final_message is set but we could not find any text to continue in the final message!")
        else:
            chat[-1]["content"] = chat[-1]["content"] + CONTINUE_TAG
    template_kwargs = {**req.get("special_tokens", {}), **kwargs}
    rendered = template.render(messages=chat, tools=tools, documents=documents,
                               add_generation_prompt=bool(body.get("add_generation_prompt")),
                               **template_kwargs)
    if body.get("continue_final_message"):
        if final_message.strip() not in rendered or CONTINUE_TAG.strip() not in rendered:
            raise ValueError(
                "continue_final_message is set but the final message does not appear in the chat after "
                "applying the chat template! This can happen if the chat template deletes portions of "
                "the final message. Please verify the chat template and final message in your chat to "
                "ensure they are compatible."
                f"Final message to continue: {final_message.strip()}\nRendered chat:\n{rendered}")
        loc = rendered.rindex(CONTINUE_TAG.strip())
        if rendered[loc:loc + len(CONTINUE_TAG)] == CONTINUE_TAG:
            rendered = rendered[:loc]
        else:
            rendered = rendered[:loc].rstrip()
    return rendered, fmt


def handle(req):
    now = req.get("now")
    ref.Clock.now = datetime.fromisoformat(now) if now else datetime(2025, 1, 1)
    try:
        prompt, fmt = render_chat(req)
        return {"ok": True, "prompt": prompt, "content_format": fmt}
    except Exception as e:  # every failure is reported, the loop goes on
        message = e.message if isinstance(e, jinja2.exceptions.TemplateSyntaxError) else str(e)
        return {"ok": False, "error_type": type(e).__name__, "message": message}


def main():
    for line in sys.stdin:
        if line.strip():
            resp = handle(json.loads(line))
            sys.stdout.write(json.dumps(resp, ensure_ascii=False) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
