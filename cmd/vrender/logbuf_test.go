package main

import (
	"log/slog"
	"strings"
	"testing"
)

func TestBufferedLogFlushesWarningsAtOnceAndAllOnClose(t *testing.T) {
	var out syncBuffer
	buf := newBufferedLog(&out)
	log := slog.New(flushingHandler{slog.NewTextHandler(buf, nil), buf})
	log.Warn("disk full")
	if !strings.Contains(out.String(), "disk full") {
		t.Fatalf("warning not flushed at once: %q", out.String())
	}
	log.With("k", "v").Info("request")
	if err := buf.Close(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "msg=request k=v") {
		t.Fatalf("info line lost on Close: %q", got)
	}
}
