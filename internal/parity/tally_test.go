package parity

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// fakeTB is a testing.TB that records its outcome: Skip and Fatal stop the
// calling goroutine as the real ones do, so failure paths can be observed
// without failing this test.
type fakeTB struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (f *fakeTB) Helper()                   {}
func (f *fakeTB) Failed() bool              { return f.failed }
func (f *fakeTB) Skipped() bool             { return f.skipped }
func (f *fakeTB) Logf(string, ...any)       {}
func (f *fakeTB) Skip(args ...any)          { f.skipped, f.msg = true, fmt.Sprint(args...); runtime.Goexit() }
func (f *fakeTB) Fatal(args ...any)         { f.failed, f.msg = true, fmt.Sprint(args...); runtime.Goexit() }
func (f *fakeTB) Fatalf(s string, a ...any) { f.Fatal(fmt.Sprintf(s, a...)) }

// run calls fn with a fakeTB on its own goroutine and returns what happened.
func run(fn func(tb testing.TB)) *fakeTB {
	f := &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

func TestTallyCountsSkipsAsSkips(t *testing.T) {
	tl := NewTally([]string{"a.jsonl"})
	for _, f := range []*fakeTB{{}, {skipped: true}, {skipped: true}, {failed: true}} {
		tl.Record("a.jsonl", f)
	}
	if c := tl.counts["a.jsonl"]; c.pass != 1 || c.skip != 2 || c.fail != 1 {
		t.Fatalf("pass/skip/fail = %d/%d/%d, want 1/2/1", c.pass, c.skip, c.fail)
	}
}

// TestFixtureGatingBothWays runs the suite's gating with CI unset and
// CI=true: an all-skipped tally and an unregistered parser skip loudly
// locally and fail in CI; a tally with one case run passes either way.
func TestFixtureGatingBothWays(t *testing.T) {
	has := func(name string) bool { return name == "known" }
	allSkipped := func(tb testing.TB) {
		tl := NewTally([]string{"a.jsonl"})
		tl.Record("a.jsonl", &fakeTB{skipped: true})
		tl.Log(tb)
	}
	oneRan := func(tb testing.TB) {
		tl := NewTally([]string{"a.jsonl", "b.jsonl"})
		tl.Record("a.jsonl", &fakeTB{skipped: true})
		tl.Record("b.jsonl", &fakeTB{})
		tl.Log(tb)
	}
	cases := []struct {
		name string
		fn   func(tb testing.TB)
		gate bool // whether the call must skip (locally) or fail (CI)
		msg  string
	}{
		{"all skipped", allSkipped, true, "every golden case was skipped"},
		{"one ran", oneRan, false, ""},
		{"tool parser not registered", func(tb testing.TB) { RequireParsers(tb, "known", "gone", has, has) }, true, `tool parser "gone"`},
		{"reasoning parser not registered", func(tb testing.TB) { RequireParsers(tb, "gone", "", has, has) }, true, `reasoning parser "gone"`},
		{"both registered", func(tb testing.TB) { RequireParsers(tb, "known", "known", has, has) }, false, ""},
	}
	for _, tc := range cases {
		for _, ci := range []string{"", "true"} {
			t.Run(tc.name+"/CI="+ci, func(t *testing.T) {
				t.Setenv("CI", ci)
				f := run(tc.fn)
				wantFail, wantSkip := tc.gate && ci == "true", tc.gate && ci != "true"
				if f.failed != wantFail || f.skipped != wantSkip {
					t.Fatalf("failed=%v skipped=%v, want failed=%v skipped=%v", f.failed, f.skipped, wantFail, wantSkip)
				}
				if tc.gate && (!strings.Contains(f.msg, tc.msg) || !strings.Contains(f.msg, "MISSING TEST FIXTURE")) {
					t.Fatalf("message %q does not name %q loudly", f.msg, tc.msg)
				}
			})
		}
	}
}
