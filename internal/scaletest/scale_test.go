package scaletest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/tokenizer"
)

const stateKey = "5ca1ab1e5ca1ab1e5ca1ab1e5ca1ab1e"

var (
	serveAddrRE = regexp.MustCompile(`msg=serving addr=(\S+)`)
	simAddrRE   = regexp.MustCompile(`msg="simulated engine serving" addr=(\S+)`)
)

// derenderOutputs are the engine outputs the derender streams carry: a
// reasoning block then a hermes tool call, plain reasoning and an answer
// with multi-byte characters, and a longer answer.
var derenderOutputs = []string{
	"<think>\nThe user asks about the weather in Paris, so I should call the tool.\n</think>\n\n" +
		"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n</tool_call>",
	"<think>\nSimple arithmetic: two plus two.\n</think>\n\nTwo plus two is four. 🎉 Ünïcödé works too: 東京, naïve café.",
	"<think>\nA longer answer helps the checkpoint tail.\n</think>\n\n" +
		strings.Repeat("Replicas share one state key, so any of them can resume the stream. ", 6),
}

const derenderChatRequest = `{"model":"q","stream":true,"messages":[{"role":"user","content":"What is the weather in Paris?"}],` +
	`"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather",` +
	`"parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string"}},"required":["city"]}}}],` +
	`"tool_choice":"auto"}`

// chatPrompts are the orchestrated chat streams' prompts.
var chatPrompts = []string{"What is 2+2?", "Name a prime number.", "Say hello to the cluster.", "Why is the sky blue?"}

// TestHorizontalScale starts three vrender replicas with one --state-key
// and one engine-sim behind haproxy (round-robin, no affinity), runs
// concurrent streaming derender calls and orchestrated chat streams,
// SIGKILLs a replica mid-run, and checks that every stream completed exactly
// as on a single replica or failed cleanly (an error status, an error event
// then [DONE], or the connection closing before [DONE]) after delivering a
// prefix of the reference output: never corrupted or duplicated deltas.
// Streams started after the kill must all complete identically.
func TestHorizontalScale(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes and a load balancer; skipped with -short")
	}
	haproxy := haproxyPath(t)
	modelDir := testenv.ModelDir(t, "qwen3")
	tok, err := tokenizer.Load(filepath.Join(modelDir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	bin := buildVrender(t, dir)
	t.Logf("built vrender in %s", time.Since(began).Round(time.Millisecond))

	// One engine for all replicas, slow enough (15 ms a token) that chat
	// streams are in flight when the replica dies.
	sim := start(t, dir, "engine-sim", bin, "engine-sim", modelDir, "--host", "127.0.0.1", "--port", "0",
		"--served-model-name", "q", "--token-latency", "15ms")
	simAddr := sim.waitLog(t, simAddrRE, 30*time.Second)
	var replicas []*proc
	var addrs []string
	for i := range 3 {
		p := start(t, dir, fmt.Sprintf("replica%d", i), bin, "serve", modelDir, "--host", "127.0.0.1", "--port", "0",
			"--served-model-name", "q", "--state-key", stateKey, "--engine", "http://"+simAddr,
			"--reasoning-parser", "qwen3", "--tool-call-parser", "hermes", "--enable-auto-tool-choice")
		replicas = append(replicas, p)
	}
	for _, p := range replicas {
		addrs = append(addrs, p.waitLog(t, serveAddrRE, 30*time.Second))
	}
	port := freePort(t)
	cfg := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(haproxyConfig(port, addrs)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runCmd(haproxy, "-c", "-f", cfg); err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
	start(t, dir, "haproxy", haproxy, "-db", "-f", cfg)
	lb := "http://127.0.0.1:" + strconv.Itoa(port)
	waitHealthy(ctx, t, lb+"/health")
	t.Logf("3 replicas %v, engine-sim %s, haproxy %s up after %s", addrs, simAddr, lb, time.Since(began).Round(time.Millisecond))

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	direct := "http://" + addrs[0]

	// The derender scenarios: the prompt as a replica renders it, the
	// outputs tokenized and cut into 1-4 token chunks.
	prompt := renderPrompt(ctx, t, client, direct)
	var scenarios []*derenderScenario
	for _, text := range derenderOutputs {
		ids := tok.Encode(text, false)
		sc := &derenderScenario{chatRequest: json.RawMessage(derenderChatRequest), prompt: prompt}
		for i, n := 0, 0; i < len(ids); n++ {
			size := min([]int{1, 2, 3, 1, 4}[n%5], len(ids)-i)
			sc.chunks = append(sc.chunks, ids[i:i+size])
			i += size
		}
		scenarios = append(scenarios, sc)
	}

	// Single-replica references, straight to replica 0.
	chatRef := make([][]string, len(chatPrompts))
	for i, p := range chatPrompts {
		r := chatStream(ctx, client, direct, p)
		if r.outcome != outComplete || len(r.deltas) == 0 {
			t.Fatalf("reference chat stream %q: %s %s", p, r.outcome, r.detail)
		}
		chatRef[i] = r.deltas
	}
	derRef := make([][]string, len(scenarios))
	for i, sc := range scenarios {
		r := derenderStream(ctx, client, direct, sc, fmt.Sprintf("gen-ref-%d", i), nil)
		if r.outcome != outComplete || len(r.deltas) == 0 {
			t.Fatalf("reference derender stream %d: %s %s", i, r.outcome, r.detail)
		}
		derRef[i] = r.deltas
	}
	if !strings.Contains(strings.Join(derRef[0], ""), `"name":"get_weather"`) {
		t.Fatalf("the tool-call scenario parsed no tool call: %v", derRef[0])
	}

	run := func(wave string, nChat, nDerender int, stagger time.Duration, kill func() time.Time) (map[string]int, map[string]int, int) {
		counts, failures := map[string]int{}, map[string]int{}
		var mu sync.Mutex
		var killedAt time.Time
		type span struct{ start, end time.Time }
		var chatSpans []span
		var wg sync.WaitGroup
		record := func(what string, r streamResult, ref []string) {
			verdict := judge(r, ref)
			mu.Lock()
			defer mu.Unlock()
			counts[what+" "+verdict]++
			if r.retries > 0 {
				counts[what+" call retries"] += r.retries
			}
			if verdict == "clean failure" {
				if failures[what+": "+r.outcome] == 0 {
					t.Logf("%s %s clean failure, e.g. %s after %d deltas: %.200s", wave, what, r.outcome, len(r.deltas), r.detail)
				}
				failures[what+": "+r.outcome]++
			}
			if verdict == "corrupt" {
				t.Errorf("%s %s stream corrupt (%s: %s): %s", wave, what, r.outcome, r.detail, firstDiff(r.deltas, ref))
			}
		}
		for i := range nChat {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(i) * stagger)
				s := time.Now()
				r := chatStream(ctx, client, lb, chatPrompts[i%len(chatPrompts)])
				mu.Lock()
				chatSpans = append(chatSpans, span{s, time.Now()})
				mu.Unlock()
				record("chat", r, chatRef[i%len(chatPrompts)])
			}()
		}
		for i := range nDerender {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(i) * stagger)
				k := i % len(scenarios)
				r := derenderStream(ctx, client, lb, scenarios[k], fmt.Sprintf("gen-%s-%d", wave, i),
					func() { time.Sleep(5 * time.Millisecond) })
				record("derender", r, derRef[k])
			}()
		}
		if kill != nil {
			killedAt = kill()
		}
		wg.Wait()
		inFlight := 0
		for _, s := range chatSpans {
			if !killedAt.IsZero() && s.start.Before(killedAt) && s.end.After(killedAt) {
				inFlight++
			}
		}
		return counts, failures, inFlight
	}

	// Wave 1: 24 chat and 24 derender streams started over 480 ms; replica
	// 1 is killed 300 ms in.
	w1start := time.Now()
	counts, failures, inFlight := run("w1", 24, 24, 20*time.Millisecond, func() time.Time {
		time.Sleep(300 * time.Millisecond)
		replicas[1].kill(t)
		return time.Now()
	})
	t.Logf("wave 1 (replica 1 SIGKILLed mid-run, %d chat streams in flight at the kill) in %s: %v; clean failures by kind: %v",
		inFlight, time.Since(w1start).Round(time.Millisecond), counts, failures)
	if inFlight == 0 {
		t.Errorf("no chat stream was in flight when the replica died: the test proved nothing")
	}
	if counts["chat identical"]+counts["derender identical"] == 0 {
		t.Errorf("no stream completed: %v", counts)
	}

	// Wave 2, after haproxy's health checks took the dead replica out:
	// every stream must complete identically on the two survivors.
	time.Sleep(time.Second)
	counts2, failures2, _ := run("w2", 8, 8, 10*time.Millisecond, nil)
	t.Logf("wave 2 (two replicas left): %v %v", counts2, failures2)
	if counts2["chat identical"] != 8 || counts2["derender identical"] != 8 {
		t.Errorf("after the kill, streams failed: %v %v", counts2, failures2)
	}
	total := map[string]int{}
	for _, m := range []map[string]int{counts, counts2} {
		for k, v := range m {
			total[k] += v
		}
	}
	t.Logf("SCALE RESULT: completed identical %d (chat %d, derender %d), clean failures %d, corrupt %d; total %s",
		total["chat identical"]+total["derender identical"], total["chat identical"], total["derender identical"],
		total["chat clean failure"]+total["derender clean failure"], total["chat corrupt"]+total["derender corrupt"],
		time.Since(began).Round(time.Millisecond))
}

// renderPrompt renders the derender scenarios' chat request on a replica:
// a parsed stream needs the full prompt on every call.
func renderPrompt(ctx context.Context, t *testing.T, client *http.Client, base string) []int {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions/render",
		strings.NewReader(derenderChatRequest))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var g struct {
		TokenIDs []int `json:"token_ids"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&g); err != nil || resp.StatusCode != http.StatusOK || len(g.TokenIDs) == 0 {
		t.Fatalf("render: %d %v", resp.StatusCode, err)
	}
	return g.TokenIDs
}
