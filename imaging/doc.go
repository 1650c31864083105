// Package imaging turns an image file's bytes into the 8-bit RGB pixels vLLM's media loader hands to a
// model's processor: decoded as Pillow decodes it, EXIF orientation applied, transparency composited on a
// background colour. Processors (package vision) read only RGB.
package imaging

// RGB is an 8-bit RGB image, rows top to bottom, three bytes a pixel with no padding: Pix has
// Width*Height*3 bytes, the layout numpy gives np.asarray(img) for a Pillow "RGB" image (H x W x 3).
type RGB struct {
	Width, Height int
	Pix           []uint8
}
