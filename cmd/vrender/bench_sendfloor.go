package main

import (
	"context"
	"io"

	"github.com/vrender/vrender/bench"
)

// runSendFloorServer is the hidden `vrender bench send-floor-server`: the
// child `vrender bench images` measures its send floor against. It is
// listed nowhere, and `vrender serve` has no route to it.
func runSendFloorServer(ctx context.Context, args []string, stdout io.Writer) error {
	c := newCommand("bench "+bench.SendFloorCommand, "--addr HOST:PORT --bytes N",
		"Serve the send floor of `vrender bench images`: each POST /v1/chat/completions/render is answered with N static\n"+
			"bytes, written as `vrender serve` writes a streamed image answer. For the bench's own use.")
	addr := c.fs.String("addr", "127.0.0.1:0", "`HOST:PORT` to listen on")
	size := c.fs.Int("bytes", 0, "answer size in `BYTES` (at least 2)")
	rest, err := c.parse(args, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	if *size < 2 {
		return usagef("--bytes must be at least 2, got %d", *size)
	}
	return bench.ServeSendFloor(ctx, *addr, *size)
}
