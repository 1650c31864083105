package enginesim

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRequireKey(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	h := requireKey([]string{"K", "other"}, ok)
	cases := []struct {
		method, path, auth string
		want               int
	}{
		{"POST", "/inference/v1/generate", "", http.StatusUnauthorized},
		{"POST", "/inference/v1/generate", "Bearer wrong", http.StatusUnauthorized},
		{"POST", "/inference/v1/generate", "Basic K", http.StatusUnauthorized},
		{"POST", "/inference/v1/generate", "Bearer K", http.StatusOK},
		{"POST", "/inference/v1/generate", "bearer other", http.StatusOK},
		{"POST", "/abort_requests", "", http.StatusUnauthorized},
		{"GET", "/v1/models", "", http.StatusUnauthorized},
		{"GET", "/metrics", "", http.StatusUnauthorized},
		{"GET", "/health", "", http.StatusOK},
	}
	for _, tc := range cases {
		req := httptest.NewRequest(tc.method, tc.path, strings.NewReader("{}"))
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("%s %s %q: %d, want %d", tc.method, tc.path, tc.auth, rec.Code, tc.want)
		}
		if tc.want == http.StatusUnauthorized && rec.Body.String() != `{"error":"Unauthorized"}` {
			t.Errorf("body %q", rec.Body.String())
		}
	}
	// No keys: open, as without --api-key.
	rec := httptest.NewRecorder()
	requireKey(nil, ok).ServeHTTP(rec, httptest.NewRequest("POST", "/inference/v1/generate", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("no keys: %d", rec.Code)
	}
}
