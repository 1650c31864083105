package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/vrender/vrender/fleet"
	"github.com/vrender/vrender/kvindex"
)

func defaultRoutingFlags() routingFlags {
	return routingFlags{policy: fleet.RoutingLeastOutstanding, blockSize: kvindex.DefaultBlockSize,
		prefixWeight: fleet.DefaultPrefixWeight, loadWeight: fleet.DefaultLoadWeight,
		queueWeight: fleet.DefaultQueueWeight, indexBlocks: kvindex.DefaultMaxBlocksPerEngine, predictTTL: kvindex.DefaultPredictTTL}
}

func TestRoutingFlags(t *testing.T) {
	engines := []string{"http://a:8000", "http://b:8000/"}
	for _, c := range []struct {
		name   string
		edit   func(*routingFlags)
		errSub string
		policy string
		events int
	}{
		{"default", func(*routingFlags) {}, "", fleet.RoutingLeastOutstanding, 0},
		{"round-robin", func(f *routingFlags) { f.policy = "round-robin" }, "", fleet.RoutingRoundRobin, 0},
		{"prefix with events", func(f *routingFlags) {
			f.policy = "prefix"
			f.kvEvents = stringList{"http://a:8000=tcp://a:5557,tcp://a:5558", "http://b:8000=tcp://b:5557"}
		}, "", fleet.RoutingPrefix, 2},
		{"unknown policy", func(f *routingFlags) { f.policy = "random" }, "unknown routing policy", "", 0},
		{"events without prefix", func(f *routingFlags) { f.kvEvents = stringList{"http://a:8000=tcp://a:5557"} }, "needs --routing prefix", "", 0},
		{"events for no engine", func(f *routingFlags) {
			f.policy = "prefix"
			f.kvEvents = stringList{"http://c:8000=tcp://c:5557"}
		}, "not one of the engines", fleet.RoutingPrefix, 0},
		{"events twice", func(f *routingFlags) {
			f.policy = "prefix"
			f.kvEvents = stringList{"http://a:8000=tcp://a:5557", "http://a:8000/=tcp://a:5559"}
		}, "given twice", fleet.RoutingPrefix, 0},
		{"events not tcp", func(f *routingFlags) {
			f.policy = "prefix"
			f.kvEvents = stringList{"http://a:8000=ipc:///tmp/x"}
		}, "tcp://", fleet.RoutingPrefix, 0},
		{"events malformed", func(f *routingFlags) {
			f.policy = "prefix"
			f.kvEvents = stringList{"tcp://a:5557"}
		}, "want ENGINE_URL", fleet.RoutingPrefix, 0},
		{"block size", func(f *routingFlags) { f.blockSize = 0 }, "--kv-block-size", "", 0},
		{"negative weight", func(f *routingFlags) { f.loadWeight = -1 }, "must not be negative", "", 0},
		{"ttl", func(f *routingFlags) { f.predictTTL = 0 }, "--prefix-predict-ttl", "", 0},
		{"queue scrape", func(f *routingFlags) { f.policy, f.queueEvery, f.queueWeight = "prefix", time.Second, 3 }, "", fleet.RoutingPrefix, 0},
		{"negative queue weight", func(f *routingFlags) { f.queueWeight = -1 }, "--routing-queue-weight", "", 0},
		{"negative scrape interval", func(f *routingFlags) { f.queueEvery = -time.Second }, "--engine-metrics-interval", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := defaultRoutingFlags()
			c.edit(&f)
			r, err := f.router("m")
			if err == nil {
				var srcs []fleet.KVEventSource
				srcs, err = f.eventSources(engines)
				if err == nil && len(srcs) != c.events {
					t.Errorf("%d event sources, want %d", len(srcs), c.events)
				}
				if err == nil && r.Policy() != c.policy {
					t.Errorf("policy %s, want %s", r.Policy(), c.policy)
				}
			}
			switch {
			case c.errSub == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.errSub != "" && (err == nil || !strings.Contains(err.Error(), c.errSub)):
				t.Fatalf("error %v, want one containing %q", err, c.errSub)
			}
		})
	}
}

func TestKVEventsConfigFlag(t *testing.T) {
	for _, c := range []struct {
		json, errSub string
		on           bool
	}{
		{`{"enable_kv_cache_events":false}`, "", false},
		{`{"enable_kv_cache_events":true,"publisher":"null"}`, "", false},
		{`{"enable_kv_cache_events":true,"publisher":"kafka"}`, "want zmq or null", false},
		{`{"enable_kv_cache_events":true,"endpoint":"tcp://127.0.0.1:0","hwm":5,"bogus":1}`, "unknown field", false},
		{`{"enable_kv_cache_events":true,"endpoint":"ipc:///tmp/x"}`, "tcp://", false},
		{`{"enable_kv_cache_events":true,"endpoint":"tcp://127.0.0.1:0"}`, "", true},
	} {
		f := simCacheFlags{cacheBlocks: 16, blockSize: 16, kvEvents: c.json}
		pub, _, err := f.publisher(quietTestLog(), false)
		switch {
		case c.errSub == "" && err != nil:
			t.Errorf("%s: %v", c.json, err)
		case c.errSub != "" && (err == nil || !strings.Contains(err.Error(), c.errSub)):
			t.Errorf("%s: error %v, want %q", c.json, err, c.errSub)
		case (pub != nil) != c.on:
			t.Errorf("%s: publisher %v, want on=%v", c.json, pub, c.on)
		}
		if pub != nil {
			_ = pub.Close()
		}
	}
	for _, prefix := range []string{"", "sim-"} {
		f := simCacheFlags{prefix: prefix, blockSize: 16, kvEvents: `{"enable_kv_cache_events":true}`}
		if _, _, err := f.publisher(quietTestLog(), false); err == nil || !strings.Contains(err.Error(), "--"+prefix+"num-gpu-blocks-override") {
			t.Errorf("events without a prefix cache: %v", err)
		}
	}
}

func quietTestLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
