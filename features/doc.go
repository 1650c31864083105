// Package features writes and reads the `features` member of a render
// answer: what `POST /inference/v1/generate` needs to run a multimodal prompt
// without redoing the CPU work (vLLM's MultiModalFeatures).
//
// It holds, per modality, each item's mm_hash (MultiModalHasher's digest,
// see Hasher), its placeholder range in the expanded prompt, and its
// processor output as base64 of msgpack (kwargs_data, and the metadata-only
// subset mm_metadata), encoded as vLLM's MsgpackEncoder does.
//
// Pinned to vLLM bf578e1 (the repository's golden commit): the hash stream,
// the msgpack layout and the JSON object follow that tree's
// vllm/multimodal/hasher.py, vllm/multimodal/processing/inputs.py,
// vllm/v1/serial_utils.py, vllm/multimodal/inputs.py and
// vllm/entrypoints/scale_out/; mm_metadata and is_embed, which bf578e1's
// pydantic model ignores, follow the newer vllm/multimodal/feature_specs.py
// and feature_utils.py. docs/compatibility.md ("Images") says what differs
// between the versions.
package features
