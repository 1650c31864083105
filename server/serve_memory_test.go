package server

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestIdleEnough(t *testing.T) {
	tests := []struct {
		name     string
		active   int64
		finished int64 // requests finished since the previous tick
		since    int64 // requests finished since the last release
		free     uint64
		want     bool
	}{
		{name: "idle with free heap", free: 64 << 20, want: true},
		{name: "idle, health checks only", finished: 5, free: 64 << 20, want: true},
		{name: "idle, little free heap, little traffic", since: 10, free: 1 << 20},
		{name: "idle after a burst, garbage not yet collected", since: 6000, free: 1 << 20, want: true},
		{name: "a request running", active: 1, since: 6000, free: 64 << 20},
		{name: "busy", finished: 10 * idleRequests, since: 6000, free: 64 << 20},
	}
	for _, tt := range tests {
		if got := idleEnough(tt.active, tt.finished, tt.since, func() uint64 { return tt.free }); got != tt.want {
			t.Errorf("%s: idleEnough = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestReleaseWhenIdle(t *testing.T) {
	var active, finished, releases atomic.Int64
	opts := ServeOptions{IdleMemoryRelease: 5 * time.Millisecond,
		releaseMemory: func() { releases.Add(1) },
		freeHeapBytes: func() uint64 { return 64 << 20 }}
	active.Store(1)
	stop := releaseWhenIdle(opts, &active, &finished)
	time.Sleep(30 * time.Millisecond)
	if releases.Load() != 0 {
		t.Fatal("released while a request was running")
	}
	active.Store(0)
	deadline := time.Now().Add(2 * time.Second)
	for releases.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	if releases.Load() == 0 {
		t.Fatal("never released once idle")
	}
}

func TestReleaseWhenIdleDisabled(t *testing.T) {
	var active, finished atomic.Int64
	called := false
	stop := releaseWhenIdle(ServeOptions{IdleMemoryRelease: -1, releaseMemory: func() { called = true }}, &active, &finished)
	time.Sleep(20 * time.Millisecond)
	stop()
	if called {
		t.Fatal("released with the release disabled")
	}
}
