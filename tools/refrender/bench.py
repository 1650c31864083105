#!/usr/bin/env python3
"""Times the reference chat renderer for `vrender bench render`.

vrender's render target is a ratio against the Python reference measured in
the same run; this program produces the template half of the reference's
time (tools/reftok/bench.js times the tokenizer half on the prompts printed
here). For each request file it renders the request once untimed (compiling
the template, as a server does once per template), W more warm-up renders,
then N timed renders (more until they add up to --min-time seconds) with
time.perf_counter_ns. Only chat.render_chat is timed — vLLM's message
handling and transformers' Jinja2 render — so JSON and pipe transport stay
out of the reference's figure. Each render gets a
freshly decoded request, as a server would, because render_chat rewrites
tool-call arguments in place.

Usage:
  python3 bench.py [--iterations N] [--warmup W] [--min-time SECONDS] FILE...
where each FILE holds one chat.py request object:
  {"template": str, "request": {...}, "special_tokens": {...},
   "content_format": "auto", "now": "YYYY-MM-DDTHH:MM:SS"}
Output (stdout, one JSON object):
  {"first_render_ns": ..., "python": "3.x.y", "jinja2": "3.1.6",
   "requests": [{"file": ..., "prompt": str, "content_format": ...,
     "render": {"iterations": N, "min_ns": ..., "median_ns": ...}}]}
"""

import argparse
import json
import os
import statistics
import sys
import time
from datetime import datetime

import jinja2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chat  # noqa: E402  vLLM's message handling + transformers' render
import render as ref  # noqa: E402  the Jinja2 environment chat.py uses


MAX_ITERATIONS = 100_000


def time_renders(req, raw_body, warmup, iterations, min_ns):
    """Renders req warmup times untimed, then at least iterations times
    timed, going on until the timed renders add up to min_ns."""
    for _ in range(warmup):
        req["request"] = json.loads(raw_body)
        chat.render_chat(req)
    ns, total = [], 0
    while len(ns) < MAX_ITERATIONS and (len(ns) < iterations or total < min_ns):
        req["request"] = json.loads(raw_body)
        start = time.perf_counter_ns()
        chat.render_chat(req)
        elapsed = time.perf_counter_ns() - start
        ns.append(elapsed)
        total += elapsed
    return {"iterations": len(ns), "min_ns": min(ns), "median_ns": statistics.median(ns)}


def bench_file(path, warmup, iterations, min_ns):
    with open(path, encoding="utf-8") as f:
        req = json.load(f)
    now = req.get("now")
    ref.Clock.now = datetime.fromisoformat(now) if now else datetime(2025, 1, 1)
    raw_body = json.dumps(req["request"])
    start = time.perf_counter_ns()
    prompt, fmt = chat.render_chat(req)
    first_ns = time.perf_counter_ns() - start
    timing = time_renders(req, raw_body, warmup, iterations, min_ns)
    return first_ns, {"file": path, "prompt": prompt, "content_format": fmt, "render": timing}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=0.0,
                    help="seconds the timed renders of a request must add up to at least")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    if args.iterations < 1 or args.warmup < 0:
        ap.error("--iterations must be >= 1 and --warmup >= 0")
    first_render_ns, results = 0, []
    for path in args.files:
        first_ns, result = bench_file(path, args.warmup, args.iterations, int(args.min_time * 1e9))
        if not results:
            first_render_ns = first_ns  # includes compiling the template
        results.append(result)
    json.dump({"first_render_ns": first_render_ns, "python": sys.version.split()[0],
               "jinja2": jinja2.__version__, "requests": results}, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
