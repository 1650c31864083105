// Package scaletest holds the horizontal-scale test: three `vrender serve`
// processes sharing a --state-key behind a real load balancer (haproxy,
// round-robin, no affinity), one of them killed mid-run, checking that
// every stream either completes exactly as on a single replica or fails
// cleanly. It has no non-test code.
package scaletest
