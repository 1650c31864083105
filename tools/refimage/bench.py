#!/usr/bin/env python3
"""Times the Python reference of one image's processing for `vrender bench images`.

The reference is the Qwen2-VL processor's PIL path as vLLM's render server
runs it per image, one thread: vLLM's load (Image.open, exif_transpose,
load, convert to RGB), smart_resize with Python's rounding, Pillow's
BICUBIC resize, rescale and normalize in numpy (float64 rescale cast to
float32, then (x - mean) / std in float32), the temporal repeat and patch
flatten of HF's Qwen2VLImageProcessor, and the cast to bfloat16 (round to
nearest even). It is a floor under vLLM's own cost: vLLM adds hashing,
msgpack and its own Python around it.

Each file is processed once untimed, W more times as warm-up, then N times
(more until they add up to --min-time seconds of CPU) timed with
time.process_time_ns: the CPU this process used, as the server's figure is
its CPU. Run it on one core (taskset -c 0) with OMP_NUM_THREADS=1.

Usage:
  /usr/bin/python3 bench.py --config preprocessor_config.json [--iterations N]
      [--warmup W] [--min-time SECONDS] FILE...
Output (stdout, one JSON object):
  {"python": "3.x.y", "pillow": "9.4.0", "numpy": "1.24.2",
   "images": [{"file": ..., "size_wh": [w, h], "resized_hw": [h, w],
     "grid_thw": [t, h, w], "process": {"iterations": N, "min_ns": ..., "median_ns": ...},
     "bf16_sha256": sha256 of the bf16 pixel_values, little-endian (the goldens' sha256_bf16le)}]}
"""

import argparse
import hashlib
import json
import math
import os
import platform
import statistics
import sys
import time

import numpy as np
import PIL
from PIL import Image

# vLLM's image load (ImageMediaIO.load_bytes, image mode RGB) as imaging's
# tests run it against Pillow: one copy of those rules in the repository.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "imaging", "testdata"))
from pillow_load import load as load_vllm  # noqa: E402

MAX_ITERATIONS = 100_000


def smart_resize(height, width, factor, min_pixels, max_pixels):
    """HF's qwen2_vl smart_resize (Python round: half to even)."""
    if max(height, width) / min(height, width) > 200:
        raise ValueError("absolute aspect ratio must be smaller than 200")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


class Processor:
    def __init__(self, cfg):
        self.patch = cfg["patch_size"]
        self.merge = cfg["merge_size"]
        self.temporal = cfg["temporal_patch_size"]
        self.min_pixels = cfg["min_pixels"]
        self.max_pixels = cfg["max_pixels"]
        self.mean = np.array(cfg["image_mean"], dtype=np.float32)
        self.std = np.array(cfg["image_std"], dtype=np.float32)

    def plan(self, w, h):
        return smart_resize(h, w, self.patch * self.merge, self.min_pixels, self.max_pixels)

    def process(self, data):
        im, _ = load_vllm(data)
        w, h = im.size
        rh, rw = self.plan(w, h)
        if (rw, rh) != (w, h):
            im = im.resize((rw, rh), Image.BICUBIC)
        x = (np.asarray(im).astype(np.float64) * (1 / 255)).astype(np.float32)
        x = (x - self.mean) / self.std
        x = x.transpose(2, 0, 1)[None].repeat(self.temporal, 0)  # T C H W
        p, m, t = self.patch, self.merge, self.temporal
        gh, gw = rh // p, rw // p
        x = x.reshape(1, t, 3, gh // m, m, p, gw // m, m, p)
        x = x.transpose(0, 3, 6, 4, 7, 2, 1, 5, 8).reshape(gh * gw, 3 * t * p * p)
        b = x.view(np.uint32)
        bf16 = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
        return (w, h), (rh, rw), (1, gh, gw), bf16


def time_file(proc, data, warmup, iterations, min_ns):
    for _ in range(warmup):
        proc.process(data)
    ns, total = [], 0
    while len(ns) < MAX_ITERATIONS and (len(ns) < iterations or total < min_ns):
        start = time.process_time_ns()
        proc.process(data)
        elapsed = time.process_time_ns() - start
        ns.append(elapsed)
        total += elapsed
    return {"iterations": len(ns), "min_ns": min(ns), "median_ns": statistics.median(ns)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", required=True, help="the model's preprocessor_config.json")
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--min-time", type=float, default=0.0)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    with open(args.config) as f:
        proc = Processor(json.load(f))
    out = {"python": platform.python_version(), "pillow": PIL.__version__, "numpy": np.__version__, "images": []}
    for path in args.files:
        with open(path, "rb") as f:
            data = f.read()
        size, resized, grid, bf16 = proc.process(data)
        timing = time_file(proc, data, args.warmup, args.iterations, int(args.min_time * 1e9))
        out["images"].append({"file": path, "size_wh": list(size), "resized_hw": list(resized),
                              "grid_thw": list(grid), "process": timing,
                              "bf16_sha256": hashlib.sha256(bf16.astype("<u2").tobytes()).hexdigest()})
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
