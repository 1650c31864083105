package jpeg

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// BenchmarkDecode is the JPEG decoder alone (Backend's), with the process CPU per decode.
func BenchmarkDecode(b *testing.B) {
	for _, name := range []string{"jpeg_444_1280x720", "jpeg_420_1920x1080"} {
		b.Run(name, func(b *testing.B) {
			data, err := os.ReadFile(filepath.Join(testenv.SharedDir(b), "multimodal", "images", name+".jpg"))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			cpu0 := testenv.CPUTime(b)
			for b.Loop() {
				if _, err := Decode(data, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(testenv.CPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
