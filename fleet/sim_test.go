package fleet

import (
	"net/http/httptest"
	"testing"

	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/orchestrator/engine"
)

// startSim serves an engine-sim of m named "qwen".
func startSim(t *testing.T, m *model.Model, cfg enginesim.Config) (*enginesim.Sim, *engine.Client) {
	t.Helper()
	cfg.ServedModelName, cfg.Logger = "qwen", quietLog()
	sim, err := enginesim.New(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	return sim, newTestClient(t, srv.URL)
}
