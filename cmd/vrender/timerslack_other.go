//go:build !linux

package main

// execWithTimerSlack does nothing where there is no per-thread timer
// slack to set.
func execWithTimerSlack([]string) {}
