package fleet

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/orchestrator/engine"
)

var (
	simModelOnce sync.Once
	simModel     *model.Model
	simModelErr  error
)

func loadModel(t *testing.T) *model.Model {
	t.Helper()
	dir := testenv.ModelDir(t, "qwen3")
	simModelOnce.Do(func() { simModel, simModelErr = model.Load(context.Background(), dir, model.Options{}) })
	if simModelErr != nil {
		t.Fatal(simModelErr)
	}
	return simModel
}

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
