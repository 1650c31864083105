// Package tensorfile reads the tensors a client sends as image_embeds, as
// vLLM's ImageEmbeddingMediaIO.load_bytes does (bf578e1): a NumPy .npy file
// (magic "\x93NUMPY", read as np.load with allow_pickle=False, then
// torch.from_numpy) or a torch.save zip archive (read as torch.load with
// weights_only=True, then to_dense).
//
// Both are untrusted input. The .npy header is parsed as the Python literal
// it is, not evaluated; the torch archive's data.pkl runs on a pickle
// machine that knows only the opcodes and the three globals a plain dense
// tensor needs (torch._utils._rebuild_tensor_v2, the legacy storage classes,
// collections.OrderedDict), so anything weights_only would allow beyond a
// plain tensor, and everything it would refuse, is refused. Sizes are
// checked before any allocation: a tensor's dense bytes may not exceed the
// caller's cap.
package tensorfile
