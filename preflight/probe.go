package preflight

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// get fetches path from an engine and returns the body of a 200 answer.
func (r *runner) get(ctx context.Context, t *target, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.url+path, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s%s: %w", t.url, path, err)
	}
	if r.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.cfg.APIKey)
	}
	resp, err := r.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s%s: %w", t.url, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s%s: read body: %w", t.url, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &statusError{url: t.url + path, status: resp.StatusCode}
	}
	return body, nil
}

type statusError struct {
	url    string
	status int
}

func (e *statusError) Error() string {
	return fmt.Sprintf("GET %s answered %d %s", e.url, e.status, http.StatusText(e.status))
}

// checkVersions is GET /version on every engine against MinVersion.
func (r *runner) checkVersions(ctx context.Context) []Check {
	var checks []Check
	for _, t := range r.engines {
		c := r.checkVersion(ctx, t)
		checks = append(checks, c)
		if c.Status == StatusFail {
			break
		}
	}
	return checks
}

func (r *runner) checkVersion(ctx context.Context, t *target) Check {
	name := fmt.Sprintf("%s version (%s)", t.label(), t.url)
	body, err := r.get(ctx, t, "/version")
	if err != nil {
		if se, ok := err.(*statusError); ok {
			return fail(name, se.Error(),
				"this does not look like a vLLM server (vLLM answers GET /version): check the URL, and the API key if it answered 401")
		}
		return fail(name, "engine unreachable: "+err.Error(),
			fmt.Sprintf("start the %s or correct its URL: vrender could not connect to it", t.label()))
	}
	var v struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.Version == "" {
		return fail(name, fmt.Sprintf("GET /version gave %.200q, not {\"version\": ...}", body),
			"point vrender at the vLLM engine itself, not at a proxy in front of it")
	}
	ver, err := ParseVersion(v.Version)
	if err != nil {
		return fail(name, err.Error(), "point vrender at a vLLM engine: its /version is a PEP 440 version")
	}
	minV := *r.cfg.MinVersion
	if ver.Compare(minV) < 0 {
		detail := fmt.Sprintf("vLLM %s is older than %s", ver, minV)
		if ver.IsPreRelease() && sameRelease(ver, minV) {
			detail = fmt.Sprintf("vLLM %s is a pre-release of %s, which orders before it", ver, minV)
		}
		return fail(name, detail, fmt.Sprintf("upgrade the %s to vLLM >= %s (pip install -U 'vllm>=%s'): "+
			"the tokens-only generate protocol vrender drives needs it", t.label(), minV, minV))
	}
	return pass(name, "vLLM "+ver.String(), nil)
}

// label names the engine in messages: "engine", "prefill engine", "decode engine".
func (t *target) label() string {
	if t.role == "engine" {
		return "engine"
	}
	return t.role + " engine"
}

func sameRelease(a, b Version) bool {
	for i := range max(len(a.Release), len(b.Release)) {
		if at(a.Release, i) != at(b.Release, i) {
			return false
		}
	}
	return true
}
