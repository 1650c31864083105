"""numpy's np.load as the live reference for tensorfile's .npy reader.

Writes one JSON line per case: the payload (base64) and what
np.load(BytesIO(payload), allow_pickle=False) gives -- the C-order bytes,
dtype and shape, or the exception's type and message. Arrays are random (seeded)
over the dtypes torch.from_numpy takes, shapes up to 4-D and both orders;
each is also cut at random points and has its header bent.
"""
import base64, io, json, sys
import numpy as np

rng = np.random.default_rng(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
DTYPES = ["float16", "float32", "float64", "complex64", "complex128", "int8", "int16", "int32", "int64",
          "uint8", "uint16", "uint32", "uint64", "bool"]

def case(payload):
    out = {"b64": base64.b64encode(payload).decode()}
    try:
        a = np.load(io.BytesIO(payload), allow_pickle=False)
        c = np.array(a, order="C")
        out.update(dtype=str(c.dtype), shape=list(c.shape), hex=c.tobytes().hex())
    except Exception as e:  # noqa: BLE001 -- numpy raises more than ValueError
        out["error"], out["etype"] = str(e), type(e).__name__
    print(json.dumps(out))

for _ in range(60):
    dt = DTYPES[rng.integers(len(DTYPES))]
    shape = tuple(int(x) for x in rng.integers(0, 5, size=rng.integers(0, 5)))
    a = (rng.standard_normal(shape) * 100).astype(dt)
    if rng.integers(2):
        a = np.asfortranarray(a)
    buf = io.BytesIO()
    np.lib.format.write_array(buf, a, version=[(1, 0), (2, 0), (3, 0)][rng.integers(3)])
    p = buf.getvalue()
    case(p)
    for _ in range(3):
        case(p[: int(rng.integers(6, len(p)))])
    # A bent header: a byte of the dict replaced.
    hl = 10 if p[6] == 1 else 12
    q = bytearray(p)
    i = int(rng.integers(hl, min(len(p), hl + 60)))
    q[i] = int(rng.choice(list(b"{}(),:'\"0123456789 TFx-")))
    case(bytes(q))
