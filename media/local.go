package media

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

const msgLocalDisabled = "Cannot load local files without `--allowed-local-media-path`."

func resolveLocalDir(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	dir, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", errors.New("Invalid `--allowed-local-media-path`: The path " + abs + " does not exist.")
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return "", errors.New("Invalid `--allowed-local-media-path`: The path " + dir + " must be a directory.")
	}
	return dir, nil
}

// readFile reads a file: URL as MediaConnector._load_file_url: the path is
// the URL's host and path joined (url2pathname), it must resolve (symlinks
// followed) to somewhere strictly below the allowed directory, and the
// resolved path is what gets opened, so a symlink cannot be swapped in
// between. Beyond vLLM: only regular files (a FIFO or device would block or
// never end) and at most MaxMediaBytes.
func (f *Fetcher) readFile(u *url.URL) ([]byte, error) {
	if f.localDir == "" {
		return nil, internal(KindLocalDisabled, msgLocalDisabled, nil)
	}
	shown := pathlibString(u.Host + u.Path)
	abs, err := filepath.Abs(u.Host + u.Path)
	if err != nil {
		return nil, internal(KindLocalRead, "Failed to read the file "+pyRepr(shown)+".", err)
	}
	resolved := resolveLoose(abs)
	if !strictlyBelow(f.localDir, resolved) {
		return nil, badRequest(KindLocalPath, "The file path "+shown+" must be a subpath of `--allowed-local-media-path "+
			f.localDir+"`.")
	}
	fh, err := os.OpenFile(resolved, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, osError(err, shown)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, osError(err, shown)
	}
	if st.IsDir() {
		return nil, osError(syscall.EISDIR, shown)
	}
	if !st.Mode().IsRegular() {
		return nil, badRequest(KindLocalRead, "The file path "+shown+" is not a regular file.")
	}
	max := f.cfg.MaxMediaBytes
	if st.Size() > max {
		return nil, badRequest(KindTooLarge, msgTooLarge(max))
	}
	b, over, err := readCapped(fh, max, st.Size())
	if over {
		return nil, badRequest(KindTooLarge, msgTooLarge(max))
	}
	if err != nil {
		return nil, osError(err, shown)
	}
	return b, nil
}

// osError is Python's OSError text, "[Errno N] strerror: 'path'", which
// vLLM answers with a 500.
func osError(err error, path string) *Error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		msg := errno.Error()
		if msg != "" {
			msg = strings.ToUpper(msg[:1]) + msg[1:]
		}
		return internal(KindLocalRead, "[Errno "+strconv.Itoa(int(errno))+"] "+msg+": "+pyRepr(path), err)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return osError(syscall.ENOENT, path)
	}
	return internal(KindLocalRead, "Failed to read the file "+pyRepr(path)+".", err)
}

// resolveLoose is pathlib's resolve(strict=False): symlinks resolved as far
// as the path exists, the missing rest appended.
func resolveLoose(abs string) string {
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	dir, base := filepath.Split(abs)
	dir = filepath.Clean(dir)
	if dir == abs || base == "" {
		return abs
	}
	return filepath.Join(resolveLoose(dir), base)
}

// strictlyBelow is vLLM's `allowed in filepath.resolve().parents`.
func strictlyBelow(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// pathlibString is str(pathlib.Path(p)) on POSIX: empty and "." segments
// and trailing slashes dropped, ".." kept.
func pathlibString(p string) string {
	if p == "" {
		return "."
	}
	var parts []string
	for _, s := range strings.Split(p, "/") {
		if s != "" && s != "." {
			parts = append(parts, s)
		}
	}
	out := strings.Join(parts, "/")
	if strings.HasPrefix(p, "/") {
		return "/" + out
	}
	if out == "" {
		return "."
	}
	return out
}
