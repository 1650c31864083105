// Package telemetry holds the lock-free instruments vrender's hot paths
// record into (fixed-bucket histograms and per-stage timers) and the
// Prometheus text exposition helpers the server writes them with. It sits
// below render, derender, orchestrator and server so that each can record
// without importing the others.
package telemetry
