// Package resize scales 8-bit RGB images with the two fixed-point bicubic resamplers vision models are
// preprocessed with, byte for byte:
//
//   - [Pillow]: Pillow's Resample.c (Image.resize with BICUBIC), 22-bit int32 weights — the "slow"
//     Hugging Face processors.
//   - [Torch]: torch's antialiased uint8 bicubic kernel (UpSampleKernel.cpp, from Pillow-SIMD), int16
//     weights scaled by the largest power of two each pass allows — what torchvision's resize runs on a
//     uint8 tensor, so the "fast" processors vLLM uses by default.
//
// Both are separable: weights for every output column and row are computed once in float64, quantised,
// then a horizontal pass (skipped when the width is unchanged) and a vertical pass (skipped when the
// height is unchanged) accumulate integers, round by adding half and shifting, and clamp to 0..255.
// They differ only in the cubic polynomial's rounding and in the weights' precision, which is why
// their outputs differ by a level here and there.
//
// The passes run as AVX2 kernels on amd64 CPUs that have it (kernel_amd64.s: VPMADDWD on int16
// weights, Pillow's 22-bit weights split in two or multiplied with VPMULLD), torch's int16 ones as
// AVX-512 kernels where the CPU has VBMI and VNNI (kernel512_amd64.s: VPERMB gathers, VPDPWSSD
// multiply-accumulates), and as plain Go loops elsewhere (kernel.go). Integer sums do not depend on their order, so both write the same bytes;
// the tests and a fuzz target hold them to it.
package resize
