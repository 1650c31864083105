package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// unauthorizedBody is vLLM's AuthenticationMiddleware answer, verbatim.
var unauthorizedBody = []byte(`{"error":"Unauthorized"}`)

// apiKeys holds the SHA-256 digests of the accepted keys: comparing
// fixed-size digests in constant time leaks neither a key's bytes nor
// its length.
type apiKeys [][sha256.Size]byte

func newAPIKeys(keys []string) apiKeys {
	var out apiKeys
	for _, k := range keys {
		if k != "" {
			out = append(out, sha256.Sum256([]byte(k)))
		}
	}
	return out
}

// verify is vLLM's verify_token: an "Authorization: Bearer <key>" header
// (scheme case-insensitive) naming one of the keys. Every key is compared,
// so the time taken does not tell which one matched.
func (k apiKeys) verify(header string) bool {
	scheme, param, _ := strings.Cut(header, " ")
	if header == "" || !strings.EqualFold(scheme, "bearer") {
		return false
	}
	got := sha256.Sum256([]byte(param))
	match := 0
	for i := range k {
		match |= subtle.ConstantTimeCompare(got[:], k[i][:])
	}
	return match == 1
}

// guarded reports whether path serves model work and so needs a key.
// vLLM guards every /v1 path (models included) and leaves /health,
// /metrics, /version, /tokenize and /detokenize open; vrender also guards
// /tokenize and /detokenize, which run the tokenizer on client input
// (model work, and a CPU cost an open port should not offer).
func guarded(path string) bool {
	return strings.HasPrefix(path, "/v1") || path == "/tokenize" || path == "/detokenize"
}

// authenticate refuses guarded requests without a valid key with vLLM's
// 401. OPTIONS passes, as in vLLM (CORS preflights carry no credentials).
// The header is never logged: the access log does not log headers.
func (s *server) authenticate(next http.Handler) http.Handler {
	if len(s.apiKeys) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions || !guarded(r.URL.Path) || s.apiKeys.verify(r.Header.Get("Authorization")) {
			next.ServeHTTP(w, r)
			return
		}
		s.metrics.unauthorized.Add(1)
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", "24")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write(unauthorizedBody)
	})
}
