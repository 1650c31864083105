package enginesim

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// requireKey answers 401 {"error":"Unauthorized"} (vLLM's answer) to any
// request but GET /health without "Authorization: Bearer <key>" naming one
// of keys; no keys, no check. Digests are compared so neither a key's
// bytes nor its length leak through timing.
func requireKey(keys []string, next http.Handler) http.Handler {
	var sums [][sha256.Size]byte
	for _, k := range keys {
		if k != "" {
			sums = append(sums, sha256.Sum256([]byte(k)))
		}
	}
	if len(sums) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/health" {
			next.ServeHTTP(w, r)
			return
		}
		scheme, param, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		got := sha256.Sum256([]byte(param))
		match := 0
		for i := range sums {
			match |= subtle.ConstantTimeCompare(got[:], sums[i][:])
		}
		if !strings.EqualFold(scheme, "bearer") || match != 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"Unauthorized"}`))
			return
		}
		next.ServeHTTP(w, r)
	})
}
