package enginesim

import (
	"net/http"
	"sync/atomic"
)

// DefaultVersion is the vLLM version the sim reports on GET /version: the
// first release whose tokens-only engine speaks the protocol vrender drives.
const DefaultVersion = "0.31.0"

// simVersion is the version string GET /version reports; the zero value
// reports DefaultVersion.
type simVersion struct{ v atomic.Pointer[string] }

func (sv *simVersion) get() string {
	if p := sv.v.Load(); p != nil {
		return *p
	}
	return DefaultVersion
}

// SetVersion changes the vLLM version the sim reports on GET /version, so
// that clients checking it (vrender preflight) can be tested against old or
// pre-release engines.
func (s *Sim) SetVersion(v string) { s.version.v.Store(&v) }

// handleVersion is vLLM's GET /version: {"version": "<vllm.__version__>"}.
func (s *Sim) handleVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		Version string `json:"version"`
	}{s.version.get()})
}
