// Package vision runs a multimodal model's image processor in Go: it turns the RGB pixels vLLM's
// media loader produces (package imaging) into the pixel_values tensor, the patch grid and the number
// of placeholder tokens the Hugging Face processor vLLM calls would produce — bit for bit.
//
// [New] picks the family from the model's preprocessor_config.json; a [Processor] then turns one image
// and the request's mm_processor_kwargs ([Kwargs]) into a [Result] whose tensor is already cast to the
// model's dtype, little-endian, ready for the features encoder. Bad input or kwargs come back as
// *[Error], which the server answers with 400.
//
// Each family is one file (qwen2vl.go); what families share lives beside it: the dtype casts
// (dtype.go), the normalisation tables (normalize.go), the kwargs (kwargs.go), and on amd64 the
// vector patch kernel (patchify_amd64.s), which New keeps only after it has reproduced every entry of
// the tables. Resampling is package vision/resize.
package vision
