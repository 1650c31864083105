package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/vrender/vrender/features"
	"github.com/vrender/vrender/server"
)

// SendFloorCommand is the hidden `vrender bench` kind that runs the send
// floor's server (ServeSendFloor); `vrender serve` has no such route.
const SendFloorCommand = "send-floor-server"

// ServeSendFloor serves the send floor on addr until ctx ends: every POST
// to the render path has its body read whole and is answered with size
// bytes of JSON-safe text, written from memory in writes of
// features.StreamWriteBytes through the same net/http server and send
// buffer as `vrender serve` writes a streamed image answer. Its CPU per
// request is what receiving the request and sending an answer of that
// size costs over loopback with no image work at all: the least any
// renderer answering it could spend. GET /health answers 200 for the bench's readiness wait;
// anything else is a 404.
func ServeSendFloor(ctx context.Context, addr string, size int) error {
	if size < 2 {
		return fmt.Errorf("bench send floor: answer of %d bytes", size)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("bench send floor: %w", err)
	}
	srv := &http.Server{Handler: sendFloorHandler(size), ReadHeaderTimeout: time.Minute, ConnContext: server.LargeAnswerConnContext()}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("bench send floor: %w", err)
	}
	return nil
}

// sendFloorHandler answers as ServeSendFloor says, with one answer body
// made up front.
func sendFloorHandler(size int) http.Handler {
	answer := make([]byte, size)
	answer[0], answer[size-1] = '"', '"'
	for i := 1; i < size-1; i++ {
		answer[i] = 'A' + byte(i%26)
	}
	length := strconv.Itoa(size)
	// Requests are read whole into buffers kept between them, in reads as
	// large as the buffer's room: fewer system calls than the server's own
	// read into a buffer of the declared length, never more.
	bodies := sync.Pool{New: func() any { return new([]byte) }}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("POST "+imageRenderPath, func(w http.ResponseWriter, r *http.Request) {
		bp := bodies.Get().(*[]byte)
		defer bodies.Put(bp)
		body := bytes.NewBuffer((*bp)[:0])
		_, err := body.ReadFrom(r.Body)
		*bp = body.Bytes()[:0]
		if err != nil {
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", length)
		server.GrowSendBuffer(r.Context(), size)
		for rest := answer; len(rest) > 0; {
			n := min(len(rest), features.StreamWriteBytes)
			if _, err := w.Write(rest[:n]); err != nil {
				return
			}
			rest = rest[n:]
		}
	})
	return mux
}

// StartSendFloor starts ServeSendFloor as a child of opts.Bin (its
// SendFloorCommand), pinned and with GOMAXPROCS as StartServer starts
// `vrender serve`, answering size bytes.
func StartSendFloor(ctx context.Context, opts ServerOptions, size int) (*Server, error) {
	return startChild(ctx, opts, func(port int) []string {
		return []string{"bench", SendFloorCommand, "--addr", "127.0.0.1:" + strconv.Itoa(port), "--bytes", strconv.Itoa(size)}
	})
}
