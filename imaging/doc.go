// Package imaging turns an image file's bytes into the 8-bit RGB pixels vLLM's media loader hands to a
// model's processor: decoded as Pillow 9.4 decodes it, EXIF orientation applied, transparency composited on a
// background colour. Processors (package vision) read only RGB.
//
// Load is vLLM's ImageMediaIO.load_bytes with image_mode "RGB"; Probe reads only the header (size after EXIF
// orientation, Pillow's mode) and fails exactly where Load fails from the header, for callers that need token
// counts and hashes but no pixels. Options carry VLLM_MAX_IMAGE_PIXELS and media_io_kwargs'
// rgba_background_color. Every failure is an *Error whose text is Pillow's message (vLLM answers 400
// "Failed to load image: " + it).
//
// Formats, chosen by signature as Pillow's plugins do: JPEG (baseline, progressive, grayscale, CMYK/YCCK; package
// imaging/jpeg, libjpeg-turbo's algorithms), PNG (every bit depth and colour type, tRNS), GIF (first frame), BMP,
// WebP (lossy through libwebp's fancy upsampler and YUV tables, lossless, alpha). The pixels equal Pillow's on the
// shared corpus and on the generated images of the tests (reference_test.go); docs/compatibility.md lists what is
// known to differ.
package imaging

// RGB is an 8-bit RGB image, rows top to bottom, three bytes a pixel with no padding: Pix has
// Width*Height*3 bytes, the layout numpy gives np.asarray(img) for a Pillow "RGB" image (H x W x 3).
type RGB struct {
	Width, Height int
	Pix           []uint8
}
