package main

import (
	"time"

	"github.com/vrender/vrender/kvindex"
	"github.com/vrender/vrender/orchestrator"
)

// routingFlags are serve's engine-choice flags: the policy and, for prefix
// routing, the block size, the scorer's weights and the index bounds.
type routingFlags struct {
	policy       string
	blockSize    int
	prefixWeight float64
	loadWeight   float64
	indexBlocks  int
	predictTTL   time.Duration
}

func (f *routingFlags) register(c *command) {
	c.fs.StringVar(&f.policy, "routing", orchestrator.RoutingLeastOutstanding, "`POLICY` choosing each request's engine: least-outstanding, round-robin or prefix\n"+
		"(the engine holding the longest prefix of the prompt's KV blocks, weighed against its load; in a\n"+
		"prefill/decode pool the prefill engine is chosen by prefix, the decode engine by load)")
	c.fs.IntVar(&f.blockSize, "kv-block-size", kvindex.DefaultBlockSize, "the engines' KV cache block size in tokens (`N`, vllm --block-size) for --routing prefix")
	c.fs.Float64Var(&f.prefixWeight, "routing-prefix-weight", orchestrator.DefaultPrefixWeight,
		"`W`eight of the fraction of the prompt's blocks an engine holds (--routing prefix)")
	c.fs.Float64Var(&f.loadWeight, "routing-load-weight", orchestrator.DefaultLoadWeight,
		"`W`eight of an engine's outstanding requests relative to the busiest engine's (--routing prefix)")
	c.fs.IntVar(&f.indexBlocks, "prefix-index-blocks", kvindex.DefaultMaxBlocksPerEngine,
		"most KV blocks (`N`) the prefix index keeps per engine, least recently used dropped first")
	c.fs.DurationVar(&f.predictTTL, "prefix-predict-ttl", kvindex.DefaultPredictTTL,
		"life (`DURATION`) of a predicted index entry (the prompt of a request routed to an engine) that no KV event confirmed")
}

// router builds the router the pools share (nil, nil for the default
// least-outstanding policy without events).
func (f *routingFlags) router(modelName string) (*orchestrator.Router, error) {
	switch {
	case f.blockSize < 1:
		return nil, usagef("--kv-block-size must be at least 1")
	case f.indexBlocks < 1:
		return nil, usagef("--prefix-index-blocks must be at least 1")
	case f.predictTTL <= 0:
		return nil, usagef("--prefix-predict-ttl must be positive")
	case f.prefixWeight < 0 || f.loadWeight < 0:
		return nil, usagef("--routing-prefix-weight and --routing-load-weight must not be negative")
	}
	cfg := orchestrator.RouterConfig{Policy: f.policy, PrefixWeight: f.prefixWeight, LoadWeight: f.loadWeight}
	if f.policy == orchestrator.RoutingPrefix {
		cfg.Index = kvindex.New(kvindex.Config{Keyer: kvindex.NewKeyer(f.blockSize, modelName),
			MaxBlocksPerEngine: f.indexBlocks, PredictTTL: f.predictTTL})
	}
	r, err := orchestrator.NewRouter(cfg)
	if err != nil {
		return nil, usagef("--routing: %v", err)
	}
	return r, nil
}
