#!/usr/bin/env python3
"""Reference chat-template renderer for vrender's parity tests.

Renders Jinja templates with Jinja2 configured exactly as transformers'
chat_template_utils._compile_jinja_template configures it:
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
extensions=[AssistantTracker, loopcontrols]), a tojson filter that is
json.dumps(x, ensure_ascii=False, indent=None, separators=None,
sort_keys=False), and the globals raise_exception and strftime_now.

Protocol: one JSON object per stdin line,
  {"template": str, "context": {...}, "now": "YYYY-MM-DDTHH:MM:SS"}
and one JSON object per stdout line,
  {"ok": true, "output": str}
  {"ok": false, "error_type": str, "message": str}
The context keeps its key order (json.loads builds insertion-ordered
dicts) and is passed as the template's render keyword arguments.
"""

import functools
import json
import sys
from datetime import datetime

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment


class GenerationTag(jinja2.ext.Extension):
    """transformers' AssistantTracker as far as rendering goes: the body of
    {% generation %}...{% endgeneration %} is rendered through a CallBlock
    and emitted unchanged."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(
            self.call_method("_generation_support"), [], [], body
        ).set_lineno(lineno)

    @jinja2.pass_eval_context
    def _generation_support(self, context, caller):
        return caller()


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(
        x,
        ensure_ascii=ensure_ascii,
        indent=indent,
        separators=separators,
        sort_keys=sort_keys,
    )


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


class Clock:
    """Holds the fixed time strftime_now reads for the current request."""

    now = datetime(2025, 1, 1)


def strftime_now(fmt):
    return Clock.now.strftime(fmt)


@functools.lru_cache(maxsize=64)
def compile_template(source):
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[GenerationTag, jinja2.ext.loopcontrols],
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(source)


def render(req):
    now = req.get("now")
    Clock.now = datetime.fromisoformat(now) if now else datetime(2025, 1, 1)
    try:
        template = compile_template(req["template"])
        context = req.get("context") or {}
        return {"ok": True, "output": template.render(**context)}
    except Exception as e:  # every failure is reported, the loop goes on
        if isinstance(e, jinja2.exceptions.TemplateSyntaxError):
            message = e.message
        else:
            message = str(e)
        return {"ok": False, "error_type": type(e).__name__, "message": message}


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
        except json.JSONDecodeError as e:
            resp = {"ok": False, "error_type": "ProtocolError", "message": str(e)}
        else:
            resp = render(req)
        sys.stdout.write(json.dumps(resp, ensure_ascii=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
