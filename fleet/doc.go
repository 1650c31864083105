// Package fleet is the engines vrender sends generate requests to, apart
// from what is sent. A Pool balances interchangeable engines by load or,
// with a prefix Router, by the prompt prefix their KV caches hold (a
// kvindex.Index fed by the engines' KV events and by the router's own
// predictions); it checks the engines' /health, ejects a failing engine
// and re-admits it when a probe passes, and may scrape their queue gauges.
// A PDPool joins a prefill pool and a decode pool as vLLM's disaggregation
// proxy does.
//
// Start places one prepared request and returns its stream (a Call);
// Health is each engine's state for /metrics. The orchestrator uses
// nothing else; cmd/vrender builds the pools from flags or an EngineConfig
// file.
package fleet
