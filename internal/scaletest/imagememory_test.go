package scaletest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/internal/testenv"
)

// imageBudget is the --image-memory-budget of TestImageMemoryBounded: two
// requests of four 1080p images at a time (each costed ~59 MB since the
// cache keeps resized pixels and answers stream: the file, the decoded and
// the resized pixels and one write buffer per image), so that of 8 sent at
// once most wait.
const imageBudget = 128 << 20

// TestImageMemoryBounded sends 8 concurrent render requests of four 1080p
// JPEGs each (file: URLs) to a real `vrender serve` process with a 128 MiB
// image memory budget, and checks that its peak RSS (VmHWM) grew by no
// more than twice the budget (what the budget holds live, and as much
// again of garbage before a collection at GOGC=100), that requests queued
// for it (the waiting gauge, the wait histogram) and that everything is
// returned at the end.
func TestImageMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process and renders 32 1080p images; skipped with -short")
	}
	shared := filepath.Join(testenv.SharedDir(t), "multimodal")
	modelDir := filepath.Join(shared, "models", "qwen2_5_vl")
	images := filepath.Join(shared, "images")
	if _, err := os.Stat(filepath.Join(images, "jpeg_420_1920x1080.jpg")); err != nil {
		testenv.Missing(t, shared, "the multimodal fixtures of ../shared")
	}
	dir := t.TempDir()
	bin := buildVrender(t, dir)
	p := start(t, dir, "serve", bin, "serve", modelDir, "--served-model-name", "m", "--host", "127.0.0.1", "--port", "0",
		"--allowed-local-media-path", images, "--image-memory-budget", strconv.Itoa(imageBudget))
	base := "http://" + p.waitLog(t, serveAddrRE, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	waitHealthy(ctx, t, base+"/health")
	idle := vmHWM(t, p.cmd.Process.Pid)

	url := "file://" + filepath.Join(images, "jpeg_420_1920x1080.jpg")
	var parts []map[string]any
	for range 4 {
		parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": url}})
	}
	parts = append(parts, map[string]any{"type": "text", "text": "Compare the four pictures."})
	body, err := json.Marshal(map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": parts}}})
	if err != nil {
		t.Fatal(err)
	}

	var (
		wg         sync.WaitGroup
		mu         sync.Mutex
		maxWaiting float64
	)
	done := make(chan struct{})
	go func() { // the queue, seen from outside
		for {
			if w, ok := scrape(ctx, base, "vrender_image_budget_waiting_requests"); ok {
				mu.Lock()
				maxWaiting = max(maxWaiting, w)
				mu.Unlock()
			}
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	for i := range 8 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions/render", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			defer resp.Body.Close()
			n, _ := io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != http.StatusOK || n < 100<<20 {
				t.Errorf("request %d: status %d, %d bytes", i, resp.StatusCode, n)
			}
		})
	}
	wg.Wait()
	close(done)
	peak := vmHWM(t, p.cmd.Process.Pid)
	t.Logf("VmHWM idle %d MiB, after 8 x four 1080p images %d MiB (+%d MiB; budget %d MiB); most requests waiting at once: %g",
		idle>>20, peak>>20, (peak-idle)>>20, imageBudget>>20, maxWaiting)
	if peak-idle > 2*imageBudget {
		t.Errorf("peak RSS grew by %d MiB, more than twice the %d MiB budget", (peak-idle)>>20, imageBudget>>20)
	}
	if maxWaiting < 1 {
		t.Error("no request was ever seen waiting for the budget")
	}
	for name, want := range map[string]float64{"vrender_image_budget_in_use_bytes": 0, "vrender_image_budget_waiting_requests": 0,
		"vrender_image_budget_wait_seconds_count": 8} {
		if got, ok := scrape(ctx, base, name); !ok || got != want {
			t.Errorf("%s = %g (found %v), want %g", name, got, ok, want)
		}
	}
}

// vmHWM is a process's peak resident set size in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc status to read VmHWM from: %v", err)
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM line %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// scrape reads one unlabelled sample from the server's /metrics.
func scrape(ctx context.Context, base, name string) (float64, bool) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	fams, err := telemetry.ParseText(resp.Body)
	if err != nil {
		return 0, false
	}
	return telemetry.Value(fams, name, nil)
}
