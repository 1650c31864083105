#!/usr/bin/python3
"""Writes tensorfile's golden payloads and their expected tensors.

.npy files come from numpy's own np.save. torch is not installed here, so
the torch.save archives are built the way torch 2.x writes them
(torch/serialization.py _save): data.pkl is CPython's pickle, protocol 2,
of the reduce tuple Tensor._reduce_ex_internal returns for a plain dense
tensor -- (torch._utils._rebuild_tensor_v2, (storage, storage_offset,
size, stride, requires_grad, OrderedDict())) -- with the storage pickled
as the persistent id ("storage", torch.<Legacy>Storage, key, "cpu",
numel); stand-in modules named torch and torch._utils give the GLOBAL
opcodes the same module and name. The zip holds torch's records in its
order: data.pkl, .format_version, .storage_alignment, byteorder, data/0,
version, .data/serialization_id, stored uncompressed.

Run: /usr/bin/python3 tensorfile/testdata/gen.py (writes beside itself).
"""
import collections, io, json, os, pickle, sys, types, zipfile
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))

torch = types.ModuleType("torch")
torch_utils = types.ModuleType("torch._utils")
sys.modules["torch"] = torch
sys.modules["torch._utils"] = torch_utils
def _rebuild_tensor_v2(*a):
    raise AssertionError("never called")
_rebuild_tensor_v2.__module__ = "torch._utils"
torch_utils._rebuild_tensor_v2 = _rebuild_tensor_v2
torch._utils = torch_utils
STORAGE = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
           "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
           "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage"}
for name in STORAGE.values():
    cls = type(name, (), {"__module__": "torch"})
    setattr(torch, name, cls)

class Storage:
    def __init__(self, cls, key, numel):
        self.cls, self.key, self.numel = cls, key, numel

class Tensor:
    def __init__(self, storage, offset, size, stride, requires_grad=False):
        self.args = (storage, offset, tuple(size), tuple(stride), requires_grad, collections.OrderedDict())
    def __reduce_ex__(self, proto):
        return (_rebuild_tensor_v2, self.args)

class TorchPickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            return ("storage", obj.cls, obj.key, "cpu", obj.numel)
        return None

def torch_save(obj, storages, byteorder="little", prefix="archive", compress=False):
    buf = io.BytesIO()
    TorchPickler(buf, protocol=2).dump(obj)
    out = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(out, "w", method) as z:
        def put(name, data):
            # A fixed date keeps the files reproducible.
            z.writestr(zipfile.ZipInfo(prefix + "/" + name, date_time=(2026, 1, 1, 0, 0, 0)), data, method)
        put("data.pkl", buf.getvalue())
        put(".format_version", "1")
        put(".storage_alignment", "64")
        put("byteorder", byteorder)
        for key, data in storages.items():
            put("data/" + key, data)
        put("version", "3\n")
        put(".data/serialization_id", "0123456789012345678901234567890123456789")
    return out.getvalue()

def bf16(a):
    """float32 -> bfloat16 bits, round to nearest even (torch's cast)."""
    u = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)

cases = []
def npy(name, a):
    buf = io.BytesIO()
    np.save(buf, a)
    with open(os.path.join(here, name), "wb") as f:
        f.write(buf.getvalue())
    c = np.array(a, order="C")  # keeps 0-d arrays 0-d
    cases.append({"file": name, "dtype": str(c.dtype), "shape": list(c.shape), "hex": c.tobytes().hex()})

def pt(name, dtype, a, offset=0, size=None, stride=None, byteorder="little", prefix="archive", compress=False, want=None):
    """a: the storage's elements (1-D); size/stride: the view."""
    flat = np.asarray(a).reshape(-1)
    if dtype == "bfloat16":
        raw = bf16(flat).tobytes()
    else:
        raw = flat.astype(dtype).tobytes()
    if byteorder == "big":
        raw = (bf16(flat).byteswap() if dtype == "bfloat16" else flat.astype(dtype).byteswap()).tobytes()
    size = list(size if size is not None else [len(flat)])
    if stride is None:
        stride, s = [], 1
        for d in reversed(size):
            stride.insert(0, s); s *= d
    st = Storage(getattr(torch, STORAGE[dtype]), "0", len(flat))
    data = torch_save(Tensor(st, offset, size, stride), {"0": raw}, byteorder, prefix, compress)
    with open(os.path.join(here, name), "wb") as f:
        f.write(data)
    # The expected dense tensor: gather the view from the storage.
    if dtype == "bfloat16":
        elems = bf16(flat)
    else:
        elems = flat.astype(dtype)
    view = np.lib.stride_tricks.as_strided(elems[offset:], shape=size,
                                           strides=[s * elems.itemsize for s in stride]) if size else elems[offset:offset+1].reshape(())
    cases.append({"file": name, "dtype": dtype, "shape": size, "hex": np.ascontiguousarray(view).tobytes().hex()})

rng = np.random.default_rng(31)
npy("f32_2x3.npy", np.arange(6, dtype=np.float32).reshape(2, 3) / 7)
npy("f16_4x2.npy", (rng.standard_normal((4, 2))).astype(np.float16))
npy("f64_3.npy", rng.standard_normal(3))
npy("i64_grid.npy", np.array([1, 4, 6], dtype=np.int64))
npy("i32_grid.npy", np.array([1, 8, 8], dtype=np.int32))
npy("u8_2x2.npy", np.array([[1, 2], [3, 255]], dtype=np.uint8))
npy("i8_3.npy", np.array([-128, 0, 127], dtype=np.int8))
npy("i16_2.npy", np.array([-300, 300], dtype=np.int16))
npy("bool_3.npy", np.array([True, False, True]))
npy("c64_2.npy", np.array([1 + 2j, -3.5j], dtype=np.complex64))
npy("u16_2.npy", np.array([1, 65535], dtype=np.uint16))
npy("scalar_f32.npy", np.float32(2.5).reshape(()))
npy("empty_0x4.npy", np.zeros((0, 4), dtype=np.float32))
npy("fortran_3x4.npy", np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4)))
npy("fortran_2x3x2.npy", np.asfortranarray(np.arange(12, dtype=np.int64).reshape(2, 3, 2)))
E = rng.standard_normal((6, 8)).astype(np.float32)
npy("embeds_6x8.npy", E)
# Version 2 and 3 headers, written by numpy's own writer.
for version, name in (((2, 0), "v2_f32_2x2.npy"), ((3, 0), "v3_f32_2x2.npy")):
    buf = io.BytesIO()
    a = np.arange(4, dtype=np.float32).reshape(2, 2)
    np.lib.format.write_array(buf, a, version=version)
    open(os.path.join(here, name), "wb").write(buf.getvalue())
    cases.append({"file": name, "dtype": "float32", "shape": [2, 2], "hex": a.tobytes().hex()})

pt("pt_f32_2x3.pt", "float32", np.arange(6) / 7, size=[2, 3])
pt("pt_bf16_2x4.pt", "bfloat16", rng.standard_normal(8), size=[2, 4])
pt("pt_f16_3.pt", "float16", [0.5, -1, 65504])
pt("pt_i64_grid.pt", "int64", [1, 4, 6])
pt("pt_u8_4.pt", "uint8", [0, 1, 128, 255])
pt("pt_bool_2.pt", "bool", [True, False])
pt("pt_transposed_3x2.pt", "float32", np.arange(6), size=[3, 2], stride=[1, 3])
pt("pt_offset_2x2.pt", "int32", np.arange(10), offset=3, size=[2, 2], stride=[4, 1])
pt("pt_expanded_2x3.pt", "float32", [1, 2, 3], size=[2, 3], stride=[0, 1])
pt("pt_scalar.pt", "float64", [3.25], size=[], stride=[])
pt("pt_big_endian_f32_3.pt", "float32", [1.5, -2, 1e-3], byteorder="big")
pt("pt_prefix_f32_2.pt", "float32", [1, 2], prefix="embeds")
pt("pt_deflated_f32_4.pt", "float32", [1, 2, 3, 4], compress=True)
# The same embeddings as embeds_6x8.npy, for render's differential test.
pt("pt_embeds_6x8.pt", "float32", E, size=[6, 8])
# 16 rows for i32_grid.npy's [1, 8, 8], in float16.
npy("embeds_16x4_f16.npy", rng.standard_normal((16, 4)).astype(np.float16))

with open(os.path.join(here, "golden.json"), "w") as f:
    json.dump(cases, f, indent=1)
    f.write("\n")
