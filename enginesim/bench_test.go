package enginesim

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testmodel"
)

// BenchmarkStream256 streams 256-token answers (ignore_eos) through the
// HTTP stack with zero latency, from parallel clients: the sim's own cost
// per token, which the serving benchmark needs to stay far below vrender's.
func BenchmarkStream256(b *testing.B) {
	sim, err := New(testmodel.Load(b, "qwen3"), Config{ServedModelName: "qwen3"})
	if err != nil {
		b.Fatal(err)
	}
	srv := newBenchServer(b, sim)
	body := `{"token_ids":[9707,11,1879,0,1446,525,498,30],"sampling_params":{"max_tokens":256,"ignore_eos":true},` +
		`"stream":true,"stream_options":{"include_usage":true}}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Post(srv+"/inference/v1/generate", "application/json", strings.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if n < 256*100 {
				b.Errorf("short stream: %d bytes", n)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N*256)/b.Elapsed().Seconds(), "tokens/s")
}
