package main

import (
	"strings"
	"testing"
)

// The streams are `go test -json` of a small package (times removed).
const (
	mixedStream = `{"Action":"start","Package":"tj"}
{"Action":"run","Package":"tj","Test":"TestA"}
{"Action":"output","Package":"tj","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"tj","Test":"TestA","Output":"--- PASS: TestA (0.01s)\n"}
{"Action":"pass","Package":"tj","Test":"TestA"}
{"Action":"run","Package":"tj","Test":"TestSkip"}
{"Action":"output","Package":"tj","Test":"TestSkip","Output":"=== RUN   TestSkip\n"}
{"Action":"output","Package":"tj","Test":"TestSkip","Output":"    a_test.go:4: \n"}
{"Action":"output","Package":"tj","Test":"TestSkip","Output":"        ****\n"}
{"Action":"output","Package":"tj","Test":"TestSkip","Output":"        *** MISSING TEST FIXTURE: /x/y\n"}
{"Action":"output","Package":"tj","Test":"TestSkip","Output":"        *** run make models\n"}
{"Action":"output","Package":"tj","Test":"TestSkip","Output":"        ****\n"}
{"Action":"output","Package":"tj","Test":"TestSkip","Output":"--- SKIP: TestSkip (0.01s)\n"}
{"Action":"skip","Package":"tj","Test":"TestSkip"}
{"Action":"run","Package":"tj","Test":"TestSub"}
{"Action":"output","Package":"tj","Test":"TestSub","Output":"=== RUN   TestSub\n"}
{"Action":"run","Package":"tj","Test":"TestSub/one"}
{"Action":"output","Package":"tj","Test":"TestSub/one","Output":"=== RUN   TestSub/one\n"}
{"Action":"output","Package":"tj","Test":"TestSub/one","Output":"    a_test.go:5: plain reason\n"}
{"Action":"output","Package":"tj","Test":"TestSub/one","Output":"--- SKIP: TestSub/one (0.01s)\n"}
{"Action":"skip","Package":"tj","Test":"TestSub/one"}
{"Action":"run","Package":"tj","Test":"TestSub/two"}
{"Action":"output","Package":"tj","Test":"TestSub/two","Output":"=== RUN   TestSub/two\n"}
{"Action":"output","Package":"tj","Test":"TestSub/two","Output":"--- PASS: TestSub/two (0.01s)\n"}
{"Action":"pass","Package":"tj","Test":"TestSub/two"}
{"Action":"output","Package":"tj","Test":"TestSub","Output":"--- PASS: TestSub (0.01s)\n"}
{"Action":"pass","Package":"tj","Test":"TestSub"}
{"Action":"run","Package":"tj","Test":"TestFail"}
{"Action":"output","Package":"tj","Test":"TestFail","Output":"=== RUN   TestFail\n"}
{"Action":"output","Package":"tj","Test":"TestFail","Output":"    a_test.go:6: some log\n"}
{"Action":"output","Package":"tj","Test":"TestFail","Output":"    a_test.go:6: boom\n"}
{"Action":"output","Package":"tj","Test":"TestFail","Output":"--- FAIL: TestFail (0.01s)\n"}
{"Action":"fail","Package":"tj","Test":"TestFail"}
{"Action":"output","Package":"tj","Output":"FAIL\n"}
{"Action":"output","Package":"tj","Output":"FAIL\ttj\t0.01s\n"}
{"Action":"fail","Package":"tj"}
`
	buildFailStream = `{"ImportPath":"tj [tj.test]","Action":"build-output","Output":"# tj [tj.test]\n"}
{"ImportPath":"tj [tj.test]","Action":"build-output","Output":"./a_test.go:3:28: undefined: x\n"}
{"ImportPath":"tj [tj.test]","Action":"build-fail"}
{"Action":"start","Package":"tj"}
{"Action":"output","Package":"tj","Output":"FAIL\ttj [build failed]\n"}
{"Action":"fail","Package":"tj","FailedBuild":"tj [tj.test]"}
`
	noTestFilesStream = `{"Action":"start","Package":"x/cmd"}
{"Action":"output","Package":"x/cmd","Output":"?   \tx/cmd\t[no test files]\n"}
{"Action":"skip","Package":"x/cmd"}
`
)

// passingStream is mixedStream without its failed and skipped tests.
var passingStream = func() string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(mixedStream, "\n") {
		if !strings.Contains(line, "TestFail") && !strings.Contains(line, "TestSkip") && !strings.Contains(line, "TestSub/one") {
			b.WriteString(line)
		}
	}
	r := strings.NewReplacer(`"FAIL\n"`, `"PASS\n"`, `"FAIL\ttj`, `"ok  \ttj`, `"Action":"fail","Package":"tj"}`, `"Action":"pass","Package":"tj"}`)
	return r.Replace(b.String())
}()

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		code     int
		want     []string
		dontWant []string
	}{
		{name: "failed and skipped tests", in: mixedStream, code: 1, want: []string{
			"    a_test.go:6: some log\n    a_test.go:6: boom\n--- FAIL: TestFail",
			"FAIL\ttj\t",
			"2 skipped test(s), by reason:\n",
			"  1 x MISSING TEST FIXTURE: /x/y; run make models\n      (tj TestSkip)\n",
			"  1 x plain reason\n      (tj TestSub/one)\n",
			"\ntests: 3 passed, 1 failed, 2 skipped; 1 package(s) FAILED\n",
		}, dontWant: []string{"=== RUN   TestA", "--- PASS"}},
		{name: "all passing", in: passingStream, code: 0, want: []string{"ok  \ttj\t", "\ntests: 3 passed, 0 failed, 0 skipped\n"},
			dontWant: []string{"by reason", "=== RUN"}},
		{name: "build failure", in: buildFailStream, code: 1, want: []string{
			"./a_test.go:3:28: undefined: x\n", "FAIL\ttj [build failed]\n", "tests: 0 passed, 0 failed, 0 skipped; 1 package(s) FAILED"}},
		{name: "package without tests", in: noTestFilesStream, code: 0, want: []string{"?   \tx/cmd\t[no test files]\n", "tests: 0 passed"},
			dontWant: []string{"by reason"}},
		{name: "plain text passes through", in: "go: cannot find main module\n", code: 0, want: []string{"go: cannot find main module\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			if code := run(strings.NewReader(tc.in), &out); code != tc.code {
				t.Errorf("exit code %d, want %d", code, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range tc.dontWant {
				if strings.Contains(out.String(), w) {
					t.Errorf("output has %q:\n%s", w, out.String())
				}
			}
		})
	}
}

func TestSkipReason(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"plain", []string{"=== RUN   TestX\n", "    x_test.go:9: no haproxy\n", "--- SKIP: TestX (0.00s)\n"}, "no haproxy"},
		{"testenv banner", []string{"    testenv.go:57: \n", "        ****\n", "        *** MISSING TEST FIXTURE: /r/.cache/models/qwen3/tokenizer.json\n",
			"        *** run `make models` to fetch the test models\n", "        ****\n"},
			"MISSING TEST FIXTURE: /r/.cache/models/qwen3/tokenizer.json; run `make models` to fetch the test models"},
		{"silent", []string{"=== RUN   TestX\n", "--- SKIP: TestX (0.00s)\n"}, "(no reason given)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := skipReason(tc.lines); got != tc.want {
				t.Errorf("skipReason = %q, want %q", got, tc.want)
			}
		})
	}
}
