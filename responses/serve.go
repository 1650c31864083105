package responses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/internal/pylax"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/orchestrator"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// Serve serves one OpenAI Responses request through o the way vLLM's
// non-Harmony path does (vllm/entrypoints/openai/responses/serving.py):
// rendered as /v1/responses/render renders it, run and derendered as a
// chat completion, and answered as a ResponsesResponse (non-streaming) or
// as the Responses event stream (simple_streaming_events.py),
// sequence-numbered and closed by response.completed with the whole
// response. A streaming request returns (nil, nil) once written, or an
// error when it failed before anything was written.
func Serve(ctx context.Context, o *orchestrator.Orchestrator, r *Request, sink orchestrator.Sink) (protocol.Appender, error) {
	var meta *responsesMeta
	parsers := o.Parsers()
	return o.Chat(ctx, orchestrator.ChatRun{
		API: orchestrator.APIResponses, Stream: r.Stream,
		Render: func(ctx context.Context) (*protocol.ChatCompletionRequest, *render.ChatResult, error) {
			creq, g, m, err := prepare(ctx, o, r)
			meta = m
			return creq, g, err
		},
		Writer: func(run *orchestrator.Stream) orchestrator.StreamWriter {
			return &streamWriter{run: run, meta: meta, logprobs: r.IncludesOutputLogprobs(),
				bothParsers: parsers.ReasoningParser != "" && parsers.ToolParser != "", started: map[int]bool{}}
		},
		Answer: func(res *protocol.ServedChatResponse) (protocol.Appender, error) {
			return protocol.RawJSON(meta.answer(r, res)), nil
		},
	}, sink)
}

// prepare converts and renders r for Serve, and what its response
// objects repeat; an error is a *pylax.ValidationError (pydantic's 400)
// or an *orchestrator.Error.
func prepare(ctx context.Context, o *orchestrator.Orchestrator, r *Request) (*protocol.ChatCompletionRequest, *render.ChatResult, *responsesMeta, error) {
	if r.PreviousResponseID != nil {
		// vLLM keeps no responses unless VLLM_ENABLE_RESPONSES_API_STORE is
		// set, so every previous response is unknown (_make_not_found_error).
		p := "response_id"
		return nil, nil, nil, &orchestrator.Error{Status: http.StatusNotFound, Type: "invalid_request_error",
			Message: fmt.Sprintf("Response with id '%s' not found.", *r.PreviousResponseID), Param: &p}
	}
	creq, err := ToChat(r)
	var res *render.ChatResult
	if err == nil {
		res, err = renderChat(ctx, o.Generator(), r, creq)
	}
	if err != nil {
		var ve *pylax.ValidationError
		if errors.As(err, &ve) {
			return nil, nil, nil, err // the HTTP layer writes pydantic's 400
		}
		return nil, nil, nil, responsesError(err)
	}
	return creq, res, newMeta(o.ResponseModel(r.Model), r, &res.Request), nil
}

// answer is the response object of a non-streaming answer.
func (m *responsesMeta) answer(r *Request, res *protocol.ServedChatResponse) []byte {
	c := res.Choices[0]
	var reasoning, content string
	if c.Message.Reasoning != nil {
		reasoning = *c.Message.Reasoning
	}
	if c.Message.Content != nil {
		content = *c.Message.Content
	}
	var lps []Logprob
	if r.IncludesOutputLogprobs() && c.Logprobs != nil {
		lps = responsesLogprobs(c.Logprobs.Content)
	}
	calls := make([]responsesCall, len(c.Message.ToolCalls))
	for i, tc := range c.Message.ToolCalls {
		calls[i] = responsesCall{callID: tc.ID, name: tc.Function.Name, args: tc.Function.Arguments}
	}
	finish := ""
	if c.FinishReason != nil {
		finish = *c.FinishReason
	}
	return m.response(res.Created, finish, reasoning, content, lps, calls, res.Usage.PromptTokens, res.Usage.CompletionTokens)
}

// responsesError maps the Responses conversion's own 400s; others are
// classified by orchestrator.AsError.
func responsesError(err error) *orchestrator.Error {
	var pe *ParamError
	if errors.As(err, &pe) {
		e := &orchestrator.Error{Status: http.StatusBadRequest, Type: protocol.ErrorTypeBadRequest, Message: pe.Message}
		if pe.Type != "" {
			e.Type = pe.Type
		}
		if pe.Param != "" {
			p := pe.Param
			e.Param = &p
		}
		return e
	}
	return orchestrator.AsError(err)
}

// responsesMeta is what every response object of one request repeats
// (ResponsesResponse.from_request).
type responsesMeta struct {
	base Response
}

func newMeta(model string, r *Request, g *protocol.GenerateRequest) *responsesMeta {
	b := Response{ID: g.RequestID, Instructions: r.Instructions, Model: model,
		ParallelToolCalls: r.ParallelToolCalls, Temperature: g.SamplingParams.Temperature, TopP: g.SamplingParams.TopP,
		MaxToolCalls: r.MaxToolCalls, TopLogprobs: g.SamplingParams.Logprobs, Truncation: r.Truncation, User: r.User}
	if g.SamplingParams.MaxTokens != nil {
		b.MaxOutputTokens = *g.SamplingParams.MaxTokens
	}
	b.Metadata = pyCompactOrNil(r.Metadata)
	b.ToolChoice = pyCompactOrNil(r.ToolChoiceEcho)
	b.Tools = responsesToolDumps(r.Tools)
	if r.Reasoning != nil {
		var rb []byte
		rb = append(rb, `{"effort":`...)
		if r.Reasoning.Effort != nil {
			rb = wire.AppendString(rb, *r.Reasoning.Effort)
		} else {
			rb = append(rb, "null"...)
		}
		b.Reasoning = append(rb, `,"generate_summary":null,"summary":null}`...)
	}
	// adjust_request clears text when it constrains tool calls with a
	// structural tag (text and a client's structural tag would have been
	// refused), so the response echoes none.
	if so := g.SamplingParams.StructuredOutputs; r.Text != nil && (so == nil || so.StructuralTag == nil) {
		b.Text = responsesTextDump(r.Text)
	}
	return &responsesMeta{base: b}
}

// pyCompactOrNil is n as vLLM's JSONResponse writes it, nil for no value.
func pyCompactOrNil(n *wire.Node) json.RawMessage {
	if n == nil {
		return nil
	}
	return pylax.AppendPyCompact(nil, n)
}

// responsesToolDumps are the request's tools as the response object dumps
// them: a function tool as openai's FunctionTool (name, parameters, strict,
// type, description), other tools as sent.
func responsesToolDumps(tools []*wire.Node) json.RawMessage {
	out := []byte{'['}
	for i, n := range tools {
		if i > 0 {
			out = append(out, ',')
		}
		typ, _ := n.Get("type")
		name, _ := n.Get("name")
		if n.Kind != wire.Object || typ == nil || typ.Kind != wire.String || typ.S != "function" ||
			name == nil || name.Kind != wire.String {
			out = pylax.AppendPyCompact(out, n)
			continue
		}
		out = append(out, `{"name":`...)
		out = wire.AppendString(out, name.S)
		for _, k := range []string{"parameters", "strict", "type", "description"} {
			out = append(out, ',')
			out = wire.AppendString(out, k)
			out = append(out, ':')
			if k == "type" {
				out = append(out, `"function"`...)
				continue
			}
			out = appendMemberPyCompact(out, n, k)
		}
		out = append(out, '}')
	}
	return append(out, ']')
}

// appendMemberPyCompact appends an object's member as vLLM's JSONResponse
// writes it, null when absent.
func appendMemberPyCompact(dst []byte, n *wire.Node, key string) []byte {
	m, ok := n.Get(key)
	if !ok {
		return append(dst, "null"...)
	}
	return pylax.AppendPyCompact(dst, m)
}

// responsesTextDump is ResponseTextConfig.model_dump(): the format by its
// type's model, and verbosity.
func responsesTextDump(t *Text) json.RawMessage {
	out := []byte(`{"format":`)
	switch f := t.Format; {
	case f == nil:
		out = append(out, "null"...)
	case f.Type == "json_schema":
		out = append(out, `{"name":`...)
		if f.Name != nil {
			out = wire.AppendString(out, *f.Name)
		} else {
			out = append(out, "null"...)
		}
		out = append(out, `,"schema":`...)
		if f.Schema == nil {
			out = append(out, "null"...)
		} else {
			out = pylax.AppendPyCompact(out, f.Schema)
		}
		out = append(out, `,"type":"json_schema","description":null,"strict":`...)
		if f.Strict != nil {
			out = strconv.AppendBool(out, *f.Strict)
		} else {
			out = append(out, "null"...)
		}
		out = append(out, '}')
	default:
		out = append(out, `{"type":`...)
		out = wire.AppendString(out, f.Type)
		out = append(out, '}')
	}
	return append(out, `,"verbosity":null}`...)
}

// responsesCall is one function call of the answer.
type responsesCall struct {
	callID, name, args string
}

// response is the response object for a finished answer: the output items
// build_response_output_items makes (a reasoning item, a message for
// non-empty content, one function_call per tool call), status
// "incomplete" when the length limit ended it.
func (m *responsesMeta) response(created int64, finish, reasoning, content string, lps []Logprob,
	calls []responsesCall, prompt, completion int) []byte {
	r := m.base
	r.CreatedAt = created
	r.Status = "completed"
	if finish == "length" {
		r.Status, r.Incomplete = "incomplete", true
	}
	var out []byte
	out = append(out, '[')
	sep := func() {
		if len(out) > 1 {
			out = append(out, ',')
		}
	}
	if reasoning != "" {
		sep()
		out = AppendReasoningItem(out, "rs_"+protocol.RandomUUID(), reasoning, ItemFinal)
	}
	if content != "" {
		sep()
		out = AppendMessageItem(out, "msg_"+protocol.RandomUUID(), content, lps, ItemFinal)
	}
	for _, c := range calls {
		sep()
		callID := c.callID
		if callID == "" {
			callID = "call_" + protocol.RandomUUID()
		}
		out = AppendFunctionCallItem(out, "fc_"+protocol.RandomUUID(), callID, c.name, c.args, ItemFinal)
	}
	r.Output = append(out, ']')
	r.Usage = &Usage{Input: prompt, Output: completion}
	return AppendResponse(nil, &r)
}

// responsesLogprobs converts chat logprobs to the Responses shape.
func responsesLogprobs(content []protocol.ChatLogProbsContent) []Logprob {
	out := make([]Logprob, 0, len(content))
	for _, c := range content {
		// Bytes are copied: a streaming session reuses its step's buffers.
		lp := Logprob{Token: c.Token, Bytes: slices.Clone(c.Bytes), Logprob: derefLogprob(c.Logprob),
			Top: make([]Logprob, 0, len(c.TopLogprobs))}
		for _, t := range c.TopLogprobs {
			lp.Top = append(lp.Top, Logprob{Token: t.Token, Bytes: slices.Clone(t.Bytes), Logprob: derefLogprob(t.Logprob)})
		}
		out = append(out, lp)
	}
	return out
}

func derefLogprob(p *float64) float64 {
	if p == nil {
		return -9999.0
	}
	return max(*p, -9999.0)
}

// respDelta is one delta message of process_simple_stream: at most one of
// reasoning and content with at most one tool call.
type respDelta struct {
	reasoning, content *string
	tool               *protocol.ToolCallDelta
}

// streamWriter writes a chat run as vLLM's simple (non-Harmony) Responses
// stream: response.created and response.in_progress, then
// process_simple_stream's item events over the derendered deltas, then
// response.completed with the whole response.
type streamWriter struct {
	run         *orchestrator.Stream
	meta        *responsesMeta
	bothParsers bool // a reasoning and a tool parser: vLLM's whitespace quirks apply
	// logprobs: include asks for message.output_text.logprobs; stepLP are
	// the current engine event's, which every text event of the event
	// carries, as process_simple_stream's logprobs_data.
	logprobs bool
	stepLP   []Logprob
	ev       Event
	seq      int

	contentIndex, outputIndex int
	itemID, callID, callName  string
	firstToolCall, begun      bool
	spaces                    string
	prev                      []respDelta
	started                   map[int]bool

	// The answer so far, for response.completed.
	reasoning, content strings.Builder
	allLP              []Logprob
	calls              []responsesCall
	callIndex          map[int]int
	finishReason       string
}

func (s *streamWriter) send() error {
	s.seq++
	return s.run.Frame(s.ev.Buf)
}

func (s *streamWriter) envelope(typ string, body []byte) error {
	s.ev.Begin(typ)
	s.ev.Raw("response", body)
	s.ev.End(s.seq, typ)
	return s.send()
}

func (s *streamWriter) Start() error {
	r := s.run
	if err := r.Open(); err != nil {
		return err
	}
	initial := s.meta.base
	initial.CreatedAt, initial.Status = r.Created(), "in_progress"
	body := AppendResponse(nil, &initial)
	if err := s.envelope("response.created", body); err != nil {
		return err
	}
	return s.envelope("response.in_progress", body)
}

func (s *streamWriter) itemAdded(item []byte) error {
	s.ev.Begin("response.output_item.added")
	s.ev.Raw("item", item)
	s.ev.Int("output_index", s.outputIndex)
	s.ev.End(s.seq, "response.output_item.added")
	return s.send()
}

func (s *streamWriter) itemDone(item []byte) error {
	s.ev.Begin("response.output_item.done")
	s.ev.Raw("item", item)
	s.ev.Int("output_index", s.outputIndex)
	s.ev.End(s.seq, "response.output_item.done")
	return s.send()
}

func (s *streamWriter) part(typ string, part []byte) error {
	s.ev.Begin(typ)
	s.ev.Int("content_index", s.contentIndex)
	s.ev.String("item_id", s.itemID)
	s.ev.Int("output_index", s.outputIndex)
	s.ev.Raw("part", part)
	s.ev.End(s.seq, typ)
	return s.send()
}

func (s *streamWriter) addReasoningItem() error {
	if err := s.itemAdded(AppendReasoningItem(nil, s.itemID, "", ItemAdded)); err != nil {
		return err
	}
	return s.part("response.content_part.added", []byte(`{"text":"","type":"reasoning_text"}`))
}

func (s *streamWriter) addTextItem() error {
	if err := s.itemAdded(AppendMessageItem(nil, s.itemID, "", nil, ItemAdded)); err != nil {
		return err
	}
	part := append([]byte(`{"annotations":[],"text":"","type":"output_text","logprobs":`), AppendStreamLogprobs(nil, s.stepLP)...)
	return s.part("response.content_part.added", append(part, '}'))
}

func (s *streamWriter) reasoningDelta(d string) error {
	s.reasoning.WriteString(d)
	s.ev.Begin("response.reasoning_text.delta")
	s.ev.Int("content_index", s.contentIndex)
	s.ev.String("delta", d)
	s.ev.String("item_id", s.itemID)
	s.ev.Int("output_index", s.outputIndex)
	s.ev.End(s.seq, "response.reasoning_text.delta")
	return s.send()
}

func (s *streamWriter) textDelta(d string) error {
	s.content.WriteString(d)
	s.ev.Begin("response.output_text.delta")
	s.ev.Int("content_index", s.contentIndex)
	s.ev.String("delta", d)
	s.ev.String("item_id", s.itemID)
	s.ev.Raw("logprobs", AppendStreamLogprobs(nil, s.stepLP))
	s.ev.Int("output_index", s.outputIndex)
	s.ev.End(s.seq, "response.output_text.delta")
	return s.send()
}

func (s *streamWriter) reasoningDone(text string) error {
	s.ev.Begin("response.reasoning_text.done")
	s.ev.Int("content_index", s.contentIndex)
	s.ev.String("item_id", s.itemID)
	s.ev.Int("output_index", s.outputIndex)
	s.ev.EndText(s.seq, text, "response.reasoning_text.done")
	if err := s.send(); err != nil {
		return err
	}
	part := append(append([]byte(`{"text":`), wire.AppendString(nil, text)...), `,"type":"reasoning_text"}`...)
	if err := s.part("response.content_part.done", part); err != nil {
		return err
	}
	return s.itemDone(AppendReasoningItem(nil, s.itemID, text, ItemDone))
}

func (s *streamWriter) textDone(text string) error {
	s.ev.Begin("response.output_text.done")
	s.ev.Int("content_index", s.contentIndex)
	s.ev.String("item_id", s.itemID)
	s.ev.Raw("logprobs", AppendStreamLogprobs(nil, s.stepLP))
	s.ev.Int("output_index", s.outputIndex)
	s.ev.EndText(s.seq, text, "response.output_text.done")
	if err := s.send(); err != nil {
		return err
	}
	if err := s.part("response.content_part.done", AppendOutputText(nil, text, nil)); err != nil {
		return err
	}
	return s.itemDone(AppendMessageItem(nil, s.itemID, text, s.stepLP, ItemDone))
}

func (s *streamWriter) toolAdded(args string) error {
	return s.itemAdded(AppendFunctionCallItem(nil, s.itemID, s.callID, s.callName, args, ItemAdded))
}

func (s *streamWriter) argsDelta(d string) error {
	s.ev.Begin("response.function_call_arguments.delta")
	s.ev.String("delta", d)
	s.ev.String("item_id", s.itemID)
	s.ev.Int("output_index", s.outputIndex)
	s.ev.End(s.seq, "response.function_call_arguments.delta")
	return s.send()
}

func (s *streamWriter) toolDone(args string) error {
	s.ev.Begin("response.function_call_arguments.done")
	s.ev.String("arguments", args)
	s.ev.String("item_id", s.itemID)
	s.ev.String("name", s.callName)
	s.ev.Int("output_index", s.outputIndex)
	s.ev.End(s.seq, "response.function_call_arguments.done")
	if err := s.send(); err != nil {
		return err
	}
	return s.itemDone(AppendFunctionCallItem(nil, s.itemID, s.callID, s.callName, args, ItemDone))
}

func joinDeltas(prev []respDelta, pick func(respDelta) *string) string {
	var b strings.Builder
	for _, d := range prev {
		if p := pick(d); p != nil {
			b.WriteString(*p)
		}
	}
	return b.String()
}

// flushReasoning sends dm's reasoning, if any, as the last delta of the
// reasoning item and returns the item's whole text; dm keeps no reasoning.
func (s *streamWriter) flushReasoning(dm *respDelta) (string, error) {
	final := joinDeltas(s.prev, reasoningOf)
	if dm.reasoning != nil {
		if err := s.reasoningDelta(*dm.reasoning); err != nil {
			return "", err
		}
		final += *dm.reasoning
		dm.reasoning = nil
	}
	return final, nil
}

// flushContent is flushReasoning for the output text item.
func (s *streamWriter) flushContent(dm *respDelta) (string, error) {
	final := joinDeltas(s.prev, contentOf)
	if dm.content != nil {
		if err := s.textDelta(*dm.content); err != nil {
			return "", err
		}
		final += *dm.content
		dm.content = nil
	}
	return final, nil
}

func reasoningOf(d respDelta) *string { return d.reasoning }
func contentOf(d respDelta) *string   { return d.content }
func argsOf(d respDelta) *string {
	if d.tool == nil {
		return nil
	}
	return d.tool.Function.Arguments
}

func nonEmpty(p *string) *string {
	if p == nil || *p == "" {
		return nil
	}
	return p
}

// Observe converts every engine event's logprobs: the text events of an
// emitted step carry them, and response.completed carries all of them.
func (s *streamWriter) Observe(step *derender.ChatStep) {
	s.stepLP = nil
	if s.logprobs && step.Logprobs != nil {
		s.stepLP = responsesLogprobs(step.Logprobs.Content)
		s.allLP = append(s.allLP, s.stepLP...)
	}
}

// WriteStep splits the step's delta into process_simple_stream's delta
// messages (one tool call each) and runs them.
func (s *streamWriter) WriteStep(_ *protocol.GenerateChoice, step *derender.ChatStep) error {
	if step.FinishReason != nil {
		s.finishReason = *step.FinishReason
	}
	d := &step.Delta
	content := d.Content
	if s.bothParsers && content != nil {
		// parser/model quirks of _parse_delta_message: no text once a tool
		// call started, whitespace-only text before any text held back.
		if s.firstToolCall {
			content = nil
		} else if *content != "" && (len(s.prev) == 0 || nonEmpty(s.prev[len(s.prev)-1].content) == nil) &&
			isSpace(*content) {
			s.spaces += *content
			content = nil
		}
	}
	first := respDelta{reasoning: nonEmpty(d.Reasoning), content: nonEmpty(content)}
	if len(d.ToolCalls) == 0 {
		if first.reasoning == nil && first.content == nil {
			return nil
		}
		return s.delta(first)
	}
	for i := range d.ToolCalls {
		dm := respDelta{tool: &d.ToolCalls[i]}
		if i == 0 {
			dm.reasoning, dm.content = first.reasoning, first.content
		}
		if err := s.delta(dm); err != nil {
			return err
		}
	}
	return nil
}

// isSpace is Python's str.isspace for a non-empty string.
func isSpace(s string) bool {
	for _, r := range s {
		switch r {
		case ' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		default:
			if r < 0x2000 || r > 0x200a {
				return false
			}
		}
	}
	return s != ""
}

// delta is one iteration of process_simple_stream's loop.
func (s *streamWriter) delta(dm respDelta) error {
	s.record(dm)
	if !s.begun {
		if dm.tool != nil && dm.tool.Function.Name == nil {
			return nil
		}
		if err := s.begin(dm); err != nil {
			return err
		}
	}
	switch {
	case s.last() != nil && s.last().reasoning != nil && dm.content != nil:
		// reasoning to output text
		final, err := s.flushReasoning(&dm)
		if err != nil {
			return err
		}
		if err := s.reasoningDone(final); err != nil {
			return err
		}
		s.outputIndex++
		s.contentIndex = 0
		s.prev = s.prev[:0]
		s.itemID = protocol.RandomUUID()
		if err := s.addTextItem(); err != nil {
			return err
		}
		text := s.spaces + *dm.content
		s.spaces = ""
		dm.content = &text
		if err := s.textDelta(text); err != nil {
			return err
		}
	case dm.tool != nil:
		if err := s.toolDelta(&dm); err != nil {
			return err
		}
	case dm.reasoning != nil:
		if err := s.reasoningDelta(*dm.reasoning); err != nil {
			return err
		}
	case dm.content != nil:
		if err := s.textDelta(*dm.content); err != nil {
			return err
		}
	}
	s.prev = append(s.prev, copyDelta(dm))
	return nil
}

// begin opens the stream's first item for its first delta.
func (s *streamWriter) begin(dm respDelta) error {
	s.begun = true
	switch {
	case dm.tool != nil:
		s.started[0] = true
		return s.startTool(dm.tool)
	case dm.reasoning != nil:
		s.itemID = protocol.RandomUUID()
		return s.addReasoningItem()
	case dm.content != nil:
		s.itemID = protocol.RandomUUID()
		return s.addTextItem()
	}
	return nil
}

// startTool opens a function_call item for a tool call's first delta.
func (s *streamWriter) startTool(tc *protocol.ToolCallDelta) error {
	s.firstToolCall = true
	s.itemID = protocol.RandomUUID()
	s.callID = "call_" + protocol.RandomUUID()
	s.callName = *tc.Function.Name
	args := ""
	if tc.Function.Arguments != nil {
		args = *tc.Function.Arguments
	}
	return s.toolAdded(args)
}

// last is the previous delta of the open item, nil when there is none.
func (s *streamWriter) last() *respDelta {
	if len(s.prev) == 0 {
		return nil
	}
	return &s.prev[len(s.prev)-1]
}

// toolDelta is the loop's tool-call branch: the open reasoning or text
// item is closed, as is a previous call's item, before the call's
// function_call item opens or its arguments grow.
func (s *streamWriter) toolDelta(dm *respDelta) error {
	if l := s.last(); l != nil && (l.reasoning != nil || l.content != nil) {
		final, err := s.flushReasoning(dm)
		if err != nil {
			return err
		}
		if nonEmpty(l.reasoning) != nil {
			if err := s.reasoningDone(final); err != nil {
				return err
			}
			s.outputIndex++
		}
		finalContent, err := s.flushContent(dm)
		if err != nil {
			return err
		}
		if nonEmpty(l.content) != nil {
			if err := s.textDone(finalContent); err != nil {
				return err
			}
			s.outputIndex++
		}
		s.prev = s.prev[:0]
		s.contentIndex = 0
	}
	if l := s.last(); l != nil && l.tool != nil && l.tool.Index != dm.tool.Index {
		if err := s.toolDone(joinDeltas(s.prev, argsOf)); err != nil {
			return err
		}
		s.prev = s.prev[:0]
		s.outputIndex++
	}
	if dm.tool.Function.Name != nil && *dm.tool.Function.Name != "" && !s.started[dm.tool.Index] {
		if err := s.startTool(dm.tool); err != nil {
			return err
		}
		s.started[dm.tool.Index] = true
	}
	if a := dm.tool.Function.Arguments; a != nil && *a != "" {
		if err := s.argsDelta(*a); err != nil {
			return err
		}
	}
	return nil
}

// record keeps the answer's tool calls for response.completed (the text
// is kept as its deltas are sent).
func (s *streamWriter) record(dm respDelta) {
	if dm.tool == nil {
		return
	}
	if s.callIndex == nil {
		s.callIndex = map[int]int{}
	}
	i, ok := s.callIndex[dm.tool.Index]
	if !ok {
		i = len(s.calls)
		s.callIndex[dm.tool.Index] = i
		s.calls = append(s.calls, responsesCall{})
	}
	c := &s.calls[i]
	if dm.tool.ID != nil && c.callID == "" {
		c.callID = *dm.tool.ID
	}
	if dm.tool.Function.Name != nil && c.name == "" {
		c.name = *dm.tool.Function.Name
	}
	if dm.tool.Function.Arguments != nil {
		c.args += *dm.tool.Function.Arguments
	}
}

// copyDelta detaches a delta from the session's reused buffers.
func copyDelta(d respDelta) respDelta {
	cp := func(p *string) *string {
		if p == nil {
			return nil
		}
		v := *p
		return &v
	}
	out := respDelta{reasoning: cp(d.reasoning), content: cp(d.content)}
	if d.tool != nil {
		t := protocol.ToolCallDelta{Index: d.tool.Index, ID: cp(d.tool.ID),
			Function: protocol.FunctionDelta{Name: cp(d.tool.Function.Name), Arguments: cp(d.tool.Function.Arguments)}}
		out.tool = &t
	}
	return out
}

// Finish closes the open item and sends response.completed.
func (s *streamWriter) Finish(completion int) error {
	r := s.run
	if !r.Started() {
		if err := s.Start(); err != nil {
			return err
		}
	}
	if n := len(s.prev); n > 0 {
		l := s.prev[n-1]
		var err error
		switch {
		case l.tool != nil:
			err = s.toolDone(joinDeltas(s.prev, argsOf))
		case l.reasoning != nil:
			err = s.reasoningDone(joinDeltas(s.prev, reasoningOf))
		case l.content != nil:
			err = s.textDone(joinDeltas(s.prev, contentOf))
		}
		if err != nil {
			return err
		}
	}
	var lps []Logprob
	if s.logprobs {
		lps = s.allLP
		if lps == nil {
			lps = []Logprob{}
		}
	}
	body := s.meta.response(r.Created(), s.finishReason, s.reasoning.String(), s.content.String(), lps, s.calls,
		r.PromptTokens(), completion)
	return s.envelope("response.completed", body)
}

// Fail ends a started stream as vLLM's generator does on a
// GenerationError: an error event (openai's ResponseErrorEvent).
func (s *streamWriter) Fail(e *orchestrator.Error) {
	s.run.Failed(e)
	s.ev.Begin("error")
	s.ev.Key("code")
	s.ev.Buf = append(s.ev.Buf, "null"...)
	s.ev.String("message", pylax.SanitizeMessage(e.Message))
	s.ev.Key("param")
	s.ev.Buf = append(s.ev.Buf, "null"...)
	s.ev.End(s.seq, "error")
	_ = s.send()
}
