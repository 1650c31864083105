#!/usr/bin/env python3
"""Writes the features fixtures as vLLM bf578e1 would produce them.

torch, msgspec and blake3 are not installable here, so the encoders are
re-stated from the pinned sources, with the Debian python3-msgpack and
python3-numpy packages doing the byte-level work:

- Items (vllm/v1/serial_utils.py MsgpackEncoder._encode_mm_item, size_threshold
  2**62 as in scale_out/token_in_token_out/mm_serde.py): {key: {"data": tensor,
  "field": (factory, {dataclass fields in order})}}; a tensor is
  (str(dtype) minus "torch.", tuple(shape), Ext(3, raw little-endian bytes));
  a slice is enc_hook's (start, stop, step) tuple. msgpack.packb(use_bin_type=True)
  makes msgspec's choices for these types (smallest int form, str8, fixext,
  float64).
- Qwen fields (vllm/model_executor/models/qwen2_vl.py _create_qwen2vl_field_factory,
  vllm/multimodal/inputs.py): pixel_values = flat_from_sizes("image", grid.prod(-1))
  -> MultiModalFlatField(keep_on_cpu=False, slices=[(slice(a, b),), ...], dim=0);
  image_grid_thw = batched("image", keep_on_cpu=True).
- Hashes (vllm/multimodal/hasher.py, processing/inputs.py get_mm_hashes):
  hash_kwargs(model_id=..., image=MediaWithBytes | uuid, **mm_processor_kwargs),
  keys sorted, iter_item_to_bytes per key. The streams are written out with their
  sha256 (hashlib); the Go test checks blake3 of the same stream.
- Features JSON (scale_out/token_in_token_out/protocol.py MultiModalFeatures,
  rendered by JSONResponse(model_dump()): json.dumps(ensure_ascii=False,
  separators=(",", ":"))).

Pixel bytes are synthetic: byte i of image k is (i*31 + k*7 + 3) & 0xff, whatever
the dtype.
Run: /usr/bin/python3 gen_fixtures.py (writes the files beside it).
"""
import base64
import hashlib
import json
import os

import msgpack
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def pixels(k, rows, cols, size=2):
    n = rows * cols * size
    return bytes(((i * 31 + k * 7 + 3) & 0xFF) for i in range(n))


def tensor(dtype, shape, raw):
    return (dtype, tuple(shape), msgpack.ExtType(3, raw))


def enc_slice(s):
    return (s.start, s.stop, s.step)


def flat_from_sizes(sizes, dim=0):
    idx = [0]
    for s in sizes:
        idx.append(idx[-1] + s)
    slices = [(slice(None, None, None),) * dim + (slice(idx[i], idx[i + 1]),) for i in range(len(sizes))]
    return ("flat", {"keep_on_cpu": False, "slices": [tuple(enc_slice(s) for s in t) for t in slices], "dim": dim})


def batched(keep_on_cpu):
    return ("batched", {"keep_on_cpu": keep_on_cpu})


SIZES = {"bfloat16": 2, "float16": 2, "float32": 4}


def qwen_items(grids, cols, dtype="bfloat16"):
    sizes = [t * h * w for t, h, w in grids]
    pv_field = flat_from_sizes(sizes)
    items = []
    for k, (g, rows) in enumerate(zip(grids, sizes)):
        items.append({
            "pixel_values": {"data": tensor(dtype, (rows, cols), pixels(k, rows, cols, SIZES[dtype])),
                             "field": pv_field},
            "image_grid_thw": {"data": tensor("int64", (3,), np.array(g, dtype="<i8").tobytes()),
                               "field": batched(True)},
        })
    return items


def pack(obj):
    return msgpack.packb(obj, use_bin_type=True)


# --- hashing (hasher.py at bf578e1) ---

class MediaWithBytes:
    def __init__(self, original_bytes):
        self.original_bytes = original_bytes


def serialize_item(obj):
    if isinstance(obj, (bytes, memoryview)):
        return (obj,)
    if isinstance(obj, str):
        return (obj.encode("utf-8"),)
    if isinstance(obj, (int, float)):
        return (np.array(obj).tobytes(),)
    if isinstance(obj, MediaWithBytes):
        return iter_item_to_bytes("image", obj.original_bytes)
    raise TypeError(type(obj))


def iter_item_to_bytes(key, obj):
    if obj is None:
        yield key.encode("utf-8")
        return
    if isinstance(obj, (list, tuple)):
        for i, elem in enumerate(obj):
            yield from iter_item_to_bytes(f"{key}.{i}", elem)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from iter_item_to_bytes(f"{key}.{k}", v)
    else:
        yield key.encode("utf-8")
        yield from serialize_item(obj)


def hash_stream(**kwargs):
    out = b""
    for k, v in sorted(kwargs.items(), key=lambda kv: kv[0]):
        for b in iter_item_to_bytes(k, v):
            out += bytes(b)
    return out


def get_mm_hash(model_id, file_bytes, uuid, kwargs):
    """get_mm_hashes' uuid branch (chat requests always carry a uuid list)."""
    if uuid is not None and not kwargs:
        return None, uuid
    item = uuid if uuid is not None else MediaWithBytes(file_bytes)
    stream = hash_stream(model_id=model_id, image=item, **kwargs)
    return stream, hashlib.sha256(stream).hexdigest()


def main():
    cases = {
        "qwen25_one": ([(1, 2, 4)], 1176, "bfloat16"),
        "qwen25_two": ([(1, 2, 2), (1, 4, 2)], 1176, "bfloat16"),
        "qwen3_one": ([(1, 2, 2)], 1536, "bfloat16"),
        "qwen25_ext32": ([(1, 4, 8)], 1176, "bfloat16"),  # 75,264 bytes: ext32
        "qwen25_seventeen": ([(1, 2, 2)] * 17, 1176, "bfloat16"),  # slices need array16
        "qwen25_float32": ([(1, 2, 2)], 1176, "float32"),  # a model served in float32
    }
    manifest = []
    for name, (grids, cols, dtype) in cases.items():
        items = qwen_items(grids, cols, dtype)
        for k, item in enumerate(items):
            if name == "qwen25_seventeen" and k not in (0, 16):
                continue
            fn = f"{name}_{k}.msgpack"
            with open(os.path.join(HERE, fn), "wb") as f:
                f.write(pack(item))
            meta = f"{name}_{k}.metadata.msgpack"
            with open(os.path.join(HERE, meta), "wb") as f:
                f.write(pack({"image_grid_thw": item["image_grid_thw"]}))
            manifest.append({"file": fn, "metadata": meta, "image": k, "grids": grids, "cols": cols,
                             "dtype": dtype})
    with open(os.path.join(HERE, "items.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")

    # The features object of a two-image Qwen2.5-VL render, as model_dump()
    # and Starlette's JSONResponse write it.
    items = qwen_items([(1, 2, 2), (1, 4, 2)], 1176)
    features = {
        "mm_hashes": {"image": ["a" * 64, "uuid-\u00e9\"x"]},
        "mm_placeholders": {"image": [{"offset": 15, "length": 1}, {"offset": 20, "length": 2}]},
        "kwargs_data": {"image": [base64.b64encode(pack(i)).decode("ascii") for i in items]},
    }
    with open(os.path.join(HERE, "features_two.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(features, ensure_ascii=False, separators=(",", ":")))
    features["kwargs_data"] = None
    with open(os.path.join(HERE, "features_no_kwargs.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(features, ensure_ascii=False, separators=(",", ":")))

    png = bytes(range(256)) * 3
    hashes = []
    for name, model, uuid, kwargs_json in [
        ("bytes", "Qwen/Qwen2.5-VL-3B-Instruct", None, None),
        ("bytes_empty_kwargs", "Qwen/Qwen2.5-VL-3B-Instruct", None, "{}"),
        ("uuid_verbatim", "Qwen/Qwen2.5-VL-3B-Instruct", "my-image-1", None),
        ("uuid_with_kwargs", "Qwen/Qwen2.5-VL-3B-Instruct", "my-image-1", '{"max_pixels": 1003520}'),
        ("kwargs_sorted", "/models/qwen", None,
         '{"min_pixels": 3136, "max_pixels": 12845056, "fps": 2.0, "a_flag": true, "z": null}'),
        ("kwargs_nested", "/models/qwen", None,
         '{"size": {"shortest_edge": 65536, "longest_edge": 16777216}, "list": [1, -2, 2.5e-3, "s", false, [], {}]}'),
        ("kwargs_big_ints", "m", None, '{"u": 18446744073709551615, "neg": -9223372036854775808, "f": -0.0}'),
        ("kwargs_unicode", "m\u00fcdel", None, '{"\u00e9": "\u2028\u00e9", "b": 1e400}'),
    ]:
        kwargs = json.loads(kwargs_json) if kwargs_json is not None else {}
        stream, digest = get_mm_hash(model, png, uuid, kwargs)
        hashes.append({"name": name, "model_id": model, "uuid": uuid, "mm_processor_kwargs": kwargs_json,
                       "stream_hex": stream.hex() if stream is not None else None, "hash_sha256": digest})
    with open(os.path.join(HERE, "hashes.json"), "w", encoding="utf-8") as f:
        json.dump({"file_hex": png.hex(), "cases": hashes}, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
