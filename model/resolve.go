package model

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// File names of a Hugging Face model directory.
const (
	tokenizerFile        = "tokenizer.json"
	tokenizerConfigFile  = "tokenizer_config.json"
	specialTokensMapFile = "special_tokens_map.json"
	configFile           = "config.json"
	generationConfigFile = "generation_config.json"
	chatTemplateFile     = "chat_template.jinja"
	chatTemplateJSONFile = "chat_template.json"
	chatTemplatesDir     = "additional_chat_templates"
)

// NotFoundError reports a required file that is in none of the places Load looked.
type NotFoundError struct {
	Model  string   // what the user passed
	File   string   // the missing file, e.g. "tokenizer.json"
	Looked []string // every place looked at, each with why it did not do
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("model %q: %s not found; looked in: %s", e.Model, e.File, strings.Join(e.Looked, "; "))
}

// repoIDPattern is what huggingface_hub accepts as a repo id: NAME or ORG/NAME.
var repoIDPattern = regexp.MustCompile(`^(?:[A-Za-z0-9][A-Za-z0-9._-]*/)?[A-Za-z0-9][A-Za-z0-9._-]*$`)

func isRepoID(s string) bool {
	return repoIDPattern.MatchString(s) && !strings.Contains(s, "--") && !strings.Contains(s, "..")
}

// hubCacheDir is where huggingface_hub keeps downloaded repos. An explicit home wins over the
// environment, so that a caller (or a test) that names one gets exactly that.
func hubCacheDir(hfHome string, getenv func(string) string) string {
	if hfHome != "" {
		return filepath.Join(hfHome, "hub")
	}
	for _, v := range []string{"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"} { // the second is the legacy name
		if dir := getenv(v); dir != "" {
			return dir
		}
	}
	if home := getenv("HF_HOME"); home != "" {
		return filepath.Join(home, "hub")
	}
	cache := getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "~" // unusable, but the error message then still shows where we would have looked
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "huggingface", "hub")
}

// resolveDir finds the local directory of nameOrPath that holds file: the path itself when it is a
// directory (as vLLM, a local directory wins over a model ID of the same spelling), else the snapshot of
// the model ID in the HF cache.
func resolveDir(nameOrPath, revision, hub, file string) (string, error) {
	notFound := &NotFoundError{Model: nameOrPath, File: file}
	if nameOrPath == "" {
		return "", errors.New("model: empty model name or path")
	}

	abs, err := filepath.Abs(nameOrPath)
	if err != nil {
		return "", fmt.Errorf("model %q: %w", nameOrPath, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case err == nil && fi.IsDir():
		if isFile(filepath.Join(abs, file)) {
			return abs, nil
		}
		notFound.Looked = append(notFound.Looked, abs+" (local directory without "+file+")")
		return "", notFound
	case err == nil:
		return "", fmt.Errorf("model %q: %s is a file; want a model directory", nameOrPath, abs)
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("model %q: %w", nameOrPath, err)
	}
	if !isRepoID(nameOrPath) {
		notFound.Looked = append(notFound.Looked, abs+" (no such directory; not a model ID (ORG/NAME) either)")
		return "", notFound
	}
	notFound.Looked = append(notFound.Looked, abs+" (no such directory)")
	repoDir := filepath.Join(hub, "models--"+strings.ReplaceAll(nameOrPath, "/", "--"))
	if !isDir(repoDir) {
		notFound.Looked = append(notFound.Looked, repoDir+" (not in the Hugging Face cache)")
		return "", notFound
	}
	snap, err := snapshotDir(repoDir, revision)
	if err != nil {
		return "", fmt.Errorf("model %q: %w", nameOrPath, err)
	}
	if !isFile(filepath.Join(snap, file)) {
		notFound.Looked = append(notFound.Looked, snap+" (cached snapshot without "+file+")")
		return "", notFound
	}
	return snap, nil
}

// snapshotDir picks the snapshot of a cached repo as huggingface_hub's try_to_load_from_cache does: a
// revision is a ref name (refs/<revision> holds the commit hash) or a commit hash itself.
func snapshotDir(repoDir, revision string) (string, error) {
	if revision != "" && !validRevision(revision) {
		return "", fmt.Errorf("invalid revision %q", revision)
	}
	ref := revision
	if ref == "" {
		ref = "main"
	}
	if data, err := os.ReadFile(filepath.Join(repoDir, "refs", filepath.FromSlash(ref))); err == nil {
		commit := strings.TrimSpace(string(data))
		snap := filepath.Join(repoDir, "snapshots", commit)
		if !validRevision(commit) || !isDir(snap) {
			return "", fmt.Errorf("%s: ref %q points at commit %q, which has no snapshot directory", repoDir, ref, commit)
		}
		return snap, nil
	}
	if snap := filepath.Join(repoDir, "snapshots", ref); revision != "" && isDir(snap) {
		return snap, nil
	}

	snaps, err := listDirs(filepath.Join(repoDir, "snapshots"))
	if err != nil {
		return "", fmt.Errorf("%s: %w", repoDir, err)
	}
	if revision == "" && len(snaps) == 1 {
		return filepath.Join(repoDir, "snapshots", snaps[0]), nil
	}
	if revision == "" {
		return "", fmt.Errorf("%s: no refs/main and %d snapshots %v; pass --revision", repoDir, len(snaps), snaps)
	}
	return "", fmt.Errorf("%s: revision %q is neither a ref nor a cached snapshot (snapshots: %v)", repoDir, revision, snaps)
}

// validRevision rejects revisions that would leave the repo directory when used as a path.
func validRevision(rev string) bool {
	if rev == "" || strings.HasPrefix(rev, "/") || strings.Contains(rev, `\`) {
		return false
	}
	return !slices.Contains(strings.Split(rev, "/"), "..")
}

func listDirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if isDir(filepath.Join(dir, e.Name())) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// isFile and isDir follow symlinks: HF cache snapshots are symlinks into blobs/.
func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
