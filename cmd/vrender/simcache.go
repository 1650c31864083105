package main

import (
	"log/slog"
	"net"
	"time"

	"github.com/vrender/vrender/enginesim"
	"github.com/vrender/vrender/kvevents"
)

// simCacheFlags are the simulated engine's prefix-cache flags, shared by
// `vrender engine-sim` (no prefix) and serve's in-process `--engine sim`
// (prefix "sim-"), so both spell, check and apply them the same way.
type simCacheFlags struct {
	prefix      string
	cacheBlocks int
	blockSize   int
	prefillTok  time.Duration
	ptDetails   bool
	kvEvents    string
}

// name is the flag's name with the prefix.
func (f *simCacheFlags) name(n string) string { return "--" + f.prefix + n }

func (f *simCacheFlags) register(c *command, prefix string) {
	f.prefix = prefix
	c.fs.IntVar(&f.cacheBlocks, prefix+"num-gpu-blocks-override", 0, "KV cache capacity in blocks (`N`) of the simulated automatic prefix cache\n"+
		"(an LRU of full blocks, evicted tail first); 0: no prefix cache")
	c.fs.IntVar(&f.blockSize, prefix+"block-size", 16, "KV cache block size in tokens (`N`) of the simulated prefix cache")
	c.fs.DurationVar(&f.prefillTok, prefix+"prefill-token-latency", 0, "`DURATION` added to the first-token latency per prompt token the prefix cache\n"+
		"does not hold (every token without one), e.g. 50us")
	c.fs.BoolVar(&f.ptDetails, prefix+"enable-prompt-tokens-details", false, "report usage.prompt_tokens_details.cached_tokens from the simulated engine")
	c.fs.StringVar(&f.kvEvents, prefix+"kv-events-config", "", "vLLM's KVEventsConfig `JSON`, e.g. {\"enable_kv_cache_events\":true,\"publisher\":\"zmq\",\n"+
		"\"endpoint\":\"tcp://*:5557\",\"replay_endpoint\":\"tcp://*:5558\"}: the prefix cache's changes published as vLLM's\n"+
		"KV events (BlockStored, BlockRemoved, AllBlocksCleared; needs "+f.name("num-gpu-blocks-override")+")")
}

// validate checks the flags' values.
func (f *simCacheFlags) validate() error {
	switch {
	case f.cacheBlocks < 0 || f.blockSize < 1:
		return usagef("%s must not be negative and %s must be at least 1", f.name("num-gpu-blocks-override"), f.name("block-size"))
	case f.prefillTok < 0:
		return usagef("%s must not be negative", f.name("prefill-token-latency"))
	}
	return nil
}

// set reports whether any flag differs from its default.
func (f *simCacheFlags) set() bool {
	return f.cacheBlocks != 0 || f.blockSize != 16 || f.prefillTok != 0 || f.ptDetails || f.kvEvents != ""
}

// apply puts the prefix cache into cfg.
func (f *simCacheFlags) apply(cfg *enginesim.Config) {
	cfg.PrefixCacheBlocks, cfg.BlockSize = f.cacheBlocks, f.blockSize
	cfg.PrefillTokenLatency, cfg.EnablePromptTokensDetails = f.prefillTok, f.ptDetails
}

// publisher starts the KV event publisher --kv-events-config asks for (nil
// when events are off). loopback binds it to free loopback ports instead
// of the config's endpoints: serve's in-process engines are several
// behind one flag, and the router follows them itself.
func (f *simCacheFlags) publisher(log *slog.Logger, loopback bool) (*kvevents.Publisher, kvevents.PublisherConfig, error) {
	if f.kvEvents == "" {
		return nil, kvevents.PublisherConfig{}, nil
	}
	cfg, on, err := parseKVEventsConfig(f.kvEvents, f.cacheBlocks, f.name)
	if err != nil || !on {
		return nil, cfg, err
	}
	cfg.Logger = log
	if loopback {
		if cfg.Endpoint, err = freeLoopbackEndpoint(); err == nil {
			cfg.ReplayEndpoint, err = freeLoopbackEndpoint()
		}
		if err != nil {
			return nil, cfg, err
		}
	}
	pub, err := kvevents.NewPublisher(cfg)
	if err != nil {
		return nil, cfg, err
	}
	log.Info("KV events published", "endpoint", cfg.Endpoint, "replay_endpoint", cfg.ReplayEndpoint, "topic", cfg.Topic)
	return pub, cfg, nil
}

// freeLoopbackEndpoint is a tcp:// endpoint on a loopback port free a
// moment ago.
func freeLoopbackEndpoint() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return "tcp://" + l.Addr().String(), nil
}
