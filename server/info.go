package server

import (
	"net/http"

	"github.com/vrender/vrender/protocol"
)

// handleHealth answers GET /health with an empty 200: a render server has
// no engine whose death could make it unhealthy. While draining for
// shutdown it answers 503, so that load balancers stop routing here.
func (s *server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// handleVersion answers GET /version.
func (s *server) handleVersion(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, r, http.StatusOK, protocol.VersionResponse{Version: s.version})
}
