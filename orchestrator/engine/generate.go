package engine

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/vrender/vrender/protocol"
)

// Generate sends a non-streaming generate for req under requestID and
// returns the engine's response (stream=false, no stream_options; req is
// left unmodified). The first-event timeout bounds the whole exchange.
// Errors are classified as for Stream. A choice without a finish_reason
// gets "stop", as vLLM's non-streaming response defaults it.
func (c *Client) Generate(ctx context.Context, req *protocol.GenerateRequest, requestID string) (*protocol.GenerateResponse, error) {
	if req == nil {
		return nil, errors.New("engine generate: nil request")
	}
	body, err := c.encode(req, requestID, false)
	if err != nil {
		return nil, fmt.Errorf("engine generate %s: encoding the request: %w", requestID, err)
	}
	defer body.release() // the attempts hold it until the transport is done
	gctx, cancel := context.WithCancelCause(ctx)
	defer cancel(errStreamClosed)
	wd := newWatchdog(cancel, c.firstEventTimeout, c.idleTimeout)
	wd.arm(phaseBody)
	defer wd.stop()
	if t := totalTimer(cancel, c.totalTimeout); t != nil {
		defer t.Stop()
	}

	resp, err := c.send(gctx, body, requestID, false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody+1))
	if err != nil {
		if gctx.Err() != nil {
			if cause := context.Cause(gctx); errors.Is(cause, errTimedOut) {
				return nil, gatewayTimeout("%s", cause)
			}
			return nil, fmt.Errorf("engine generate %s: %w", requestID, ctx.Err())
		}
		return nil, badGateway(err, "engine closed the connection before its answer was complete: %v", err)
	}
	if len(data) > maxResponseBody {
		return nil, badGateway(nil, "engine answer exceeds %d bytes", maxResponseBody)
	}
	var dec eventDecoder
	out, err := dec.decode(data)
	if err != nil {
		return nil, err
	}
	if c.items != nil {
		c.record(allBrought(req).brought) // the engine holds what it accepted
	}
	for i := range out.Choices {
		if out.Choices[i].FinishReason == nil {
			stop := "stop"
			out.Choices[i].FinishReason = &stop
		}
	}
	return out, nil
}
