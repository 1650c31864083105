// Package testenv locates the test fixtures that live outside the Go tree —
// the shared specs beside the repository, the model cache and the reference
// tokenizer binding under .cache — and the external programs tests run.
//
// A fixture that is missing skips the test with a loud message naming what
// is missing and how to get it (`make models`). Under CI=true a missing
// fixture fails the test instead, so a misconfigured CI cannot pass by
// skipping everything.
//
// It also holds the few helpers every package's tests would otherwise copy:
// FirstDiff, MustJSON and CPUTime, the process CPU time benchmarks report
// beside wall time. Loading the cached models once per test binary is
// internal/testmodel's job: it imports model and tokenizer, whose own tests
// use this package.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// rootOnce caches the repository root: it cannot change during a test binary's life.
var rootOnce = sync.OnceValues(findRepoRoot)

// findRepoRoot walks up from the working directory (the package directory
// under `go test`) to the first directory holding go.mod.
func findRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("testenv: working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("testenv: no go.mod above the working directory")
		}
		dir = parent
	}
}

// InCI reports whether missing fixtures must fail rather than skip.
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing skips (or, in CI, fails) the test because a fixture is absent.
func Missing(t testing.TB, what, hint string) {
	t.Helper()
	msg := fmt.Sprintf("\n"+
		"************************************************************\n"+
		"*** MISSING TEST FIXTURE: %s\n"+
		"*** %s\n"+
		"************************************************************", what, hint)
	if InCI() {
		t.Fatal(msg + "\n(CI=true: missing fixtures are failures)")
	}
	t.Skip(msg)
}

// RepoRoot returns the directory holding go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	root, err := rootOnce()
	if err != nil {
		// Without a repository root nothing else can be found; this is a
		// broken checkout, not a missing optional fixture.
		t.Fatal(err)
	}
	return root
}

// SharedDir returns the read-only specs folder beside the repository (<repo>/../shared).
func SharedDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(RepoRoot(t)), "shared")
	if !isDir(dir) {
		Missing(t, dir, "the shared specs folder must sit beside the repository (../shared)")
	}
	return dir
}

// ModelDir returns <repo>/.cache/models/<name>, which must hold tokenizer.json.
func ModelDir(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(t), ".cache", "models", name)
	if !isFile(filepath.Join(dir, "tokenizer.json")) {
		Missing(t, filepath.Join(dir, "tokenizer.json"), "run `make models` to fetch the test models")
	}
	return dir
}

// RefNodeModules returns <repo>/.cache/ref/node_modules, which must hold the
// reference `tokenizers` Node binding.
func RefNodeModules(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(t), ".cache", "ref", "node_modules")
	if !isFile(filepath.Join(dir, "tokenizers", "package.json")) {
		Missing(t, filepath.Join(dir, "tokenizers"), "run `make models` to install the reference tokenizers binding")
	}
	return dir
}

// OpenAINodeModules returns <repo>/.cache/openai-node/node_modules, which
// must hold the official `openai` Node SDK the client tests drive vrender with.
func OpenAINodeModules(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(t), ".cache", "openai-node", "node_modules")
	if !isFile(filepath.Join(dir, "openai", "package.json")) {
		Missing(t, filepath.Join(dir, "openai"), "run `make models` to install the openai Node SDK")
	}
	return dir
}

// JSClientsModules returns the node_modules directory holding the Vercel AI
// SDK, LangChain JS and Anthropic SDK packages (.cache/js-clients, installed
// by `make models`).
func JSClientsModules(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(t), ".cache", "js-clients", "node_modules")
	for _, pkg := range []string{"ai", "@ai-sdk/openai-compatible", "@langchain/openai", "@anthropic-ai/sdk"} {
		if !isFile(filepath.Join(dir, pkg, "package.json")) {
			Missing(t, filepath.Join(dir, pkg), "run `make models` to install the Vercel AI SDK, LangChain JS and the Anthropic SDK")
		}
	}
	return dir
}

// HarmonyRefDir returns <repo>/.cache/harmony-ref, which must hold the
// openai-harmony npm package (openai_harmony compiled to wasm) and the
// o200k_base.tiktoken vocabulary it loads, both written by `make models`.
func HarmonyRefDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(t), ".cache", "harmony-ref")
	for _, f := range []string{"node_modules/openai-harmony/package.json", "o200k_base.tiktoken"} {
		if !isFile(filepath.Join(dir, f)) {
			Missing(t, filepath.Join(dir, f), "run `make models` to install openai_harmony (wasm) and derive its vocabulary")
		}
	}
	return dir
}

// Node returns the path of the node binary.
func Node(t testing.TB) string {
	t.Helper()
	return program(t, "node", "install Node.js (>= 22, README's prerequisites) to run the reference tokenizer and the client SDKs; then `make models`")
}

// Python3 returns the path of the python3 binary.
func Python3(t testing.TB) string {
	t.Helper()
	return program(t, "python3", "install python3 (with Jinja2) for the reference template renderer")
}

// PillowPython returns a python3 that imports Pillow 9.4.0 (Debian 12's, with libjpeg-turbo 2.1.5 and
// libwebp 1.2.4: what the image goldens were made with) and numpy, the live reference of the image tests.
// The system interpreter comes first: Debian's python3-pil installs there, and a python3 earlier on PATH (a
// virtualenv, pyenv) often lacks it.
func PillowPython(t testing.TB) string {
	t.Helper()
	candidates := []string{"/usr/bin/python3"}
	if py, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, py)
	}
	var tried []string
	for _, py := range candidates {
		out, err := exec.Command(py, "-c", "import PIL, numpy; print(PIL.__version__)").CombinedOutput()
		v := strings.TrimSpace(string(out))
		if err == nil && v == "9.4.0" {
			return py
		}
		tried = append(tried, py+": "+v)
	}
	Missing(t, fmt.Sprintf("python3 with Pillow 9.4.0 and numpy (%q)", tried),
		"apt-get install -y python3-pil python3-numpy (Debian 12's Pillow 9.4.0, libjpeg-turbo 2.1.5, libwebp 1.2.4)")
	return ""
}

func program(t testing.TB, name, hint string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name+" binary on PATH", hint)
	}
	return path
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
