package model

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHubCacheDir(t *testing.T) {
	tests := []struct {
		name   string
		hfHome string
		env    map[string]string
		want   string
	}{
		{"explicit home wins over env", "/h", map[string]string{"HF_HUB_CACHE": "/x", "HF_HOME": "/y"}, "/h/hub"},
		{"HF_HUB_CACHE", "", map[string]string{"HF_HUB_CACHE": "/x", "HF_HOME": "/y"}, "/x"},
		{"legacy HUGGINGFACE_HUB_CACHE", "", map[string]string{"HUGGINGFACE_HUB_CACHE": "/legacy", "HF_HOME": "/y"}, "/legacy"},
		{"HF_HOME", "", map[string]string{"HF_HOME": "/y", "XDG_CACHE_HOME": "/xdg"}, "/y/hub"},
		{"XDG_CACHE_HOME", "", map[string]string{"XDG_CACHE_HOME": "/xdg"}, "/xdg/huggingface/hub"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := hubCacheDir(tt.hfHome, func(k string) string { return tt.env[k] })
			if got != tt.want {
				t.Errorf("hubCacheDir = %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("home default", func(t *testing.T) {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Skip("no home directory:", err)
		}
		got := hubCacheDir("", func(string) string { return "" })
		if want := filepath.Join(home, ".cache", "huggingface", "hub"); got != want {
			t.Errorf("hubCacheDir = %q, want %q", got, want)
		}
	})
}

func TestIsRepoID(t *testing.T) {
	tests := map[string]bool{
		"Qwen/Qwen3-8B":                      true,
		"gpt2":                               true,
		"meta-llama/Llama-3.1-8B-Instruct":   true,
		"org/name.with.dots_and-dashes":      true,
		"a/b/c":                              false,
		"/abs/path":                          false,
		"./rel":                              false,
		"org/na--me":                         false,
		"org/..":                             false,
		"":                                   false,
		"org/":                               false,
		"with space/x":                       false,
		"-leading/x":                         false,
		"unicode/名前":                         false,
		"deepseek-ai/DeepSeek-V3.1-Terminus": true,
	}
	for id, want := range tests {
		if got := isRepoID(id); got != want {
			t.Errorf("isRepoID(%q) = %v, want %v", id, got, want)
		}
	}
}

// fakeHub lays out a huggingface_hub cache entry: blobs, snapshots of symlinks into them, and refs.
type fakeHub struct {
	t   *testing.T
	hub string
}

func newFakeHub(t *testing.T) fakeHub {
	return fakeHub{t: t, hub: filepath.Join(t.TempDir(), "hub")}
}

func (h fakeHub) repoDir(id string) string {
	return filepath.Join(h.hub, "models--"+strings.ReplaceAll(id, "/", "--"))
}

// snapshot adds a snapshot with the given files, stored as blobs the way the real cache does.
func (h fakeHub) snapshot(id, commit string, files map[string]string) string {
	h.t.Helper()
	repo := h.repoDir(id)
	snap := filepath.Join(repo, "snapshots", commit)
	for name, content := range files {
		blob := filepath.Join(repo, "blobs", commit+"-"+strings.ReplaceAll(name, "/", "_"))
		mustWrite(h.t, blob, content)
		link := filepath.Join(snap, name)
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			h.t.Fatal(err)
		}
		rel, err := filepath.Rel(filepath.Dir(link), blob)
		if err != nil {
			h.t.Fatal(err)
		}
		if err := os.Symlink(rel, link); err != nil {
			h.t.Fatal(err)
		}
	}
	if err := os.MkdirAll(snap, 0o755); err != nil {
		h.t.Fatal(err)
	}
	return snap
}

func (h fakeHub) ref(id, name, commit string) {
	h.t.Helper()
	mustWrite(h.t, filepath.Join(h.repoDir(id), "refs", filepath.FromSlash(name)), commit)
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolveDir(t *testing.T) {
	h := newFakeHub(t)
	tok := map[string]string{tokenizerFile: "{}"}
	mainSnap := h.snapshot("org/model", "aaaa", tok)
	oldSnap := h.snapshot("org/model", "bbbb", tok)
	h.ref("org/model", "main", "aaaa\n") // huggingface_hub writes no newline; tolerate one
	h.ref("org/model", "refs/pr/1", "bbbb")
	onlySnap := h.snapshot("org/single", "cccc", tok)
	h.snapshot("org/two", "d1", tok)
	h.snapshot("org/two", "d2", tok)
	partialSnap := h.snapshot("org/partial", "eeee", map[string]string{configFile: "{}"})
	h.ref("org/dangling", "main", "ffff")
	if err := os.MkdirAll(filepath.Join(h.repoDir("org/dangling"), "snapshots"), 0o755); err != nil {
		t.Fatal(err)
	}

	local := t.TempDir()
	mustWrite(t, filepath.Join(local, tokenizerFile), "{}")
	emptyLocal := t.TempDir()
	aFile := filepath.Join(t.TempDir(), "tokenizer.json")
	mustWrite(t, aFile, "{}")

	tests := []struct {
		name     string
		path     string
		revision string
		file     string
		want     string
		wantErr  []string // substrings of the error
	}{
		{name: "local directory", path: local, file: tokenizerFile, want: local},
		{name: "model ID via refs/main", path: "org/model", file: tokenizerFile, want: mainSnap},
		{name: "model ID at a ref with slashes", path: "org/model", revision: "refs/pr/1", file: tokenizerFile, want: oldSnap},
		{name: "model ID at a commit", path: "org/model", revision: "bbbb", file: tokenizerFile, want: oldSnap},
		{name: "only snapshot without refs", path: "org/single", file: tokenizerFile, want: onlySnap},
		{name: "explicit main without refs", path: "org/single", revision: "main", file: tokenizerFile,
			wantErr: []string{`revision "main" is neither a ref nor a cached snapshot`, "cccc"}},
		{name: "two snapshots without refs", path: "org/two", file: tokenizerFile,
			wantErr: []string{"no refs/main and 2 snapshots", "pass --revision"}},
		{name: "unknown revision", path: "org/model", revision: "v9", file: tokenizerFile,
			wantErr: []string{`revision "v9"`, "aaaa", "bbbb"}},
		{name: "revision escaping the repo", path: "org/model", revision: "../../x", file: tokenizerFile,
			wantErr: []string{`invalid revision "../../x"`}},
		{name: "ref to a missing snapshot", path: "org/dangling", file: tokenizerFile,
			wantErr: []string{`ref "main" points at commit "ffff", which has no snapshot directory`}},
		{name: "snapshot without the file", path: "org/partial", file: tokenizerFile,
			wantErr: []string{"tokenizer.json not found", partialSnap + " (cached snapshot without tokenizer.json)"}},
		{name: "snapshot with another required file", path: "org/partial", file: configFile, want: partialSnap},
		{name: "not cached", path: "org/absent", file: tokenizerFile,
			wantErr: []string{`model "org/absent": tokenizer.json not found`, "org/absent (no such directory)",
				filepath.Join(h.hub, "models--org--absent") + " (not in the Hugging Face cache)"}},
		{name: "local directory without the file", path: emptyLocal, file: tokenizerFile,
			wantErr: []string{emptyLocal + " (local directory without tokenizer.json)"}},
		{name: "missing path that is no model ID", path: "/no/such/dir/here", file: tokenizerFile,
			wantErr: []string{"/no/such/dir/here (no such directory; not a model ID (ORG/NAME) either)"}},
		{name: "a file, not a directory", path: aFile, file: tokenizerFile, wantErr: []string{"is a file; want a model directory"}},
		{name: "empty", path: "", file: tokenizerFile, wantErr: []string{"empty model name or path"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveDir(tt.path, tt.revision, h.hub, tt.file)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("resolveDir = %q, want an error", got)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q\ndoes not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("resolveDir: %v", err)
			}
			if got != tt.want {
				t.Errorf("resolveDir = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestResolveDirNotFoundErrorType(t *testing.T) {
	_, err := resolveDir("org/absent", "", t.TempDir(), tokenizerFile)
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("error %v is not a *NotFoundError", err)
	}
	if nf.File != tokenizerFile || len(nf.Looked) != 2 {
		t.Errorf("NotFoundError = %+v, want file %s and two places", nf, tokenizerFile)
	}
}

func TestResolveDirRelativeLocalWinsOverModelID(t *testing.T) {
	// A relative path that happens to look like a model ID is a local directory when it exists (vLLM too).
	root := t.TempDir()
	mustWrite(t, filepath.Join(root, "org", "model", tokenizerFile), "{}")
	t.Chdir(root)
	h := newFakeHub(t)
	h.snapshot("org/model", "aaaa", map[string]string{tokenizerFile: "{}"})
	got, err := resolveDir("org/model", "", h.hub, tokenizerFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "org", "model"); got != want {
		t.Errorf("resolveDir = %q, want the local %q", got, want)
	}
}
