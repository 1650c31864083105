package orchestrator

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/vrender/vrender/anthropic"
	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// Messages serves one Anthropic Messages request, already converted to the
// chat request vLLM's AnthropicServingMessages builds (anthropic.ToChat):
// it runs as a chat completion and its answer is converted back as
// messages_full_converter and message_stream_converter do
// (vllm/entrypoints/anthropic/serving.py). A non-streaming request gets its
// JSON body back; a streaming one is written to sink as Anthropic's SSE
// events and returns (nil, nil), or an error when it failed before
// anything was written.
func (o *Orchestrator) Messages(ctx context.Context, req *protocol.ChatCompletionRequest, baseID string, sink Sink) ([]byte, error) {
	o.cfg.Metrics.messagesRequests.Add(1)
	body, err := o.messages(ctx, req, baseID, sink)
	if err != nil {
		o.cfg.Metrics.failed.Add(1)
	}
	return body, err
}

func (o *Orchestrator) messages(ctx context.Context, req *protocol.ChatCompletionRequest, baseID string, sink Sink) ([]byte, error) {
	rctx, span := startSpan(ctx, "render")
	rendered, err := o.cfg.Generator.RenderChat(rctx, req)
	endSpan(span, err)
	if err != nil {
		return nil, AsError(err)
	}
	stream := req.Stream != nil && *req.Stream
	var newOut func(*chatRun) chatStream
	if stream {
		newOut = func(r *chatRun) chatStream { return &anthropicStream{run: r, toolIDs: map[int]string{}} }
	}
	res, err := o.generateChat(ctx, req, rendered.Request, "chatcmpl-"+baseID, stream, newOut, sink, epMessages)
	if err != nil || res == nil {
		return nil, err
	}
	return anthropicAnswer(res)
}

// anthropicAnswer is messages_full_converter: a thinking block (with a
// random signature) for the reasoning, a text block for non-empty content,
// a tool_use block per tool call with its arguments parsed as the input.
func anthropicAnswer(res *protocol.ServedChatResponse) ([]byte, error) {
	c := res.Choices[0]
	var blocks []anthropic.Block
	if m := c.Message; m.Reasoning != nil && *m.Reasoning != "" {
		blocks = append(blocks, anthropic.Block{Type: "thinking", Thinking: *m.Reasoning, Signature: signature()})
	}
	if m := c.Message; m.Content != nil && *m.Content != "" {
		blocks = append(blocks, anthropic.Block{Type: "text", Text: *m.Content})
	}
	for _, tc := range c.Message.ToolCalls {
		input, err := toolInput(tc.Function.Arguments)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, anthropic.Block{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: input})
	}
	var stop *string
	if c.FinishReason != nil {
		if r, ok := anthropic.StopReason(*c.FinishReason); ok {
			stop = &r
		}
	}
	return anthropic.AppendMessage(nil, res.ID, res.Model, blocks, stop,
		res.Usage.PromptTokens, res.Usage.CompletionTokens, res.KVTransferParams)
}

// toolInput is json.loads(arguments) as a tool_use input: a JSON object,
// re-serialised as Python writes it; anything else fails as vLLM's
// pydantic validation of input (dict) does, with a 500.
func toolInput(args string) (json.RawMessage, error) {
	v, err := render.PyJSONCompact(json.RawMessage(args))
	if err != nil || len(v) == 0 || v[0] != '{' {
		msg := "tool call arguments are not a JSON object"
		if err != nil {
			msg = "tool call arguments are not valid JSON: " + err.Error()
		}
		return nil, &Error{Status: http.StatusInternalServerError, Type: "internal_error", Message: msg}
	}
	return v, nil
}

// signature is a thinking block's signature: uuid.uuid4().hex.
func signature() string { return strings.ReplaceAll(protocol.RandomUUID(), "-", "") }

// anthropicStream writes a chat run as message_stream_converter turns
// vLLM's chat chunks into Anthropic events: one content block open at a
// time, a new block when the kind of delta changes (thinking, text, one
// block per tool call), a signature_delta before a thinking block stops.
type anthropicStream struct {
	run *chatRun
	buf []byte
	// index is the next block's index; open is the open block's type
	// ("" when none), openIndex its index.
	index        int
	open         string
	openIndex    int
	sig          string // the open thinking block's signature
	toolID       string // the open tool_use block's id
	toolIDs      map[int]string
	finishReason string
}

func (a *anthropicStream) event(name string, data func([]byte) []byte) error {
	a.buf = anthropic.AppendEvent(a.buf[:0], name)
	a.buf = data(a.buf)
	a.buf = append(a.buf, "\n\n"...)
	if err := a.run.sink.Frame(a.buf); err != nil {
		return errClientGone
	}
	a.run.metrics.chunks.Add(1)
	return nil
}

// start commits the stream and sends message_start (vLLM sends it for
// the chat stream's first chunk, the role chunk).
func (a *anthropicStream) start() error {
	r := a.run
	if err := r.sink.Start(); err != nil {
		return errClientGone
	}
	r.started = true
	return a.event("message_start", func(b []byte) []byte {
		return anthropic.AppendMessageStart(b, r.id, r.model, len(r.prompt))
	})
}

func (a *anthropicStream) stopBlock() error {
	if a.open == "" {
		return nil
	}
	idx := a.openIndex
	if a.open == "thinking" && a.sig != "" {
		sig := a.sig
		if err := a.event("content_block_delta", func(b []byte) []byte {
			return anthropic.AppendDelta(b, idx, "signature_delta", sig)
		}); err != nil {
			return err
		}
	}
	a.open, a.sig, a.toolID = "", "", ""
	a.index++
	return a.event("content_block_stop", func(b []byte) []byte { return anthropic.AppendBlockStop(b, idx) })
}

func (a *anthropicStream) startBlock(blk anthropic.Block) error {
	idx := a.index
	if err := a.event("content_block_start", func(b []byte) []byte { return anthropic.AppendBlockStart(b, idx, &blk) }); err != nil {
		return err
	}
	a.open, a.openIndex = blk.Type, idx
	switch blk.Type {
	case "thinking":
		a.sig = signature()
	case "tool_use":
		a.toolID = blk.ID
	}
	return nil
}

func (a *anthropicStream) delta(deltaType, text string) error {
	idx := a.openIndex
	if a.open == "" {
		idx = a.index
	}
	return a.event("content_block_delta", func(b []byte) []byte { return anthropic.AppendDelta(b, idx, deltaType, text) })
}

// writeStep converts one chat delta: reasoning, then content, then tool
// calls, as the converter reads a chunk.
func (a *anthropicStream) writeStep(_ *protocol.GenerateChoice, step *derender.ChatStep) error {
	if step.FinishReason != nil {
		a.finishReason = *step.FinishReason
	}
	d := &step.Delta
	if d.Reasoning != nil && *d.Reasoning != "" {
		if a.open != "thinking" {
			if err := a.stopBlock(); err != nil {
				return err
			}
			if err := a.startBlock(anthropic.Block{Type: "thinking"}); err != nil {
				return err
			}
		}
		if err := a.delta("thinking_delta", *d.Reasoning); err != nil {
			return err
		}
	}
	if d.Content != nil && *d.Content != "" {
		if a.open != "text" {
			if err := a.stopBlock(); err != nil {
				return err
			}
			if err := a.startBlock(anthropic.Block{Type: "text"}); err != nil {
				return err
			}
		}
		if err := a.delta("text_delta", *d.Content); err != nil {
			return err
		}
	}
	for i := range d.ToolCalls {
		tc := &d.ToolCalls[i]
		args := ""
		if tc.Function.Arguments != nil {
			args = *tc.Function.Arguments
		}
		if tc.ID != nil {
			a.toolIDs[tc.Index] = *tc.ID
			if a.toolID != *tc.ID && tc.Function.Name != nil {
				if err := a.stopBlock(); err != nil {
					return err
				}
				if err := a.startBlock(anthropic.Block{Type: "tool_use", ID: *tc.ID, Name: *tc.Function.Name}); err != nil {
					return err
				}
			}
			if args != "" && a.toolID == *tc.ID {
				if err := a.delta("input_json_delta", args); err != nil {
					return err
				}
			}
			continue
		}
		if id, ok := a.toolIDs[tc.Index]; ok && args != "" && a.open == "tool_use" && a.toolID == id {
			if err := a.delta("input_json_delta", args); err != nil {
				return err
			}
		}
	}
	return nil
}

// finish closes the open block and sends message_delta (the chat
// stream's usage chunk) and message_stop (its [DONE]).
func (a *anthropicStream) finish(completion int) error {
	r := a.run
	if !r.started {
		if err := a.start(); err != nil {
			return err
		}
	}
	if err := a.stopBlock(); err != nil {
		return err
	}
	finish := a.finishReason
	if finish == "" {
		finish = "stop"
	}
	var stop *string
	if s, ok := anthropic.StopReason(finish); ok {
		stop = &s
	}
	if err := a.event("message_delta", func(b []byte) []byte {
		return anthropic.AppendMessageDelta(b, stop, len(r.prompt), completion)
	}); err != nil {
		return err
	}
	return a.event("message_stop", func(b []byte) []byte { return append(b, `{"type":"message_stop"}`...) })
}

// fail ends a started stream with an error event, as the converter does
// when the chat stream breaks (type internal_error).
func (a *anthropicStream) fail(e *Error) {
	r := a.run
	r.o.log.Warn("messages stream failed", "request_id", r.id, "status", e.Status, "err", e.Message)
	r.metrics.failed.Add(1)
	_ = a.event("error", func(b []byte) []byte {
		return anthropic.AppendError(b, "internal_error", protocol.SanitizeMessage(e.Message))
	})
}
