package tensorfile

import (
	"encoding/binary"
	"unicode/utf8"
)

// maxHeaderSize is np.load's default max_header_size: a longer header is
// refused before it is parsed.
const maxHeaderSize = 10000

// bufferSize is numpy.lib.format.BUFFER_SIZE: read_array reads a stream's
// data in chunks of this many bytes, which names the chunk a short file
// runs out in.
const bufferSize = 1 << 18

// npyTypes maps a .npy descr (a canonical dtype.str: byte order, kind,
// size) to the torch dtype torch.from_numpy gives it.
var npyTypes = map[string]DType{
	"b1": Bool, "u1": UInt8, "i1": Int8, "i2": Int16, "i4": Int32, "i8": Int64,
	"u2": UInt16, "u4": UInt32, "u8": UInt64, "f2": Float16, "f4": Float32, "f8": Float64,
	"c8": Complex64, "c16": Complex128,
}

// npyTypeNames names the numpy scalar types torch.from_numpy refuses, for
// its TypeError.
var npyTypeNames = map[byte]string{
	'U': "numpy.str_", 'S': "numpy.bytes_", 'V': "numpy.void", 'M': "numpy.datetime64", 'm': "numpy.timedelta64",
}

const fromNumpyTypes = "The only supported types are: float64, float32, float16, complex64, complex128, " +
	"int64, int32, int16, int8, uint64, uint32, uint16, uint8, and bool."

// loadNpy is np.load(BytesIO(data)) with allow_pickle=False, then
// torch.from_numpy: numpy.lib.format.read_array's checks and messages in
// its order, then torch's dtype and byte-order checks.
func loadNpy(data []byte, maxBytes int64) (Tensor, error) {
	if len(data) < 8 {
		return Tensor{}, errorf("EOF: reading magic string, expected 8 bytes got %d", len(data))
	}
	major, minor := data[6], data[7]
	var lenSize int
	switch {
	case major == 1 && minor == 0:
		lenSize = 2
	case (major == 2 || major == 3) && minor == 0:
		lenSize = 4
	default:
		return Tensor{}, errorf("we only support format version (1,0), (2,0), and (3,0), not (%d, %d)", major, minor)
	}
	rest := data[8:]
	if len(rest) < lenSize {
		return Tensor{}, errorf("EOF: reading array header length, expected %d bytes got %d", lenSize, len(rest))
	}
	var hlen uint64
	if lenSize == 2 {
		hlen = uint64(binary.LittleEndian.Uint16(rest))
	} else {
		hlen = uint64(binary.LittleEndian.Uint32(rest))
	}
	rest = rest[lenSize:]
	if hlen > uint64(len(rest)) {
		return Tensor{}, errorf("EOF: reading array header, expected %d bytes got %d", hlen, len(rest))
	}
	raw, body := rest[:hlen], rest[hlen:]
	// Versions 1 and 2 are latin-1 (a character per byte), 3 is UTF-8.
	chars := len(raw)
	if major == 3 {
		if !utf8.Valid(raw) {
			return Tensor{}, errorf("'utf-8' codec can't decode the array header")
		}
		chars = utf8.RuneCount(raw)
	}
	if chars > maxHeaderSize {
		return Tensor{}, errorf("Header info length (%d) is large and may not be safe to load securely.\n"+
			"To allow loading, adjust `max_header_size` or fully trust the `.npy` file using `allow_pickle=True`.\n"+
			"For safety against large resource use or crashes, sandboxing may be necessary.", chars)
	}
	h, err := parseHeader(raw, major <= 2)
	if err != nil {
		return Tensor{}, err
	}
	if h.object {
		return Tensor{}, errorf("Object arrays cannot be loaded when allow_pickle=False")
	}
	size := h.itemSize
	n, err := denseBytes(h.shape, size, maxBytes)
	if err != nil {
		return Tensor{}, err
	}
	if n > len(body) {
		// read_array reads in chunks of BUFFER_SIZE/itemsize elements and
		// names the first short chunk.
		if size == 0 {
			size = 1
		}
		chunk := (bufferSize / min(bufferSize, size)) * size
		start := len(body) / chunk * chunk
		want := min(chunk, n-start)
		return Tensor{}, errorf("EOF: reading array data, expected %d bytes got %d", want, len(body)-start)
	}
	if h.typeErr != "" {
		return Tensor{}, errorf("can't convert np.ndarray of type %s. %s", h.typeErr, fromNumpyTypes)
	}
	if h.bigEndian {
		return Tensor{}, errorf("given numpy array has byte order different from the native byte order. " +
			"Conversion between byte orders is currently not supported.")
	}
	t := Tensor{DType: h.dtype, Shape: h.shape}
	if h.fortran && len(h.shape) > 1 {
		t.Data = fortranToC(body[:n], h.shape, h.dtype.Size())
	} else {
		t.Data = append([]byte(nil), body[:n]...)
	}
	return t, nil
}

// fortranToC reorders column-major elements into row-major order.
func fortranToC(src []byte, shape []int, size int) []byte {
	dst := make([]byte, len(src))
	if len(src) == 0 {
		return dst
	}
	// Fortran strides, in elements.
	strides := make([]int, len(shape))
	s := 1
	for i, d := range shape {
		strides[i] = s
		s *= d
	}
	idx := make([]int, len(shape))
	off := 0
	for o := 0; o < len(dst); o += size {
		copy(dst[o:o+size], src[off*size:off*size+size])
		for k := len(shape) - 1; k >= 0; k-- {
			idx[k]++
			off += strides[k]
			if idx[k] < shape[k] {
				break
			}
			off -= strides[k] * shape[k]
			idx[k] = 0
		}
	}
	return dst
}

// npyHeader is a checked .npy header.
type npyHeader struct {
	shape     []int
	fortran   bool
	dtype     DType
	itemSize  int
	object    bool   // descr holds Python objects
	typeErr   string // numpy's type name when torch.from_numpy refuses the dtype
	bigEndian bool
}

// parseHeader is read_array_header after the length: the header's Python
// dict literal (ast.literal_eval, after _filter_header's removal of Python
// 2 long suffixes for versions 1 and 2) and its checks, with their messages.
func parseHeader(raw []byte, py2Longs bool) (npyHeader, error) {
	p := literalParser{s: raw, longs: py2Longs}
	v, ok := p.parse()
	if !ok {
		return npyHeader{}, errorf("Cannot parse header: %s", pyBytesAsStr(raw))
	}
	if p.nameLine > 0 {
		// ast.literal_eval's ValueError, which numpy passes on; vLLM's
		// sanitize_message drops the object's address.
		return npyHeader{}, errorf("malformed node or string on line %d: <ast.Name object>", p.nameLine)
	}
	if v.kind != litDict {
		return npyHeader{}, errorf("Header is not a dictionary: %s", v.repr())
	}
	keys := map[string]*literal{}
	for i, k := range v.keys {
		if k.kind != litStr {
			return npyHeader{}, errorf("Header does not contain the correct keys")
		}
		keys[k.str] = v.items[i]
	}
	descr, hasDescr := keys["descr"]
	fortran, hasFortran := keys["fortran_order"]
	shape, hasShape := keys["shape"]
	if len(keys) != 3 || !hasDescr || !hasFortran || !hasShape {
		return npyHeader{}, errorf("Header does not contain the correct keys: %s", sortedKeysRepr(keys))
	}
	var h npyHeader
	if shape.kind != litTuple {
		return npyHeader{}, errorf("shape is not valid: %s", shape.repr())
	}
	for _, d := range shape.items {
		if d.kind != litInt {
			return npyHeader{}, errorf("shape is not valid: %s", shape.repr())
		}
		h.shape = append(h.shape, d.int)
	}
	if len(h.shape) > 64 {
		// numpy's NPY_MAXDIMS.
		return npyHeader{}, errorf("maximum supported dimension for an ndarray is 64, found %d", len(h.shape))
	}
	if fortran.kind != litBool {
		return npyHeader{}, errorf("fortran_order is not a valid bool: %s", fortran.repr())
	}
	h.fortran = fortran.bool
	if err := h.setDescr(descr); err != nil {
		return npyHeader{}, err
	}
	return h, nil
}

// setDescr reads descr: a dtype string numpy writes ("<f4", "|b1") or a
// structured dtype's list, which torch refuses.
func (h *npyHeader) setDescr(descr *literal) error {
	if descr.kind == litList {
		h.typeErr, h.itemSize = "numpy.void", 1
		for _, f := range descr.items {
			if f.kind == litTuple && len(f.items) >= 2 && f.items[1].kind == litStr && f.items[1].str == "|O" {
				h.object = true
			}
		}
		return nil
	}
	if descr.kind != litStr {
		return errorf("descr is not a valid dtype descriptor: %s", descr.repr())
	}
	s := descr.str
	order := byte('=')
	if s != "" && (s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '=') {
		order, s = s[0], s[1:]
	}
	if s == "O" || s == "O8" {
		h.object = true
		return nil
	}
	if d, ok := npyTypes[s]; ok {
		h.dtype, h.itemSize = d, d.Size()
		h.bigEndian = order == '>' && d.Size() > 1
		return nil
	}
	switch s {
	case "f16":
		h.typeErr, h.itemSize = "numpy.longdouble", 16
		return nil
	case "c32":
		h.typeErr, h.itemSize = "numpy.clongdouble", 32
		return nil
	}
	if len(s) >= 2 && s[0] != 'f' && s[0] != 'c' {
		if name, ok := npyTypeNames[s[0]]; ok {
			n := 0
			for _, c := range s[1:] {
				if c < '0' || c > '9' || n > 1<<20 {
					return errorf("descr is not a valid dtype descriptor: %s", descr.repr())
				}
				n = n*10 + int(c-'0')
			}
			if s[0] == 'U' {
				n *= 4
			}
			h.typeErr, h.itemSize = name, n
			return nil
		}
	}
	return errorf("descr is not a valid dtype descriptor: %s", descr.repr())
}
