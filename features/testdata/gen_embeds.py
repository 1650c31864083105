#!/usr/bin/env python3
"""Writes embeds.json: image_embeds items' mm_hash streams and kwargs items
as vLLM bf578e1 makes them for a Qwen2-VL-family model.

torch is not installed here. serialize_item's tensor and ndarray branches
below are vllm/multimodal/hasher.py's (bf578e1) verbatim, run on a stand-in
Tensor over a numpy array that answers the calls they make (cpu, dtype,
shape, contiguous, view, numpy); bfloat16 is carried as its uint16 bits.
The item hashed is DictEmbeddingItems.get(i): {"image_embeds": rows,
"image_grid_thw": grid}, in that key order (vLLM's follows a set's, see
EmbedsHash). Items are encoded as gen_fixtures.py encodes pixel_values
items, with image_embeds in flat_from_sizes(grid.prod(-1) // 4).
Run: /usr/bin/python3 gen_embeds.py (writes beside it).
"""
import base64, hashlib, json, os
import msgpack
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


class _DType:
    def __init__(self, name, np_dtype):
        self.name, self.np = name, np_dtype
    def __str__(self):
        return "torch." + self.name


class torch:
    bfloat16 = _DType("bfloat16", np.uint16)
    uint8 = _DType("uint8", np.uint8)

    class Tensor:
        def __init__(self, arr, dtype=None):
            self.arr = arr
            self.dtype = dtype or _DType(str(arr.dtype), arr.dtype)
        def cpu(self):
            return self
        @property
        def shape(self):
            return self.arr.shape
        def contiguous(self):
            return torch.Tensor(np.ascontiguousarray(self.arr), self.dtype)
        def numel(self):
            return self.arr.size
        def view(self, arg):
            if isinstance(arg, tuple):
                return torch.Tensor(self.arr.reshape(arg), self.dtype)
            assert arg is torch.uint8
            return torch.Tensor(self.arr.view(np.uint8), torch.uint8)
        def numpy(self):
            return self.arr


class MultiModalHasher:
    @classmethod
    def serialize_item(cls, obj):
        if isinstance(obj, (bytes, memoryview)):
            return (obj,)
        if isinstance(obj, str):
            return (obj.encode("utf-8"),)
        if isinstance(obj, (int, float)):
            return (np.array(obj).tobytes(),)

        # vLLM's tensor and ndarray branches, verbatim:
        if isinstance(obj, torch.Tensor):
            tensor_obj: torch.Tensor = obj.cpu()
            tensor_dtype = tensor_obj.dtype
            tensor_shape = tensor_obj.shape

            # NumPy does not support bfloat16.
            # Workaround: View the tensor as a contiguous 1D array of bytes
            if tensor_dtype == torch.bfloat16:
                tensor_obj = tensor_obj.contiguous()
                tensor_obj = tensor_obj.view((tensor_obj.numel(),)).view(torch.uint8)

                return cls.iter_item_to_bytes(
                    "tensor",
                    {
                        "original_dtype": str(tensor_dtype),
                        "original_shape": tuple(tensor_shape),
                        "data": tensor_obj.numpy(),
                    },
                )

            return cls.iter_item_to_bytes("tensor", tensor_obj.numpy())

        if isinstance(obj, np.ndarray):
            if obj.ndim == 0:
                arr_data = obj.item()
            elif obj.flags.c_contiguous:
                # Not valid for 0-D arrays
                arr_data = obj.view(np.uint8).data
            else:
                # If the array is non-contiguous, we need to copy it first
                arr_data = obj.tobytes()

            return cls.iter_item_to_bytes(
                "ndarray",
                {
                    "dtype": obj.dtype.str,
                    "shape": obj.shape,
                    "data": arr_data,
                },
            )
        raise TypeError(type(obj))

    @classmethod
    def iter_item_to_bytes(cls, key, obj):
        if obj is None:
            yield key.encode("utf-8")
            return
        # Recursive cases
        if isinstance(obj, (list, tuple)):
            for i, elem in enumerate(obj):
                yield from cls.iter_item_to_bytes(f"{key}.{i}", elem)
        elif isinstance(obj, dict):
            for k, v in obj.items():
                yield from cls.iter_item_to_bytes(f"{key}.{k}", v)
        else:
            yield key.encode("utf-8")
            yield from cls.serialize_item(obj)


def stream(**kwargs):
    out = b""
    for k, v in sorted(kwargs.items(), key=lambda kv: kv[0]):
        for b in MultiModalHasher.iter_item_to_bytes(k, v):
            out += bytes(b)
    return out


def bf16(a):
    u = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def tensor_spec(t):
    return {"dtype": t.dtype.name, "shape": list(t.shape), "hex": np.ascontiguousarray(t.arr).tobytes().hex()}


def enc_tensor(t):
    return (t.dtype.name, tuple(t.shape), msgpack.ExtType(3, np.ascontiguousarray(t.arr).tobytes()))


rng = np.random.default_rng(7)
parts = {
    "f32_grid_1x4x6": (torch.Tensor(rng.standard_normal((6, 8)).astype(np.float32)),
                       torch.Tensor(np.array([1, 4, 6], dtype=np.int64))),
    "bf16_grid_1x2x4": (torch.Tensor(bf16(rng.standard_normal((2, 4))), torch.bfloat16),
                        torch.Tensor(np.array([1, 2, 4], dtype=np.int64))),
    "f16_int32_grid": (torch.Tensor(rng.standard_normal((4, 3)).astype(np.float16)),
                       torch.Tensor(np.array([1, 4, 4], dtype=np.int32))),
}
cases = []
for name, model, uuid, kwargs_json in [
    ("f32_grid_1x4x6", "Qwen/Qwen2.5-VL-3B-Instruct", None, None),
    ("bf16_grid_1x2x4", "Qwen/Qwen2.5-VL-3B-Instruct", None, None),
    ("f16_int32_grid", "/models/qwen3", None, '{"max_pixels": 1003520}'),
    ("f32_grid_1x4x6", "Qwen/Qwen2.5-VL-3B-Instruct", "emb-1", None),
    ("f32_grid_1x4x6", "Qwen/Qwen2.5-VL-3B-Instruct", "emb-1", '{"max_pixels": 1003520}'),
]:
    embeds, grid = parts[name]
    kwargs = json.loads(kwargs_json) if kwargs_json else {}
    if uuid is not None and not kwargs:
        s, digest = None, uuid
    else:
        item = uuid if uuid is not None else {"image_embeds": embeds, "image_grid_thw": grid}
        s = stream(model_id=model, image=item, **kwargs)
        digest = hashlib.sha256(s).hexdigest()
    cases.append({"part": name, "model_id": model, "uuid": uuid, "mm_processor_kwargs": kwargs_json,
                  "stream_hex": s.hex() if s is not None else None, "hash_sha256": digest})

# kwargs items of a request with the three parts, in this order.
order = ["f32_grid_1x4x6", "bf16_grid_1x2x4", "f16_int32_grid"]
rows = [int(np.prod(parts[n][1].arr)) // 4 for n in order]
idx = [0]
for r in rows:
    idx.append(idx[-1] + r)
field = ("flat", {"keep_on_cpu": False, "slices": [((idx[i], idx[i + 1], None),) for i in range(len(rows))], "dim": 0})
items = []
for n in order:
    embeds, grid = parts[n]
    item = {"image_embeds": {"data": enc_tensor(embeds), "field": field},
            "image_grid_thw": {"data": enc_tensor(grid), "field": ("batched", {"keep_on_cpu": True})}}
    items.append({"part": n, "msgpack_b64": base64.b64encode(msgpack.packb(item, use_bin_type=True)).decode(),
                  "metadata_b64": base64.b64encode(msgpack.packb({"image_grid_thw": item["image_grid_thw"]},
                                                                 use_bin_type=True)).decode()})

with open(os.path.join(HERE, "embeds.json"), "w") as f:
    json.dump({"parts": {n: {"embeds": tensor_spec(e), "grid": tensor_spec(g)} for n, (e, g) in parts.items()},
               "hashes": cases, "items": items}, f, indent=1)
    f.write("\n")
