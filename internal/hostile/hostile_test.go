package hostile

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

var show = flag.Bool("hostile.show", false, "log every case's answer")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// Budgets for the whole corpus run, measured after a GC on both sides.
const (
	// heapSlack covers the caches the corpus legitimately fills (decoded
	// chat requests, live derender states, compiled request templates).
	heapSlack = 32 << 20
	// goroutineSettle is how long the goroutine count may take to return
	// to its baseline once the last answer was read.
	goroutineSettle = 5 * time.Second
)

// minCorpus is issue 8's floor.
const minCorpus = 200

func TestCorpus(t *testing.T) {
	cases, err := LoadCorpus(filepath.Join("testdata", "hostile"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < minCorpus {
		t.Errorf("corpus holds %d cases, want at least %d", len(cases), minCorpus)
	}
	e := newEnv(t)
	ctx := t.Context()
	gens := Generators()
	cps, err := e.checkpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(gens, cps)

	// Warm up: the first requests build what later ones reuse (templates,
	// tokenizer caches, connections to the engine).
	for _, c := range cases[:min(len(cases), 20)] {
		r, err := Expand(&c, gens)
		if err != nil {
			t.Fatalf("%s: %v", c.Where(), err)
		}
		if _, err := e.do(ctx, c.Server, c.Method, c.Path, c.ContentType, r); err != nil {
			t.Fatalf("%s: warm-up: %v", c.Where(), err)
		}
	}
	heap0, g0 := settle()

	tally := map[string]map[int]int{}
	start := time.Now()
	for i := range cases {
		c := &cases[i]
		a, err := e.run(ctx, c, gens)
		if err != nil {
			t.Errorf("%s: %v", c.Where(), err)
			continue
		}
		if tally[c.Path] == nil {
			tally[c.Path] = map[int]int{}
		}
		tally[c.Path][a.status]++
		if *show {
			t.Logf("%s: %d %.300s", c.Where(), a.status, a.body)
		}
		switch err := c.verify(a); {
		case err != nil && c.Known != "":
			t.Logf("%s: known bug (%s): %v", c.Where(), c.Known, err)
		case err != nil:
			t.Errorf("%s: %v", c.Where(), err)
		case c.Known != "":
			t.Errorf("%s: passes now; remove its \"known\" note (%s)", c.Where(), c.Known)
		}
		if err := e.alive(ctx, c.Server); err != nil {
			t.Fatalf("%s: server down after the request: %v", c.Where(), err)
		}
	}
	elapsed := time.Since(start)

	heap1, g1 := settle()
	deadline := time.Now().Add(goroutineSettle)
	for g1 > g0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		_, g1 = settle()
	}
	t.Logf("corpus: %d cases in %v", len(cases), elapsed.Round(time.Millisecond))
	t.Logf("heap in use after GC: %.1f MiB before, %.1f MiB after (%+.1f MiB); goroutines: %d before, %d after",
		mib(heap0), mib(heap1), mib(heap1)-mib(heap0), g0, g1)
	for _, line := range tallyLines(tally) {
		t.Log(line)
	}
	if heap1 > heap0+heapSlack {
		t.Errorf("heap in use grew from %.1f to %.1f MiB over the corpus (budget %.0f MiB)",
			mib(heap0), mib(heap1), mib(heapSlack))
	}
	if g1 > g0 {
		t.Errorf("goroutines: %d after the corpus, %d before", g1, g0)
	}
}

// run sends one case, bounded so that a hung request fails the test
// instead of stalling it.
func (e *env) run(ctx context.Context, c *Case, gens map[string]Generator) (*answer, error) {
	r, err := Expand(c, gens)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return e.do(ctx, c.Server, c.Method, c.Path, c.ContentType, r)
}

// verify checks an answer against the case: its status, and vLLM's error
// body {"error":{"message","type","param","code"}} with the expected type.
func (c *Case) verify(a *answer) error {
	if a.status >= 500 {
		return fmt.Errorf("server error %d: %.300s", a.status, a.body)
	}
	if a.status != c.Status {
		return fmt.Errorf("status %d, want %d: %.300s", a.status, c.Status, a.body)
	}
	if mt, _, _ := strings.Cut(a.contentType, ";"); mt != "application/json" {
		return fmt.Errorf("Content-Type %q, want application/json", a.contentType)
	}
	var body map[string]map[string]json.RawMessage
	if err := json.Unmarshal(a.body, &body); err != nil || len(body) != 1 || body["error"] == nil {
		return fmt.Errorf("not an OpenAI error body: %.300s", a.body)
	}
	info := body["error"]
	for _, k := range []string{"message", "type", "param", "code"} {
		if _, ok := info[k]; !ok {
			return fmt.Errorf("error body lacks %q: %.300s", k, a.body)
		}
	}
	var (
		msg, typ string
		code     int
	)
	if json.Unmarshal(info["message"], &msg) != nil || json.Unmarshal(info["type"], &typ) != nil ||
		json.Unmarshal(info["code"], &code) != nil {
		return fmt.Errorf("error body fields have the wrong types: %.300s", a.body)
	}
	if code != a.status {
		return fmt.Errorf("error code %d, status %d", code, a.status)
	}
	if typ != c.Type {
		return fmt.Errorf("error type %q, want %q: %.300s", typ, c.Type, a.body)
	}
	if c.Message != "" && !strings.Contains(msg, c.Message) {
		return fmt.Errorf("error message %q does not contain %q", msg, c.Message)
	}
	return nil
}

// settle collects garbage and returns the heap in use and the goroutine
// count.
func settle() (heapInuse uint64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse, runtime.NumGoroutine()
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// tallyLines renders the answers by path and status, for the log.
func tallyLines(tally map[string]map[int]int) []string {
	var lines []string
	for _, path := range slices.Sorted(maps.Keys(tally)) {
		var parts []string
		total := 0
		for _, st := range slices.Sorted(maps.Keys(tally[path])) {
			parts = append(parts, fmt.Sprintf("%d×%d", tally[path][st], st))
			total += tally[path][st]
		}
		lines = append(lines, fmt.Sprintf("%-32s %3d: %s", path, total, strings.Join(parts, " ")))
	}
	return lines
}
