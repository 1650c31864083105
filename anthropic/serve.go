package anthropic

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/orchestrator"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// Serve serves one Anthropic Messages request through o, already
// converted to the chat request vLLM's AnthropicServingMessages builds
// (ToChat): it runs as a chat completion and its answer is converted back
// as messages_full_converter and message_stream_converter do
// (vllm/entrypoints/anthropic/serving.py). A non-streaming request gets
// its JSON body back; a streaming one is written to sink as Anthropic's
// SSE events and returns (nil, nil), or an error when it failed before
// anything was written.
func Serve(ctx context.Context, o *orchestrator.Orchestrator, req *protocol.ChatCompletionRequest, baseID string, sink orchestrator.Sink) (protocol.Appender, error) {
	return o.Chat(ctx, orchestrator.ChatRun{
		API: orchestrator.APIMessages, Request: req, ID: "chatcmpl-" + baseID, Stream: req.Stream != nil && *req.Stream,
		Writer: func(s *orchestrator.Stream) orchestrator.StreamWriter {
			return &streamWriter{run: s, toolIDs: map[int]string{}}
		},
		Answer: answer,
	}, sink)
}

// answer is messages_full_converter: a thinking block (with a
// random signature) for the reasoning, a text block for non-empty content,
// a tool_use block per tool call with its arguments parsed as the input.
func answer(res *protocol.ServedChatResponse) (protocol.Appender, error) {
	c := res.Choices[0]
	var blocks []Block
	if m := c.Message; m.Reasoning != nil && *m.Reasoning != "" {
		blocks = append(blocks, Block{Type: "thinking", Thinking: *m.Reasoning, Signature: signature()})
	}
	if m := c.Message; m.Content != nil && *m.Content != "" {
		blocks = append(blocks, Block{Type: "text", Text: *m.Content})
	}
	for _, tc := range c.Message.ToolCalls {
		input, err := toolInput(tc.Function.Arguments)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, Block{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: input})
	}
	var stop *string
	if c.FinishReason != nil {
		if r, ok := StopReason(*c.FinishReason); ok {
			stop = &r
		}
	}
	body, err := AppendMessage(nil, res.ID, res.Model, blocks, stop,
		res.Usage.PromptTokens, res.Usage.CompletionTokens, res.KVTransferParams)
	if err != nil {
		return nil, err
	}
	return protocol.RawJSON(body), nil
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
		return nil, &orchestrator.Error{Status: http.StatusInternalServerError, Type: "internal_error", Message: msg}
	}
	return v, nil
}

// signature is a thinking block's signature: uuid.uuid4().hex.
func signature() string { return strings.ReplaceAll(protocol.RandomUUID(), "-", "") }

// streamWriter writes a chat run as message_stream_converter turns
// vLLM's chat chunks into Anthropic events: one content block open at a
// time, a new block when the kind of delta changes (thinking, text, one
// block per tool call), a signature_delta before a thinking block stops.
type streamWriter struct {
	run *orchestrator.Stream
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

func (a *streamWriter) event(name string, data func([]byte) []byte) error {
	a.buf = AppendEvent(a.buf[:0], name)
	a.buf = data(a.buf)
	a.buf = append(a.buf, "\n\n"...)
	return a.run.Frame(a.buf)
}

// Start commits the stream and sends message_start (vLLM sends it for
// the chat stream's first chunk, the role chunk).
func (a *streamWriter) Start() error {
	r := a.run
	if err := r.Open(); err != nil {
		return err
	}
	return a.event("message_start", func(b []byte) []byte {
		return AppendMessageStart(b, r.ID(), r.Model(), r.PromptTokens())
	})
}

func (a *streamWriter) stopBlock() error {
	if a.open == "" {
		return nil
	}
	idx := a.openIndex
	if a.open == "thinking" && a.sig != "" {
		sig := a.sig
		if err := a.event("content_block_delta", func(b []byte) []byte {
			return AppendDelta(b, idx, "signature_delta", sig)
		}); err != nil {
			return err
		}
	}
	a.open, a.sig, a.toolID = "", "", ""
	a.index++
	return a.event("content_block_stop", func(b []byte) []byte { return AppendBlockStop(b, idx) })
}

func (a *streamWriter) startBlock(blk Block) error {
	idx := a.index
	if err := a.event("content_block_start", func(b []byte) []byte { return AppendBlockStart(b, idx, &blk) }); err != nil {
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

func (a *streamWriter) delta(deltaType, text string) error {
	idx := a.openIndex
	if a.open == "" {
		idx = a.index
	}
	return a.event("content_block_delta", func(b []byte) []byte { return AppendDelta(b, idx, deltaType, text) })
}

// WriteStep converts one chat delta: reasoning, then content, then tool
// calls, as the converter reads a chunk.
func (a *streamWriter) WriteStep(_ *protocol.GenerateChoice, step *derender.ChatStep) error {
	if step.FinishReason != nil {
		a.finishReason = *step.FinishReason
	}
	d := &step.Delta
	if d.Reasoning != nil && *d.Reasoning != "" {
		if a.open != "thinking" {
			if err := a.stopBlock(); err != nil {
				return err
			}
			if err := a.startBlock(Block{Type: "thinking"}); err != nil {
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
			if err := a.startBlock(Block{Type: "text"}); err != nil {
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
				if err := a.startBlock(Block{Type: "tool_use", ID: *tc.ID, Name: *tc.Function.Name}); err != nil {
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

// Finish closes the open block and sends message_delta (the chat
// stream's usage chunk) and message_stop (its [DONE]).
func (a *streamWriter) Finish(completion int) error {
	r := a.run
	if !r.Started() {
		if err := a.Start(); err != nil {
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
	if s, ok := StopReason(finish); ok {
		stop = &s
	}
	if err := a.event("message_delta", func(b []byte) []byte {
		return AppendMessageDelta(b, stop, r.PromptTokens(), completion)
	}); err != nil {
		return err
	}
	return a.event("message_stop", func(b []byte) []byte { return append(b, `{"type":"message_stop"}`...) })
}

// Fail ends a started stream with an error event, as the converter does
// when the chat stream breaks (type internal_error).
func (a *streamWriter) Fail(e *orchestrator.Error) {
	a.run.Failed(e)
	_ = a.event("error", func(b []byte) []byte {
		return AppendError(b, "internal_error", pylax.SanitizeMessage(e.Message))
	})
}
