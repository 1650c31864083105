#!/usr/bin/env python3
"""Writes the KV event fixtures as msgspec would encode vLLM's classes.

msgspec is not installable here, so this is a minimal msgpack writer with
msgspec's choices (smallest int form, float64 always, fixstr/str8, bin8,
nil), applied to the classes of vllm/distributed/kv_events.py:

- EventBatch: array_like, omit_defaults -> [ts, events, data_parallel_rank]
  (the rank is set by ZmqEventPublisher.publish, so it is there).
- KVCacheEvent (bf578e1): tag=True, omit_defaults, not array_like -> a map,
  "type" first, then the fields in definition order; fields with defaults
  (extra_keys, group_idx, kv_cache_spec_*) omitted when equal to None.
- KVCacheEvent (releases before, e.g. the kv_events_subscriber example):
  array_like=True, tag=True -> ["BlockStored", field, ...].
Run: python3 gen_fixtures.py (writes *.hex beside it).
"""
import struct

def enc(v):
    if v is None:
        return b"\xc0"
    if isinstance(v, bool):
        return b"\xc3" if v else b"\xc2"
    if isinstance(v, int):
        if 0 <= v < 128:
            return bytes([v])
        if -32 <= v < 0:
            return struct.pack("b", v)
        if v >= 0:
            for code, fmt, lim in ((0xcc, ">B", 1 << 8), (0xcd, ">H", 1 << 16), (0xce, ">I", 1 << 32), (0xcf, ">Q", 1 << 64)):
                if v < lim:
                    return bytes([code]) + struct.pack(fmt, v)
        for code, fmt, lim in ((0xd0, ">b", 1 << 7), (0xd1, ">h", 1 << 15), (0xd2, ">i", 1 << 31), (0xd3, ">q", 1 << 63)):
            if -lim <= v:
                return bytes([code]) + struct.pack(fmt, v)
    if isinstance(v, float):
        return b"\xcb" + struct.pack(">d", v)
    if isinstance(v, str):
        b = v.encode()
        if len(b) < 32:
            return bytes([0xa0 | len(b)]) + b
        return b"\xd9" + bytes([len(b)]) + b
    if isinstance(v, bytes):
        return b"\xc4" + bytes([len(v)]) + v
    if isinstance(v, (list, tuple)):
        assert len(v) < 16
        return bytes([0x90 | len(v)]) + b"".join(enc(x) for x in v)
    if isinstance(v, dict):
        assert len(v) < 16
        return bytes([0x80 | len(v)]) + b"".join(enc(k) + enc(x) for k, x in v.items())
    raise TypeError(v)

def stored(hashes, parent, tokens, block_size, lora_id=None, medium="GPU", lora_name=None, extra_keys=None):
    d = {"type": "BlockStored", "block_hashes": hashes, "parent_block_hash": parent, "token_ids": tokens,
         "block_size": block_size, "lora_id": lora_id, "medium": medium, "lora_name": lora_name}
    if extra_keys is not None:
        d["extra_keys"] = extra_keys
    return d

golden = [1733100000.25, [
    stored([11, (1 << 64) - 1], None, list(range(100, 108)), 4),
    stored([12], (1 << 64) - 1, [108, 109, 110, 111], 4, extra_keys=[None]),
    {"type": "BlockRemoved", "block_hashes": [12], "medium": "GPU"},
    {"type": "AllBlocksCleared"},
], 0]

salted = [2.0, [stored([b"\x01" * 32], None, [1, 2, 3, 4], 4, lora_name="adapter", extra_keys=[["adapter", "salt-a"]])], 1]

legacy = [3.5, [
    ["BlockStored", [7], 5, [1, 2, 3, 4], 4, None, "GPU"],
    ["BlockRemoved", [7], "GPU"],
    ["AllBlocksCleared"],
]]

for name, v in (("golden", golden), ("salted", salted), ("legacy", legacy)):
    with open(name + ".hex", "w") as f:
        f.write(enc(v).hex() + "\n")
