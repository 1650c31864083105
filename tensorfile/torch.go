package tensorfile

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Bounds on a torch.save archive beyond the tensor's own size: a plain
// tensor's archive has seven records and a data.pkl of a few hundred bytes.
const (
	maxZipEntries = 64
	maxPickle     = 64 << 10
)

// storageTypes are the legacy storage classes torch.save names for a
// tensor's storage (TypedStorage._pickle_storage_type), by dtype.
var storageTypes = map[string]DType{
	"DoubleStorage": Float64, "FloatStorage": Float32, "HalfStorage": Float16, "BFloat16Storage": BFloat16,
	"LongStorage": Int64, "IntStorage": Int32, "ShortStorage": Int16, "CharStorage": Int8,
	"ByteStorage": UInt8, "BoolStorage": Bool, "ComplexFloatStorage": Complex64, "ComplexDoubleStorage": Complex128,
}

// errNotPlain refuses what weights_only would load but is not one plain
// dense tensor.
func errNotPlain(what string) *Error {
	return errorf("image_embeds must be a plain dense tensor saved with torch.save; the archive holds %s", what)
}

// errUnpickle is torch's weights_only refusal of data.pkl.
func errUnpickle(format string, a ...any) *Error {
	return errorf("Weights only load failed. WeightsUnpickler error: "+format, a...)
}

// loadTorch is torch.load(BytesIO(data), weights_only=True).to_dense() for
// the zip archive torch.save writes: data.pkl names the tensor's storage,
// data/<key> holds its bytes.
func loadTorch(data []byte, maxBytes int64) (Tensor, error) {
	if !bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		return Tensor{}, errorf("image_embeds is neither a .npy file nor a torch.save zip archive " +
			"(torch.save's legacy format, _use_new_zipfile_serialization=False, is not supported)")
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return Tensor{}, errorf("PytorchStreamReader failed reading zip archive: %v", err)
	}
	if len(zr.File) == 0 {
		return Tensor{}, errorf("PytorchStreamReader failed reading zip archive: no records")
	}
	if len(zr.File) > maxZipEntries {
		return Tensor{}, errorf("PytorchStreamReader failed reading zip archive: %d records, more than a tensor's archive has", len(zr.File))
	}
	// The archive's records sit below one directory, named after the
	// first record's ("archive" for a BytesIO).
	prefix, _, ok := strings.Cut(zr.File[0].Name, "/")
	if !ok {
		return Tensor{}, errorf("PytorchStreamReader failed reading zip archive: file in archive is not in a subdirectory: %s", zr.File[0].Name)
	}
	records := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		if name, ok := strings.CutPrefix(f.Name, prefix+"/"); ok {
			records[name] = f
		}
	}
	version := records["version"]
	if version == nil {
		version = records[".data/version"]
	}
	if version == nil {
		return Tensor{}, errorf("PytorchStreamReader failed locating file version: file not found")
	}
	vb, err := readRecord(version, 16)
	if err != nil {
		return Tensor{}, err
	}
	if v, err := strconv.Atoi(strings.TrimSpace(string(vb))); err != nil || v < 1 || v > 10 {
		return Tensor{}, errorf("PytorchStreamReader: unsupported file format version %q", strings.TrimSpace(string(vb)))
	}
	bigEndian := false
	if f := records["byteorder"]; f != nil {
		b, err := readRecord(f, 16)
		if err != nil {
			return Tensor{}, err
		}
		switch string(b) {
		case "little":
		case "big":
			bigEndian = true
		default:
			return Tensor{}, errorf("Unknown endianness type: %s", b)
		}
	}
	pklFile := records["data.pkl"]
	if pklFile == nil {
		return Tensor{}, errorf("PytorchStreamReader failed locating file data.pkl: file not found")
	}
	pkl, err := readRecord(pklFile, maxPickle)
	if err != nil {
		return Tensor{}, err
	}
	u := unpickler{s: pkl}
	v, err := u.run()
	if err != nil {
		return Tensor{}, err
	}
	rt, ok := v.(*rebuiltTensor)
	if !ok {
		return Tensor{}, errNotPlain(describe(v))
	}
	return rt.materialize(records, bigEndian, maxBytes)
}

// readRecord reads a record of at most max bytes, whatever its header
// claims (a deflated record is read no further than that).
func readRecord(f *zip.File, max int64) ([]byte, error) {
	if f.UncompressedSize64 > uint64(max) {
		return nil, errorf("PytorchStreamReader failed reading file %s: %d bytes, more than the %d expected", f.Name, f.UncompressedSize64, max)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, errorf("PytorchStreamReader failed reading file %s: %v", f.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err != nil {
		return nil, errorf("PytorchStreamReader failed reading file %s: %v", f.Name, err)
	}
	if int64(len(b)) > max {
		return nil, errorf("PytorchStreamReader failed reading file %s: more than the %d bytes expected", f.Name, max)
	}
	return b, nil
}

// storageRef is a persistent id ("storage", <class>, key, location, numel).
type storageRef struct {
	dtype    DType
	key      string
	location string
	numel    int
}

// rebuiltTensor is _rebuild_tensor_v2's arguments, applied once the
// storage is read.
type rebuiltTensor struct {
	storage storageRef
	offset  int
	size    []int
	stride  []int
}

// materialize reads the storage record and gathers the view's elements in
// C order: t.set_(storage, offset, size, stride), then to_dense.
func (rt *rebuiltTensor) materialize(records map[string]*zip.File, bigEndian bool, maxBytes int64) (Tensor, error) {
	st := rt.storage
	if st.location != "cpu" {
		return Tensor{}, errorf("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. " +
			"If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.")
	}
	size := st.dtype.Size()
	n, err := denseBytes(rt.size, size, maxBytes)
	if err != nil {
		return Tensor{}, err
	}
	storageBytes, err := denseBytes([]int{st.numel}, size, maxBytes)
	if err != nil {
		return Tensor{}, err
	}
	f := records["data/"+st.key]
	if f == nil {
		return Tensor{}, errorf("PytorchStreamReader failed locating file data/%s: file not found", st.key)
	}
	raw, err := readRecord(f, int64(storageBytes))
	if err != nil {
		return Tensor{}, err
	}
	if len(raw) != storageBytes {
		return Tensor{}, errorf("PytorchStreamReader failed reading file data/%s: %d bytes, want %d for %d elements", st.key, len(raw), storageBytes, st.numel)
	}
	if bigEndian {
		swapElements(raw, st.dtype)
	}
	t := Tensor{DType: st.dtype, Shape: rt.size, Data: make([]byte, n)}
	if n == 0 {
		return t, nil
	}
	// The highest element the view reaches must lie in the storage.
	last := rt.offset
	for i, d := range rt.size {
		last += (d - 1) * rt.stride[i]
	}
	if last >= st.numel {
		return Tensor{}, errorf("setStorage: sizes %s, strides %s, storage offset %d, and itemsize %d requiring a storage size of %d are out of bounds for storage of size %d",
			pyList(rt.size), pyList(rt.stride), rt.offset, size, (last+1)*size, storageBytes)
	}
	idx := make([]int, len(rt.size))
	off := rt.offset
	for o := 0; o < n; o += size {
		copy(t.Data[o:o+size], raw[off*size:off*size+size])
		for k := len(rt.size) - 1; k >= 0; k-- {
			idx[k]++
			off += rt.stride[k]
			if idx[k] < rt.size[k] {
				break
			}
			off -= rt.stride[k] * rt.size[k]
			idx[k] = 0
		}
	}
	return t, nil
}

// swapElements turns big-endian elements little-endian in place, as
// torch.load does for an archive whose byteorder record says "big"
// (complex numbers swap each half).
func swapElements(b []byte, d DType) {
	w := d.Size()
	if d == Complex64 || d == Complex128 {
		w /= 2
	}
	for i := 0; i+w <= len(b); i += w {
		for l, r := i, i+w-1; l < r; l, r = l+1, r-1 {
			b[l], b[r] = b[r], b[l]
		}
	}
}

// pyList is the repr torch gives an IntArrayRef: [2, 3].
func pyList(xs []int) string {
	var b []byte
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return string(append(b, ']'))
}

// describe names a pickled value that is not a tensor.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case orderedDict:
		return "an OrderedDict"
	case storageRef:
		return "a bare storage"
	case []any:
		return fmt.Sprintf("a tuple of %d", len(v))
	case string:
		return "a str"
	case int:
		return "an int"
	case bool:
		return "a bool"
	case global:
		return v.module + "." + v.name
	}
	return fmt.Sprintf("%T", v)
}
