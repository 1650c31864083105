package media

import (
	"fmt"
	"strconv"
	"time"
)

// Defaults of the Config fields left zero.
const (
	// DefaultTimeout is VLLM_IMAGE_FETCH_TIMEOUT's default (5 s).
	DefaultTimeout = 5 * time.Second
	// DefaultAttempts is VLLM_MEDIA_FETCH_MAX_RETRIES's default (3), which
	// vLLM counts as attempts: one try and two retries.
	DefaultAttempts = 3
	// DefaultRetryBackoff is vLLM's first sleep between attempts (4^0 s).
	DefaultRetryBackoff = time.Second
	// DefaultMaxMediaBytes caps one image's encoded bytes: 20 MiB holds a
	// lossless 4K screenshot several times over; scanned-document
	// deployments may raise it.
	DefaultMaxMediaBytes = 20 << 20
	// maxRedirects is aiohttp's default max_redirects, which vLLM keeps.
	maxRedirects = 10
	// backoffFactor multiplies both the per-attempt timeout and the sleep
	// on each retry (vllm/connections.py _RETRY_BACKOFF_FACTOR).
	backoffFactor = 4
)

// Config is what the server's flags and vLLM's environment variables say
// about fetching media. The zero value is vLLM's defaults plus the safe
// choices vLLM lacks (a size cap, no private addresses).
type Config struct {
	// AllowedMediaDomains (--allowed-media-domains): when non-empty, an
	// http(s) URL's host must be one of these, exactly (vLLM compares the
	// parsed hostname with the list). Redirect targets are checked too,
	// which vLLM does not do.
	AllowedMediaDomains []string
	// AllowedLocalMediaPath (--allowed-local-media-path): the directory
	// file: URLs may read below; empty refuses every file: URL. It must
	// exist and be a directory (New fails otherwise, as vLLM's startup does).
	AllowedLocalMediaPath string
	// MaxMediaBytes (--max-media-bytes): the most bytes one image may have,
	// fetched, read from a file or decoded from a data: URL. Zero means
	// DefaultMaxMediaBytes. vLLM has no cap.
	MaxMediaBytes int64
	// AllowPrivateMediaURLs (--allow-private-media-urls) lets fetches reach
	// loopback, private, link-local (cloud metadata) and other non-public
	// addresses. vLLM fetches them always.
	AllowPrivateMediaURLs bool
	// Timeout (VLLM_IMAGE_FETCH_TIMEOUT) bounds the first attempt, body
	// included; attempt n gets Timeout·4^n, as vLLM. Zero means DefaultTimeout.
	Timeout time.Duration
	// Attempts (VLLM_MEDIA_FETCH_MAX_RETRIES) is how many times a fetch is
	// tried when it times out, fails to connect or gets a 5xx answer. Zero
	// means DefaultAttempts.
	Attempts int
	// RetryBackoff is the sleep before the second attempt; the sleep before
	// attempt n+1 is RetryBackoff·4^n. Zero means DefaultRetryBackoff.
	RetryBackoff time.Duration
	// NoRedirects (VLLM_MEDIA_URL_ALLOW_REDIRECTS=0) answers a redirect's own
	// body instead of following it, as vLLM's aiohttp call does.
	NoRedirects bool
}

func (c Config) withDefaults() Config {
	if c.MaxMediaBytes <= 0 {
		c.MaxMediaBytes = DefaultMaxMediaBytes
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Attempts <= 0 {
		c.Attempts = DefaultAttempts
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = DefaultRetryBackoff
	}
	return c
}

// ApplyEnv sets the fields vLLM reads from its environment
// (VLLM_IMAGE_FETCH_TIMEOUT in whole seconds, VLLM_MEDIA_FETCH_MAX_RETRIES,
// VLLM_MEDIA_URL_ALLOW_REDIRECTS as 0/1) from getenv, leaving unset ones
// alone. Values Python's int() would refuse are errors.
func (c *Config) ApplyEnv(getenv func(string) string) error {
	if v := getenv("VLLM_IMAGE_FETCH_TIMEOUT"); v != "" {
		n, err := envInt("VLLM_IMAGE_FETCH_TIMEOUT", v)
		if err != nil {
			return err
		}
		c.Timeout = time.Duration(n) * time.Second
	}
	if v := getenv("VLLM_MEDIA_FETCH_MAX_RETRIES"); v != "" {
		n, err := envInt("VLLM_MEDIA_FETCH_MAX_RETRIES", v)
		if err != nil {
			return err
		}
		// vLLM makes max(n, 1) attempts.
		c.Attempts = max(int(n), 1)
	}
	if v := getenv("VLLM_MEDIA_URL_ALLOW_REDIRECTS"); v != "" {
		n, err := envInt("VLLM_MEDIA_URL_ALLOW_REDIRECTS", v)
		if err != nil {
			return err
		}
		c.NoRedirects = n == 0
	}
	return nil
}

func envInt(name, v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("media: %s=%q is not an integer", name, v)
	}
	return n, nil
}
