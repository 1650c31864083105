package enginesim

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vrender/vrender/features"
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

// BenchmarkAcceptImage is the sim's cost for one generate request carrying
// a Qwen image's kwargs as vrender renders it (224x224: a 16x16 grid; 448x448:
// 32x32), one output token, no latency: reading the body, the features
// check, the answer. The prefix-routing benchmark's engines pay it for every
// turn, since every turn re-sends the picture.
func BenchmarkAcceptImage(b *testing.B) {
	for _, side := range []int64{16, 32} {
		b.Run(fmt.Sprintf("%dx%d", side*14, side*14), func(b *testing.B) {
			sim, err := New(testmodel.Load(b, "qwen3"), Config{ServedModelName: "qwen3"})
			if err != nil {
				b.Fatal(err)
			}
			n := int(side * side / 4)
			f := qwenFeatures(b, []string{"4f0c1d2e3f4a5b6c7d8e9f00112233445566778899aabbccddeeff0011223344"},
				[][3]int64{{1, side, side}}, []int{3}, features.Options{Kwargs: true})
			body := `{"token_ids":` + tokenList(n+600, 100) + `,"sampling_params":{"max_tokens":1},"features":` + f + `}`
			h := sim.Handler()
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/inference/v1/generate", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
