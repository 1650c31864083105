package server

import (
	"bytes"
	"net/http"
	"strconv"
)

// handleMetrics answers GET /metrics in Prometheus text exposition format:
// the orchestrator's counters and its per-event latency histogram
// (vrender_orchestrator_event_seconds), and the derender cache's hit
// counters.
func (s *server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	if s.orchestrator != nil {
		if err := s.orchestrator.Metrics().WritePrometheus(&b); err != nil {
			s.writeError(w, r, internalError())
			return
		}
	}
	hits, misses := s.derender.CacheStats()
	b.WriteString("# HELP vrender_derender_cache_hits_total Streaming derender calls that resumed a cached parser state.\n")
	b.WriteString("# TYPE vrender_derender_cache_hits_total counter\n")
	b.WriteString("vrender_derender_cache_hits_total " + strconv.FormatInt(hits, 10) + "\n")
	b.WriteString("# HELP vrender_derender_cache_misses_total Streaming derender calls that replayed the history.\n")
	b.WriteString("# TYPE vrender_derender_cache_misses_total counter\n")
	b.WriteString("vrender_derender_cache_misses_total " + strconv.FormatInt(misses, 10) + "\n")
	h := w.Header()
	h.Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b.Bytes())
}
