#!/usr/bin/env python3
"""Writes mm_extra_keys.json: the multimodal extra keys of every full block of
a set of prompts, computed as vLLM bf578e1 computes them
(vllm/v1/core/kv_cache_utils.py: _gen_mm_extra_hash_keys, threaded through
request_block_hasher's loop with its curr_mm_idx), so kvindex.MMKeys, which
keys each block on its own, is held to vLLM's incremental walk.

The two functions below are vLLM's logic on plain tuples (offset, length,
identifier) instead of MultiModalFeatureSpec; vLLM itself is not installable
here. Run: python3 gen_mm_fixtures.py (writes mm_extra_keys.json beside it).
"""
import json
import random


def gen_mm_extra_hash_keys(items, start_token_idx, end_token_idx, start_mm_idx):
    extra_keys = []
    if not items:
        return extra_keys, start_mm_idx
    last_off, last_len, _ = items[-1]
    if last_off + last_len <= start_token_idx:
        return extra_keys, start_mm_idx
    if start_mm_idx < 0:
        assert -start_mm_idx <= len(items)
        start_mm_idx = len(items) + start_mm_idx
    curr_mm_idx = start_mm_idx
    while items and curr_mm_idx < len(items):
        offset, length, identifier = items[curr_mm_idx]
        if end_token_idx > offset:
            if start_token_idx >= offset + length:
                curr_mm_idx += 1
                continue
            extra_keys.append((identifier, offset - start_token_idx))
            if end_token_idx >= offset + length:
                curr_mm_idx += 1
            else:
                break
        else:
            break
    return extra_keys, curr_mm_idx


def block_extra_keys(items, num_tokens, block_size):
    """request_block_hasher for a new request (no block hashes yet)."""
    out = []
    start = 0
    curr_mm_idx = 0
    while start + block_size <= num_tokens:
        keys, curr_mm_idx = gen_mm_extra_hash_keys(items, start, start + block_size, curr_mm_idx)
        out.append([list(k) for k in keys])
        start += block_size
    return out


def case(name, items, num_tokens, block_size):
    return {
        "name": name,
        "block_size": block_size,
        "num_tokens": num_tokens,
        "items": [{"hash": h, "offset": o, "length": n} for o, n, h in items],
        "blocks": block_extra_keys(items, num_tokens, block_size),
    }


def random_items(rng, num_tokens):
    items, pos, k = [], rng.randrange(0, 40), 0
    while pos < num_tokens - 1 and k < 6:
        length = rng.choice([1, 3, 15, 16, 17, 32, 64, rng.randrange(1, 200)])
        if pos + length > num_tokens:
            break
        items.append((pos, length, "h%02d" % k))
        k += 1
        pos += length + rng.choice([0, 0, 1, 5, 16, rng.randrange(0, 100)])
    return items


def main():
    cases = [
        case("no items", [], 64, 16),
        case("one image inside one block", [(3, 8, "a")], 32, 16),
        case("image over three blocks", [(10, 30, "a")], 64, 16),
        case("image on block bounds", [(16, 32, "a")], 64, 16),
        case("two images in one block", [(1, 4, "a"), (5, 4, "b")], 16, 16),
        case("adjacent images across a bound", [(8, 8, "a"), (16, 8, "b")], 32, 16),
        case("image in the partial tail", [(33, 5, "a")], 40, 16),
        case("qwen 1288x728 image", [(15, 1196, "4f0c")], 1230, 16),
        case("block size 4", [(2, 9, "a"), (13, 2, "b")], 20, 4),
    ]
    rng = random.Random(32)
    for i in range(40):
        bs = rng.choice([1, 4, 16, 64])
        n = rng.randrange(bs, 600)
        cases.append(case("random %d" % i, random_items(rng, n), n, bs))
    with open("mm_extra_keys.json", "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(c, separators=(",", ":")) for c in cases) + "\n]\n")


if __name__ == "__main__":
    main()
