//go:build !libjpegturbo || !cgo

package jpeg

// Backend names the decoder Decode uses: this package's Go decoder (build with -tags libjpegturbo and
// cgo to use the system's libjpeg-turbo instead).
const Backend = "go"

func decodeBackend(data []byte, maxPixels int64) (*Image, error) { return decodeGo(data, maxPixels) }
