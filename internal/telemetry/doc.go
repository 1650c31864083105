// Package telemetry is vrender's one metrics layer: the lock-free
// instruments hot paths record into (fixed-bucket histograms and per-stage
// timers), the Prometheus text exposition writers the server, orchestrator
// and engine simulator use (label values escaped as the format defines),
// and the one exposition reader (ParseSample, ParseText) that tests, bench
// and preflight scrape with. It sits below render, derender, orchestrator
// and server so that each can record without importing the others.
//
// It is not github.com/prometheus/client_golang because a streamed token
// records a counter add and a histogram observe: ~31-54 ns here against
// ~61-76 ns for client_golang's pre-resolved Counter and Histogram and
// ~116-281 ns when a CounterVec label is looked up per token (go test
// -bench, 2-core shared VM), plus a dependency tree (protobuf, procfs) the
// service does not otherwise need.
package telemetry
