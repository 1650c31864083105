// Package scaletest holds the tests that need real `vrender serve`
// processes: horizontal scale (three processes sharing a --state-key
// behind a real load balancer, haproxy, round-robin, no affinity, one of
// them killed mid-run, checking that every stream either completes
// exactly as on a single replica or fails cleanly) and image memory under
// load (a process's peak RSS bounded by --image-memory-budget). It has no
// non-test code.
package scaletest
