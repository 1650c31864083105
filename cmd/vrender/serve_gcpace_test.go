package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/gcpace"
	"github.com/vrender/vrender/internal/testenv"
)

// TestServeImageCacheGCHeadroom: serve paces the collector by the heap
// outside its processed-image cache: once a 1280x720 image (2.8 MB of
// resized pixels) is cached, a collection lowers the GC percent below GOGC's 100
// (the headroom floor set to 1 byte so that the ratio shows); with -1 the
// percent stays Go's. Shutting down restores it.
func TestServeImageCacheGCHeadroom(t *testing.T) {
	mm := filepath.Join(testenv.SharedDir(t), "multimodal")
	img, err := os.ReadFile(filepath.Join(mm, "images", "jpeg_444_1280x720.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(map[string]any{"model": "qwen-vl", "messages": []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(img)}},
		map[string]any{"type": "text", "text": "Describe."},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		headroom string
		paced    bool
	}{{"1", true}, {"-1", false}} {
		t.Run(c.headroom, func(t *testing.T) {
			if p := gcpace.Current(); p != 100 {
				t.Fatalf("GC percent %d before serve, want 100", p)
			}
			addr, _, stop := startServe(t, "--host", "127.0.0.1", "--port", "0", "--served-model-name", "qwen-vl",
				"--image-cache-gc-headroom", c.headroom, filepath.Join(mm, "models", "qwen2_5_vl"))
			resp, err := http.Post("http://"+addr+"/v1/chat/completions/render", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			_, err = buf.ReadFrom(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("render: %v %d %.300s", err, resp.StatusCode, buf.String())
			}
			buf = bytes.Buffer{}
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && (gcpace.Current() < 100) != c.paced; {
				runtime.GC()
				time.Sleep(5 * time.Millisecond)
			}
			if p := gcpace.Current(); (p < 100) != c.paced {
				t.Fatalf("GC percent %d with the image cached and --image-cache-gc-headroom %s", p, c.headroom)
			}
			stop()
			if p := gcpace.Current(); p != 100 {
				t.Fatalf("GC percent %d after shutdown, want 100", p)
			}
		})
	}
}
