package main

import (
	"context"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// startServe runs `vrender serve args...` in-process until the test ends and
// returns the address it listens on (pass --port 0), its log, and a stop
// function that shuts it down and waits (also run at cleanup).
func startServe(t *testing.T, args ...string) (addr string, logs *syncBuffer, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs = &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve"}, args...), strings.NewReader(""), io.Discard, logs)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case code := <-done:
				if code != 0 {
					t.Errorf("serve exit %d after shutdown:\n%s", code, logs)
				}
			case <-time.After(10 * time.Second):
				t.Error("serve did not stop")
			}
		})
	}
	t.Cleanup(stop)
	addrRE := regexp.MustCompile(`msg=serving addr=(\S+)`)
	for deadline := time.Now().Add(30 * time.Second); ; {
		if m := addrRE.FindStringSubmatch(logs.String()); m != nil {
			return m[1], logs, stop
		}
		select {
		case code := <-done:
			done <- code // let the cleanup see it
			t.Fatalf("serve exited %d early:\n%s", code, logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server never logged its address:\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
