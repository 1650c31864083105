package imaging

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"io"
	"strings"
)

// pngModes maps IHDR (bit depth, colour type) to the mode Pillow 9.4 opens the file as.
var pngModes = map[[2]byte]string{
	{1, 0}: "1", {2, 0}: "L", {4, 0}: "L", {8, 0}: "L", {16, 0}: "I",
	{8, 2}: "RGB", {16, 2}: "RGB",
	{1, 3}: "P", {2, 3}: "P", {4, 3}: "P", {8, 3}: "P",
	{8, 4}: "LA", {16, 4}: "LA",
	{8, 6}: "RGBA", {16, 6}: "RGBA",
}

// pngHeader reads the chunks up to the first IDAT as Pillow's PngImagePlugin does when it opens a file:
// a chunk header cut short, a bad CRC or no IDAT leaves the file unidentified; a chunk body cut short
// fails _safe_read ("Truncated File Read"). tRNS and eXIf are noted wherever they are (an eXIf after
// IDAT is read by getexif's load()).
func pngHeader(data []byte) (header, error) {
	if len(data) < 8+8+13 || string(data[12:16]) != "IHDR" || binary.BigEndian.Uint32(data[8:]) != 13 {
		if len(data) >= 16 && string(data[12:16]) == "IHDR" && len(data) < 8+8+13 {
			return header{}, truncatedRead(nil)
		}
		return header{}, ErrUnidentified
	}
	ihdr := data[16:29]
	w, h := binary.BigEndian.Uint32(ihdr), binary.BigEndian.Uint32(ihdr[4:])
	mode, ok := pngModes[[2]byte{ihdr[8], ihdr[9]}]
	if !ok || w == 0 || h == 0 || w > 1<<31-1 || h > 1<<31-1 {
		return header{}, ErrUnidentified
	}
	var exif []byte
	texts := map[string][]byte{}
	sawIDAT := false
	for p := 8; ; {
		if p+8 > len(data) {
			if !sawIDAT {
				return header{}, ErrUnidentified
			}
			break
		}
		n := int64(binary.BigEndian.Uint32(data[p:]))
		typ := string(data[p+4 : p+8])
		if !sawIDAT && typ == "IDAT" {
			sawIDAT = true
		}
		if int64(p)+12+n > int64(len(data)) {
			if !sawIDAT && int64(p)+8+n > int64(len(data)) {
				return header{}, truncatedRead(nil)
			}
			if !sawIDAT {
				return header{}, ErrUnidentified // the CRC cannot be read
			}
			break
		}
		body := data[p+8 : p+8+int(n)]
		if !sawIDAT && crc32.Update(crc32.ChecksumIEEE([]byte(typ)), crc32.IEEETable, body) != binary.BigEndian.Uint32(data[p+8+int(n):]) {
			return header{}, ErrUnidentified // "broken PNG file (bad header checksum ...)"
		}
		if typ == "eXIf" && exif == nil {
			exif = body
		}
		if typ == "tEXt" || typ == "zTXt" || typ == "iTXt" {
			if k, v, ok := pngText(typ, body); ok {
				texts[k] = v
			}
		}
		if typ == "IEND" {
			break
		}
		p += 12 + int(n)
	}
	hd := header{format: PNG, mode: mode, width: int(w), height: int(h), orientation: pngOrientation(exif, texts)}
	std := decodePNGStd
	if mode == "RGB" {
		std = decodePNGOpaque
	}
	hd.decode = func(data []byte, opt Options) (*RGB, error) {
		if img := decodePNGFast(data, opt.Background); img != nil {
			return img, nil
		}
		return std(data, opt)
	}
	return hd, nil
}

// pngDecode runs Go's decoder; Pillow stops reading once the image data is complete, so a file that
// only lacks its trailing chunks (IEND) still decodes: failing that, the decode is retried with an
// IEND appended. A failure with the data cut short is Pillow's "image file is truncated".
func pngDecode(data []byte) (image.Image, error) {
	m, err := png.Decode(bytes.NewReader(data))
	if err == nil {
		return m, nil
	}
	if bytes.Contains(data, []byte("IEND\xaeB`\x82")) {
		return nil, broken(err)
	}
	end := 8
	for end+8 <= len(data) {
		n := int64(binary.BigEndian.Uint32(data[end:]))
		if int64(end)+12+n > int64(len(data)) {
			break
		}
		end += 12 + int(n)
	}
	fixed := append(data[:end:end], "\x00\x00\x00\x00IEND\xaeB`\x82"...)
	if m, err2 := png.Decode(bytes.NewReader(fixed)); err2 == nil {
		return m, nil
	}
	return nil, truncated(err)
}

// decodePNGStd decodes through image/png: the reference the fast decoder (pngdecode.go) is tested
// against, and the path for every file the fast decoder does not vouch for, malformed ones included.
func decodePNGStd(data []byte, opt Options) (*RGB, error) {
	m, err := pngDecode(data)
	if err != nil {
		return nil, err
	}
	return imageToRGB(m, opt.Background), nil
}

// decodePNGOpaque decodes truecolour PNG: Pillow's mode is RGB even with a tRNS colour, and vLLM
// returns an RGB image unchanged, so the transparent colour stays as it is.
func decodePNGOpaque(data []byte, opt Options) (*RGB, error) {
	m, err := pngDecode(data)
	if err != nil {
		return nil, err
	}
	switch m := m.(type) {
	case *image.NRGBA:
		return imageToRGB(&image.RGBA{Pix: m.Pix, Stride: m.Stride, Rect: m.Rect}, opt.Background), nil
	case *image.NRGBA64:
		return imageToRGB(&image.RGBA64{Pix: m.Pix, Stride: m.Stride, Rect: m.Rect}, opt.Background), nil
	}
	return imageToRGB(m, opt.Background), nil
}

// imageToRGB converts what Go's image/png, image/gif and x/image decoders return into vLLM's RGB, as
// Pillow converts the corresponding mode. Go returns an alpha-carrying type exactly when Pillow's
// image has an alpha band or a tRNS transparency (NRGBA, NRGBA64, or a palette with a transparent
// entry), which is vLLM's test for compositing.
func imageToRGB(m image.Image, bg [3]uint8) *RGB {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	out := &RGB{Width: w, Height: h, Pix: make([]byte, 3*w*h)}
	switch m := m.(type) {
	case *image.Gray:
		for y := 0; y < h; y++ {
			row := m.Pix[y*m.Stride : y*m.Stride+w]
			o := out.Pix[3*y*w:]
			for x, v := range row {
				o[3*x], o[3*x+1], o[3*x+2] = v, v, v
			}
		}
	case *image.Gray16:
		// Pillow 9.4 opens 16-bit gray as mode I and convert("RGB") clamps (Convert.c i2rgb).
		for y := 0; y < h; y++ {
			row := m.Pix[y*m.Stride : y*m.Stride+2*w]
			o := out.Pix[3*y*w:]
			for x := 0; x < w; x++ {
				v := uint8(255)
				if row[2*x] == 0 {
					v = row[2*x+1]
				}
				o[3*x], o[3*x+1], o[3*x+2] = v, v, v
			}
		}
	case *image.RGBA:
		// Opaque (or, from decodePNGOpaque, alpha to be ignored): the colour bytes as they are.
		for y := 0; y < h; y++ {
			row := m.Pix[y*m.Stride : y*m.Stride+4*w]
			o := out.Pix[3*y*w:]
			for x := 0; x < w; x++ {
				o[3*x], o[3*x+1], o[3*x+2] = row[4*x], row[4*x+1], row[4*x+2]
			}
		}
	case *image.RGBA64:
		// 16-bit RGB: Pillow keeps the high byte (rawmode RGB;16B).
		for y := 0; y < h; y++ {
			row := m.Pix[y*m.Stride : y*m.Stride+8*w]
			o := out.Pix[3*y*w:]
			for x := 0; x < w; x++ {
				o[3*x], o[3*x+1], o[3*x+2] = row[8*x], row[8*x+2], row[8*x+4]
			}
		}
	case *image.NRGBA:
		c := newCompositor(bg)
		for y := 0; y < h; y++ {
			row := m.Pix[y*m.Stride : y*m.Stride+4*w]
			o := out.Pix[3*y*w:]
			for x := 0; x < w; x++ {
				s := row[4*x : 4*x+4 : 4*x+4]
				c.pixel(o[3*x:3*x+3:3*x+3], s[0], s[1], s[2], s[3])
			}
		}
	case *image.NRGBA64:
		// 16-bit with alpha: Pillow keeps the high bytes (RGBA;16B, LA;16B), then composites.
		c := newCompositor(bg)
		for y := 0; y < h; y++ {
			row := m.Pix[y*m.Stride : y*m.Stride+8*w]
			o := out.Pix[3*y*w:]
			for x := 0; x < w; x++ {
				s := row[8*x : 8*x+8 : 8*x+8]
				c.pixel(o[3*x:3*x+3:3*x+3], s[0], s[2], s[4], s[6])
			}
		}
	case *image.Paletted:
		palettedToRGB(out, m, bg)
	default:
		// Not produced by the decoders used here; convert through the colour model, alpha composited.
		c := newCompositor(bg)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				n := color.NRGBAModel.Convert(m.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA)
				c.pixel(out.Pix[3*(y*w+x):], n.R, n.G, n.B, n.A)
			}
		}
	}
	return out
}

// palettedToRGB maps indices through the palette; with any non-opaque entry (a tRNS chunk or a GIF
// transparent index) the image is vLLM's "transparency in info" case and every pixel is composited.
func palettedToRGB(out *RGB, m *image.Paletted, bg [3]uint8) {
	var lut [256][3]byte
	transparent := false
	var alpha [256]uint8
	for i := range alpha {
		alpha[i] = 255
	}
	for i, pc := range m.Palette {
		if i >= 256 {
			break
		}
		n := color.NRGBAModel.Convert(pc).(color.NRGBA)
		if nc, ok := pc.(color.NRGBA); ok {
			n = nc
		}
		lut[i] = [3]byte{n.R, n.G, n.B}
		alpha[i] = n.A
		if n.A != 255 {
			transparent = true
		}
	}
	if transparent {
		c := newCompositor(bg)
		for i := range lut {
			var o [3]byte
			c.pixel(o[:], lut[i][0], lut[i][1], lut[i][2], alpha[i])
			lut[i] = o
		}
	}
	w, h := out.Width, out.Height
	for y := 0; y < h; y++ {
		row := m.Pix[y*m.Stride : y*m.Stride+w]
		o := out.Pix[3*y*w:]
		for x, idx := range row {
			p := lut[idx]
			o[3*x], o[3*x+1], o[3*x+2] = p[0], p[1], p[2]
		}
	}
}

// pngOrientation is Pillow 9.4's getexif for PNG: the eXIf chunk, else the hex "Raw profile type exif"
// text ImageMagick writes; with no orientation tag in it, tiff:Orientation from the XMP iTXt.
func pngOrientation(exif []byte, texts map[string][]byte) int {
	if exif == nil {
		if raw, ok := texts["Raw profile type exif"]; ok {
			lines := strings.Split(string(raw), "\n")
			hexText := ""
			if len(lines) > 3 {
				hexText = strings.Join(lines[3:], "")
			}
			hexText = strings.Map(func(r rune) rune {
				if r == ' ' || r == '\t' || r == '\r' || r == '\v' || r == '\f' {
					return -1
				}
				return r
			}, hexText)
			b, err := hex.DecodeString(hexText)
			if err != nil {
				return 1 // bytes.fromhex fails, and so does exif_transpose
			}
			exif = b
		}
	}
	o, present, ok := parseExifOrientation(exif)
	if !ok {
		return 1
	}
	if !present {
		if xmp, found := texts["XML:com.adobe.xmp"]; found {
			return xmpOrientation(xmp)
		}
	}
	return o
}

// maxTextChunk is Pillow's MAX_TEXT_CHUNK: a compressed text chunk inflating beyond it is not read here.
const maxTextChunk = 1 << 20

// pngText decodes a tEXt, zTXt or iTXt chunk into its keyword and text (latin-1 or UTF-8 bytes).
func pngText(typ string, body []byte) (string, []byte, bool) {
	k, v, found := bytes.Cut(body, []byte{0})
	if !found {
		return "", nil, false
	}
	switch typ {
	case "tEXt":
		return string(k), latin1(v), true
	case "zTXt":
		if len(v) < 1 || v[0] != 0 {
			return "", nil, false
		}
		t, err := inflateLimited(v[1:])
		if err != nil {
			return "", nil, false
		}
		return string(k), latin1(t), true
	default: // iTXt: compression flag, method, language\0, translated keyword\0, text
		if len(v) < 2 {
			return "", nil, false
		}
		flag, method := v[0], v[1]
		parts := bytes.SplitN(v[2:], []byte{0}, 3)
		if len(parts) != 3 {
			return "", nil, false
		}
		t := parts[2]
		if flag != 0 {
			if method != 0 {
				return "", nil, false
			}
			var err error
			if t, err = inflateLimited(t); err != nil {
				return "", nil, false
			}
		}
		return string(k), t, true
	}
}

func inflateLimited(b []byte) ([]byte, error) {
	r, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, maxTextChunk+1))
	if err != nil || len(out) > maxTextChunk {
		return nil, errors.New("png: text chunk does not inflate within the limit")
	}
	return out, nil
}

// latin1 re-encodes latin-1 bytes as UTF-8 (Python's decode("latin-1")).
func latin1(b []byte) []byte {
	out := make([]rune, len(b))
	for i, c := range b {
		out[i] = rune(c)
	}
	return []byte(string(out))
}
