package imaging

import (
	"bytes"
	"encoding/binary"
)

// exifOrientation reads tag 0x0112 from IFD0 of an Exif block (with or without the "Exif\0\0" prefix)
// the way Pillow 9.4's Image.getexif does, returning 1 when exif_transpose would leave the image alone:
// no block, a block Pillow fails to parse (vLLM ignores exif_transpose's errors), or a value that is not
// a single SHORT/LONG/SSHORT/SLONG in 2..8 (Pillow keys its transpose table by that int).
func exifOrientation(exif []byte) int {
	o, _, _ := parseExifOrientation(exif)
	return o
}

// parseExifOrientation also says whether IFD0 has the tag at all and whether Pillow could parse the
// block (an empty block parses, with no tags).
func parseExifOrientation(exif []byte) (orientation int, present, ok bool) {
	if len(exif) >= 6 && string(exif[:6]) == "Exif\x00\x00" {
		exif = exif[6:]
	}
	if len(exif) == 0 {
		return 1, false, true
	}
	if len(exif) < 8 {
		return 1, false, false
	}
	var bo binary.ByteOrder
	switch string(exif[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	default:
		return 1, false, false
	}
	off := int64(bo.Uint32(exif[4:8]))
	if off+2 > int64(len(exif)) {
		return 1, false, false
	}
	n := int64(bo.Uint16(exif[off:]))
	entries := off + 2
	// Pillow reads the whole entry table and the next-IFD offset; a short read fails the whole load.
	if entries+12*n+4 > int64(len(exif)) {
		return 1, false, false
	}
	orientation = 1
	for i := int64(0); i < n; i++ {
		e := exif[entries+12*i : entries+12*i+12]
		if bo.Uint16(e) != 0x0112 {
			continue
		}
		typ, count := bo.Uint16(e[2:]), bo.Uint32(e[4:])
		// Pillow skips entries of a type it does not know, or whose data lies outside the block.
		if typ < 1 || typ > 13 {
			continue
		}
		size := int64(count) * int64([...]int{1: 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8, 4}[typ])
		if size > 4 && int64(bo.Uint32(e[8:]))+size > int64(len(exif)) {
			continue
		}
		present = true
		v := -1
		if count == 1 {
			switch typ {
			case 3:
				v = int(bo.Uint16(e[8:]))
			case 8:
				v = int(int16(bo.Uint16(e[8:])))
			case 4:
				v = int(bo.Uint32(e[8:]))
			case 9:
				v = int(int32(bo.Uint32(e[8:])))
			}
		}
		orientation = 1
		if v >= 2 && v <= 8 {
			orientation = v
		}
	}
	return orientation, present, true
}

// xmpOrientation is Pillow 9.4's fallback when the Exif block has no orientation: the first
// tiff:Orientation="d" or tiff:Orientation>d in the XMP packet.
func xmpOrientation(xmp []byte) int {
	for i := 0; ; {
		j := bytes.Index(xmp[i:], []byte("tiff:Orientation"))
		if j < 0 {
			return 1
		}
		k := i + j + len("tiff:Orientation")
		if k < len(xmp) && (xmp[k] == '>' || (xmp[k] == '=' && k+1 < len(xmp) && xmp[k+1] == '"')) {
			if xmp[k] == '=' {
				k++
			}
			k++
			if k < len(xmp) && xmp[k] >= '0' && xmp[k] <= '9' {
				if v := int(xmp[k] - '0'); v >= 2 && v <= 8 {
					return v
				}
				return 1
			}
		}
		i = k
	}
}
