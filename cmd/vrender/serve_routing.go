package main

import (
	"strings"
	"time"

	"github.com/vrender/vrender/fleet"
	"github.com/vrender/vrender/kvindex"
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
	kvEvents     stringList
	kvTopic      string
	queueEvery   time.Duration
	queueWeight  float64
}

func (f *routingFlags) register(c *command) {
	c.fs.StringVar(&f.policy, "routing", fleet.RoutingLeastOutstanding, "`POLICY` choosing each request's engine: least-outstanding, round-robin or prefix\n"+
		"(the engine holding the longest prefix of the prompt's KV blocks, weighed against its load; in a\n"+
		"prefill/decode pool the prefill engine is chosen by prefix, the decode engine by load)")
	c.fs.IntVar(&f.blockSize, "kv-block-size", kvindex.DefaultBlockSize, "the engines' KV cache block size in tokens (`N`, vllm --block-size) for --routing prefix")
	c.fs.Float64Var(&f.prefixWeight, "routing-prefix-weight", fleet.DefaultPrefixWeight,
		"`W`eight of the fraction of the prompt's blocks an engine holds (--routing prefix)")
	c.fs.Float64Var(&f.loadWeight, "routing-load-weight", fleet.DefaultLoadWeight,
		"`W`eight of an engine's outstanding requests relative to the busiest engine's (--routing prefix)")
	c.fs.IntVar(&f.indexBlocks, "prefix-index-blocks", kvindex.DefaultMaxBlocksPerEngine,
		"most KV blocks (`N`) the prefix index keeps per engine, least recently used dropped first")
	c.fs.DurationVar(&f.predictTTL, "prefix-predict-ttl", kvindex.DefaultPredictTTL,
		"life (`DURATION`) of a predicted index entry (the prompt of a request routed to an engine) that no KV event confirmed")
	c.fs.Var(&f.kvEvents, "kv-events-endpoint", "`URL=PUB[,REPLAY]`: the engine at URL publishes KV cache events (vllm serve --kv-events-config)\n"+
		"on the ZMQ PUB endpoint, with a replay endpoint for gaps, e.g.\n"+
		"http://10.0.0.1:8000=tcp://10.0.0.1:5557,tcp://10.0.0.1:5558; repeat per engine (--routing prefix)")
	c.multi["kv-events-endpoint"] = true
	c.fs.StringVar(&f.kvTopic, "kv-events-topic", "", "ZMQ `TOPIC` the engines publish KV events on (their kv-events-config topic)")
	c.fs.DurationVar(&f.queueEvery, "engine-metrics-interval", 0, "period (`DURATION`) of scraping each engine's GET /metrics for its queue (vllm:num_requests_waiting,\n"+
		"vllm:num_requests_running; on vrender's /metrics as vrender_engine_queue_*), which --routing prefix weighs\n"+
		"into the engine's load; 0 turns scraping off; an engine without those gauges counts as an empty queue")
	c.fs.Float64Var(&f.queueWeight, "routing-queue-weight", fleet.DefaultQueueWeight,
		"`W`eight of a request waiting in an engine's own queue, as a number of outstanding requests (--routing prefix\n"+
			"with --engine-metrics-interval)")
}

// queueConfig is the pools' queue scrape.
func (f *routingFlags) queueConfig() fleet.QueueConfig {
	return fleet.QueueConfig{Interval: f.queueEvery}
}

// eventSources parses --kv-events-endpoint against the pools' engines.
func (f *routingFlags) eventSources(engines []string) ([]fleet.KVEventSource, error) {
	known := map[string]bool{}
	for _, e := range engines {
		known[strings.TrimRight(e, "/")] = true
	}
	var out []fleet.KVEventSource
	seen := map[string]bool{}
	for _, v := range f.kvEvents {
		url, eps, ok := strings.Cut(v, "=")
		url = strings.TrimRight(url, "/")
		pub, replay, _ := strings.Cut(eps, ",")
		switch {
		case !ok || url == "" || pub == "":
			return nil, usagef("--kv-events-endpoint %q: want ENGINE_URL=tcp://HOST:PORT[,tcp://HOST:PORT]", v)
		case !known[url]:
			return nil, usagef("--kv-events-endpoint %q: %s is not one of the engines", v, url)
		case seen[url]:
			return nil, usagef("--kv-events-endpoint: engine %s is given twice", url)
		case !strings.HasPrefix(pub, "tcp://") || (replay != "" && !strings.HasPrefix(replay, "tcp://")):
			return nil, usagef("--kv-events-endpoint %q: endpoints must be tcp://HOST:PORT", v)
		}
		seen[url] = true
		out = append(out, fleet.KVEventSource{Engine: url, Endpoint: pub, ReplayEndpoint: replay, Topic: f.kvTopic})
	}
	return out, nil
}

// router builds the router the pools share (nil, nil for the default
// least-outstanding policy without events). names are the served model
// names, the first keying every block; any other "model" names a LoRA
// adapter.
func (f *routingFlags) router(names ...string) (*fleet.Router, error) {
	switch {
	case f.blockSize < 1:
		return nil, usagef("--kv-block-size must be at least 1")
	case f.indexBlocks < 1:
		return nil, usagef("--prefix-index-blocks must be at least 1")
	case f.predictTTL <= 0:
		return nil, usagef("--prefix-predict-ttl must be positive")
	case f.prefixWeight < 0 || f.loadWeight < 0 || f.queueWeight < 0:
		return nil, usagef("--routing-prefix-weight, --routing-load-weight and --routing-queue-weight must not be negative")
	case f.queueEvery < 0:
		return nil, usagef("--engine-metrics-interval must not be negative (0 turns scraping off)")
	}
	cfg := fleet.RouterConfig{Policy: f.policy, PrefixWeight: f.prefixWeight, LoadWeight: f.loadWeight, QueueWeight: f.queueWeight,
		BaseModels: names}
	if f.policy == fleet.RoutingPrefix {
		cfg.Index = kvindex.New(kvindex.Config{Keyer: kvindex.NewKeyer(f.blockSize, names[0]),
			MaxBlocksPerEngine: f.indexBlocks, PredictTTL: f.predictTTL})
	} else if len(f.kvEvents) > 0 {
		return nil, usagef("--kv-events-endpoint needs --routing prefix")
	}
	r, err := fleet.NewRouter(cfg)
	if err != nil {
		return nil, usagef("--routing: %v", err)
	}
	return r, nil
}
