package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB whose Skip and Fatal record the outcome and stop
// the calling goroutine, as the real ones do, so the helpers' failure paths
// can be observed without failing this test.
type recorder struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recorder) Helper() {}

func (r *recorder) Skip(args ...any) {
	r.skipped, r.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) {
	r.failed, r.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}

// run calls fn with a recorder on its own goroutine and reports what happened.
func run(t *testing.T, fn func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	return r
}

func TestRepoRootHoldsGoMod(t *testing.T) {
	root := RepoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatalf("RepoRoot %q has no readable go.mod: %v", root, err)
	}
	if !strings.Contains(string(data), "module github.com/vrender/vrender") {
		t.Fatalf("go.mod at %q is not vrender's", root)
	}
}

func TestMissingFixture(t *testing.T) {
	cases := []struct {
		name     string
		ci       string
		call     func(tb testing.TB)
		wantFail bool
		wantMsg  string
	}{
		{"model skips locally", "", func(tb testing.TB) { ModelDir(tb, "no-such-model") }, false, "make models"},
		{"model fails in CI", "true", func(tb testing.TB) { ModelDir(tb, "no-such-model") }, true, "make models"},
		{"program skips locally", "false", func(tb testing.TB) { program(tb, "no-such-binary-vrender", "hint") }, false, "no-such-binary-vrender"},
		{"program fails in CI", "true", func(tb testing.TB) { program(tb, "no-such-binary-vrender", "hint") }, true, "no-such-binary-vrender"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			r := run(t, tc.call)
			if r.failed != tc.wantFail || r.skipped == tc.wantFail {
				t.Fatalf("skipped=%v failed=%v, want failed=%v", r.skipped, r.failed, tc.wantFail)
			}
			if !strings.Contains(r.msg, tc.wantMsg) || !strings.Contains(r.msg, "MISSING TEST FIXTURE") {
				t.Fatalf("message %q does not name %q loudly", r.msg, tc.wantMsg)
			}
		})
	}
}

func TestPresentFixture(t *testing.T) {
	// SharedDir must accept ../shared exactly when it exists; the helper
	// looks only beside RepoRoot, so compare against the real filesystem
	// rather than creating fixtures there.
	r := run(t, func(tb testing.TB) { SharedDir(tb) })
	want := filepath.Join(filepath.Dir(RepoRoot(t)), "shared")
	if isDir(want) && (r.skipped || r.failed) {
		t.Fatalf("SharedDir skipped although %s exists: %s", want, r.msg)
	}
	if !isDir(want) && !r.skipped && !r.failed {
		t.Fatalf("SharedDir accepted missing %s", want)
	}
}

func TestFirstDiff(t *testing.T) {
	cases := []struct {
		name string
		a, b string
		want int
	}{
		{"equal", "abc", "abc", 3},
		{"both empty", "", "", 0},
		{"differ first", "xbc", "abc", 0},
		{"differ middle", "abxd", "abyd", 2},
		{"a prefix of b", "ab", "abc", 2},
		{"b prefix of a", "abc", "a", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := FirstDiff([]byte(c.a), []byte(c.b)); got != c.want {
				t.Errorf("FirstDiff(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
			}
		})
	}
}

func TestMustJSON(t *testing.T) {
	if got := MustJSON(t, map[string]any{"b": []int{1}, "a": "x"}); got != `{"a":"x","b":[1]}` {
		t.Errorf("MustJSON = %s", got)
	}
	if r := run(t, func(tb testing.TB) { MustJSON(tb, func() {}) }); !r.failed {
		t.Error("MustJSON of a func did not fail the test")
	}
}

func TestCPUTimeAdvances(t *testing.T) {
	start, deadline := CPUTime(t), time.Now().Add(5*time.Second)
	for CPUTime(t) == start { // each read is a syscall, so spinning on it burns CPU
		if time.Now().After(deadline) {
			t.Fatal("process CPU time did not advance in 5s of spinning")
		}
	}
}
