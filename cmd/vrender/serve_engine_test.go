package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/internal/testenv"
)

// parseEngineFlags parses serve's engine flags alone.
func parseEngineFlags(t *testing.T, args ...string) *engineFlags {
	t.Helper()
	c := newCommand("serve", "", "")
	var f engineFlags
	f.register(c)
	if _, err := c.parse(args, io.Discard); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	return &f
}

func TestEnginePlan(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "engines.yaml")
	if err := os.WriteFile(cfg, []byte("pools:\n  prefill: [http://p:1]\n  decode: [http://d:1, http://d:2]\n"+
		"health:\n  interval: 1s\n  eject_after: 7\napi_key: from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("pools:\n  collocated: [http://a:1]\nhealth:\n  ejectafter: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := parseEngineFlags(t, "--engine-config", cfg, "--engine-health-interval", "250ms").plan()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.prefill) != 1 || len(p.decode) != 2 || p.apiKey != "from-file" ||
		p.health.Interval != 250*time.Millisecond || p.health.EjectAfter != 7 || p.health.Timeout != 2*time.Second {
		t.Fatalf("plan %+v: want the file's pools and eject_after, the flag's interval", p)
	}
	p, err = parseEngineFlags(t, "--prefill-engine", "http://p:1", "--decode-engine", "http://d:1", "http://d:2").plan()
	if err != nil || len(p.prefill) != 1 || len(p.decode) != 2 || p.health.EjectAfter != 3 {
		t.Fatalf("plan %+v %v", p, err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"mixed", []string{"--engine", "http://a:1", "--prefill-engine", "http://p:1", "--decode-engine", "http://d:1"}, "exclusive"},
		{"prefill only", []string{"--prefill-engine", "http://p:1"}, "needs both"},
		{"file and flags", []string{"--engine-config", cfg, "--engine", "http://a:1"}, "not both"},
		{"strict file", []string{"--engine-config", bad}, "field ejectafter not found"},
		{"zero eject", []string{"--engine", "http://a:1", "--engine-eject-after", "0"}, "must not be 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseEngineFlags(t, tc.args...).plan()
			var usage usageError
			if !errors.As(err, &usage) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a usage error with %q", err, tc.want)
			}
		})
	}
}

func TestEngineSimKVRoleFlag(t *testing.T) {
	dir := testenv.ModelDir(t, "qwen3")
	err := runEngineSim(context.Background(), []string{"--model", dir, "--kv-role", "prefill"}, io.Discard, io.Discard)
	var usage usageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "unknown kv role") {
		t.Fatalf("error %v, want a usage error for the kv role", err)
	}
}

// TestServePDSim serves chat through an in-process producer and consumer
// and checks the answer is the collocated one.
func TestServePDSim(t *testing.T) {
	qwen := testenv.ModelDir(t, "qwen3")
	body := `{"model":"qwen","messages":[{"role":"user","content":"Say hi"}],"max_tokens":40,"seed":1}`
	answers := map[string]string{}
	for name, args := range map[string][]string{
		"collocated": {"--engine", "sim"},
		"pd":         {"--prefill-engine", "sim", "--decode-engine", "sim"},
	} {
		addr, logs, stop := startServe(t, append([]string{"--host", "127.0.0.1", "--port", "0", "--served-model-name", "qwen",
			"--reasoning-parser", "qwen3", "--engine-health-interval", "50ms", qwen}, args...)...)
		resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", name, resp.StatusCode, out)
		}
		i := bytes.Index(out, []byte(`"choices"`))
		answers[name] = string(out[i:])
		stop()
		if name == "pd" && !strings.Contains(logs.String(), "kind=prefill/decode") {
			t.Fatalf("no P/D pool in the log:\n%s", logs)
		}
	}
	if answers["pd"] != answers["collocated"] {
		t.Fatalf("P/D answer %s\ndiffers from collocated %s", answers["pd"], answers["collocated"])
	}
}

// TestServeSimPrefixCache: serve's in-process engines take engine-sim's
// prefix-cache flags (--sim-*), publish KV events on loopback ports the
// prefix router follows by itself, and have their queue gauges scraped
// (--engine-metrics-interval) onto vrender's /metrics.
func TestServeSimPrefixCache(t *testing.T) {
	qwen := testenv.ModelDir(t, "qwen3")
	addr, logs, stop := startServe(t, "--host", "127.0.0.1", "--port", "0", "--served-model-name", "qwen",
		"--engine", "sim", "--engine", "sim", "--routing", "prefix", "--engine-metrics-interval", "50ms",
		"--sim-num-gpu-blocks-override", "512", "--sim-prefill-token-latency", "1us", "--sim-enable-prompt-tokens-details",
		"--sim-kv-events-config", `{"enable_kv_cache_events":true}`, qwen)
	defer stop()
	body := `{"model":"qwen","max_tokens":4,"messages":[{"role":"user","content":"` + strings.Repeat("Tell me about Lyon. ", 40) + `"}]}`
	metric := func(name string) string {
		t.Helper()
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for line := range strings.SplitSeq(string(out), "\n") {
			if strings.HasPrefix(line, name+" ") || strings.HasPrefix(line, name+"{") {
				return line
			}
		}
		return ""
	}
	chat := func() {
		t.Helper()
		resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("chat: %d", resp.StatusCode)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		chat()
		ev, queue := metric("vrender_routing_kv_event_batches_total"), metric("vrender_engine_queue_waiting_requests")
		if ev != "" && !strings.HasSuffix(ev, " 0") && queue != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no KV event batches applied (%q) or no scraped queue (%q); logs:\n%s", ev, queue, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	chat()
	if m := metric("vrender_routing_matched_blocks_total"); m == "" || strings.HasSuffix(m, " 0") {
		t.Errorf("repeated prompts matched no blocks: %q", m)
	}
}

func TestServeSimFlagsNeedSim(t *testing.T) {
	f := engineFlags{engines: stringList{"http://127.0.0.1:1"}, healthInterval: setDuration{v: time.Second},
		healthTimeout: setDuration{v: time.Second}, ejectAfter: setInt{v: 3}, simLogprobsShape: enginesim.LogprobsShapeOpenAI}
	f.simCache.prefix, f.simCache.blockSize, f.simCache.cacheBlocks = "sim-", 16, 64
	_, _, err := f.orchestrator(context.Background(), nil, nil, nil, nil, "m", quietTestLog())
	if err == nil || !strings.Contains(err.Error(), "need --engine sim") {
		t.Errorf("--sim-num-gpu-blocks-override without a simulated engine: %v", err)
	}
}
