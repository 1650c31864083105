package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/internal/wire"
	"github.com/vrender/vrender/kvindex"
	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// ChatRun is one chat-shaped request for Chat to run: a chat completion,
// or a front end's request converted to the chat request vLLM runs it as
// (Anthropic Messages, Responses).
type ChatRun struct {
	// API is the front end the request came through; its requests and
	// tokens are counted under it.
	API API
	// Request is the chat request: rendered as /v1/chat/completions/render
	// renders it when Render is nil, and the request the answer is
	// derendered with.
	Request *protocol.ChatCompletionRequest
	// Render, when set, converts and renders the front end's own request
	// instead (Responses renders with its own prompt limits and sampling
	// params), inside the render span: the chat request and its render.
	// Its errors are returned as they are, for the front end to shape.
	// Its Prompt's features are what the images are routed by.
	Render func(ctx context.Context) (*protocol.ChatCompletionRequest, *render.ChatResult, error)
	// ID is the answer's id; empty takes the render's request_id.
	ID string
	// Stream asks for the answer as server-sent events written to the sink.
	Stream bool
	// Writer, when set, writes a streamed answer in the front end's wire
	// format; nil streams vLLM's chat chunks.
	Writer func(*Stream) StreamWriter
	// Answer, when set, converts a non-streaming answer to the front end's
	// body; nil answers the chat completion.
	Answer func(*protocol.ServedChatResponse) (protocol.Appender, error)
}

// Chat serves one chat-shaped request. A non-streaming request gets its
// answer back; a streaming one is written to sink and returns (nil, nil),
// or an error when it failed before anything was written. Errors are
// classified by AsError.
func (o *Orchestrator) Chat(ctx context.Context, run ChatRun, sink Sink) (protocol.Appender, error) {
	o.cfg.Metrics.requests[run.API].Add(1)
	res, err := o.chat(ctx, run, sink)
	if err != nil {
		o.cfg.Metrics.failed.Add(1)
	}
	return res, err
}

// chatRun is one chat request in flight.
type chatRun struct {
	o        *Orchestrator
	api      API
	id       string
	model    string // the answers' "model"
	created  int64
	role     string
	echo     *string // echo: the text vLLM repeats before the answer
	prompt   []int
	sessions []*derender.ChatSession
	// tokens are each choice's ids when return_token_ids asks for them.
	tokens         [][]int
	returnTokenIDs bool
	// hideMeta is vLLM bf578e1's suppression of logprobs and token_ids
	// when a parser runs and include_reasoning is false: they would show
	// the hidden reasoning tokens.
	hideMeta    bool
	usage, cont bool
	stopMatched bool
	kv          json.RawMessage

	stream bool
	// out writes the stream: the run itself (chat chunks) or another
	// API's events.
	out StreamWriter
	sseWriter
}

// StepObserver is a StreamWriter that also sees the steps that send
// nothing (a token that only ended reasoning), for what its closing event
// sums up.
type StepObserver interface{ Observe(step *derender.ChatStep) }

// StreamWriter writes a streamed chat run in one API's wire format.
type StreamWriter interface {
	// Start commits the stream and writes its opening events.
	Start() error
	// WriteStep writes what one engine event made of choice c.
	WriteStep(c *protocol.GenerateChoice, step *derender.ChatStep) error
	// Finish writes the closing events once every choice is done.
	Finish(completion int) error
	// Fail ends a started stream with an error.
	Fail(e *Error)
}

func (o *Orchestrator) chat(ctx context.Context, run ChatRun, sink Sink) (protocol.Appender, error) {
	// Render applies the tool parser's adjust_request (structural tag or
	// tool JSON schema), so the engine gets what /render would give.
	rctx, span := startSpan(ctx, "render")
	req, rendered, err := run.Request, (*render.ChatResult)(nil), error(nil)
	if run.Render != nil {
		req, rendered, err = run.Render(rctx)
	} else {
		rendered, err = o.cfg.Generator.RenderChat(rctx, req)
	}
	endSpan(span, err)
	if err != nil && run.Render != nil {
		return nil, err // the front end's errors keep their own shape
	}
	if err != nil {
		return nil, AsError(err)
	}
	g := &rendered.Request
	var mm []kvindex.MMItem // the images' block keys for prefix routing
	if f := rendered.Prompt.Features; f != nil {
		mm = kvindex.FeatureItems(f)
	}
	id := run.ID
	if id == "" {
		id = g.RequestID
	}
	res, err := o.generateChat(ctx, req, *g, mm, id, run, sink)
	if err != nil || res == nil {
		return nil, err
	}
	if run.Answer != nil {
		return run.Answer(res)
	}
	return res, nil
}

// generateChat runs a rendered chat request g (rendered from req) on an
// engine and derenders it in-process. A streamed answer is written to sink
// through spec.Writer's writer, or as chat chunks when it has none;
// /v1/messages and /v1/responses run their requests here with their own
// stream writers, so every API shares one render → engine → derender
// path; spec.API is the endpoint its tokens are counted under.
func (o *Orchestrator) generateChat(ctx context.Context, req *protocol.ChatCompletionRequest, g protocol.GenerateRequest, mm []kvindex.MMItem, id string, spec ChatRun, sink Sink) (*protocol.ServedChatResponse, error) {
	ep := spec.API
	stop := o.stopConfig(g.SamplingParams)
	engineRequest(&g)
	if derender.NeedsSpecialTokens(o.cfg.Parsers, req) {
		// The parser's adjust_request: its markers are special tokens.
		g.SamplingParams.SkipSpecialTokens = false
	}
	if !req.IncludeReasoning {
		t := true
		g.ReasoningEnded = &t
	}
	run, err := o.newChatRun(req, &g, stop, id, spec, sink)
	if err != nil {
		return nil, err
	}
	o.cfg.Metrics.prompt[ep].Add(int64(len(g.TokenIDs)))

	// The engine span covers the engine call and the in-process derender
	// of its events; the engine's own spans are its children through the
	// traceparent header.
	ctx, span := startSpan(ctx, "engine", attribute.Int("vrender.prompt_tokens", len(g.TokenIDs)))
	var engErr error
	defer func() { endSpan(span, engErr) }()
	// The engine knows the request by an id of its own: unique, so that
	// clients reusing a request id never abort each other's requests.
	engineID := engine.NewRequestID(run.id)
	st, err := o.cfg.Engines.StartMM(ctx, &g, engineID, mm)
	if err != nil {
		engErr = err
		return nil, AsError(err)
	}
	defer st.Close()
	span.SetAttributes(attribute.String("vrender.engine", st.Engine().URL()))
	eng := st.Engine() // the engine holding the request: aborts go there
	o.log.DebugContext(ctx, "chat request sent", "request_id", run.id, "engine_request_id", engineID, "engine", eng.URL(), "prompt_tokens", len(g.TokenIDs), "n", len(run.sessions))

	for {
		ev, err := st.Recv()
		read := time.Now()
		if errors.Is(err, io.EOF) {
			if !run.allDone() {
				err = &Error{Status: http.StatusBadGateway, Type: http.StatusText(http.StatusBadGateway),
					Message: "engine stream ended before every choice finished"}
			} else {
				break
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				o.abort(ctx, eng, engineID)
				return nil, ctx.Err()
			}
			// A stalled or broken stream: the engine may still be generating.
			o.abort(ctx, eng, engineID)
			if !run.started {
				return nil, AsError(err)
			}
			run.out.Fail(AsError(err))
			return nil, nil
		}
		if err := run.event(ev, read); err != nil {
			if ctx.Err() != nil || errors.Is(err, errClientGone) {
				o.abort(ctx, eng, engineID)
				return nil, nil
			}
			if !run.started {
				return nil, AsError(err)
			}
			run.out.Fail(AsError(err))
			return nil, nil
		}
		if run.stopMatched && run.allDone() {
			// The engine is still generating what no one will read.
			o.abort(ctx, eng, engineID)
			break
		}
	}
	completion := run.completionTokens()
	o.cfg.Metrics.generated[ep].Add(int64(completion))
	span.SetAttributes(attribute.Int("vrender.completion_tokens", completion))
	if !run.stream {
		return run.response(completion), nil
	}
	if err := run.out.Finish(completion); err != nil {
		return nil, nil // the client went away after the last token
	}
	return nil, nil
}

// newChatRun is the run of g (rendered from req): one derender session
// per choice, and its stream writer.
func (o *Orchestrator) newChatRun(req *protocol.ChatCompletionRequest, g *protocol.GenerateRequest, stop derender.StopConfig, id string, spec ChatRun, sink Sink) (*chatRun, error) {
	role := o.chatRole(req)
	run := &chatRun{o: o, api: spec.API, id: id, model: o.ResponseModel(g.Model), created: o.now().Unix(), role: role, echo: echoContent(req, role),
		prompt: g.TokenIDs, stream: spec.Stream, sseWriter: sseWriter{sink: sink, metrics: o.cfg.Metrics},
		returnTokenIDs: req.ReturnTokenIDs != nil && *req.ReturnTokenIDs,
		hideMeta:       !req.IncludeReasoning && o.chatHasParser()}
	run.out = run
	if spec.Writer != nil {
		run.out = spec.Writer(&Stream{run: run})
	}
	if run.stream && req.StreamOptions != nil {
		run.usage = req.StreamOptions.IncludeUsage != nil && *req.StreamOptions.IncludeUsage
		run.cont = run.usage && req.StreamOptions.ContinuousUsageStats != nil && *req.StreamOptions.ContinuousUsageStats
	}
	n := max(g.SamplingParams.N, 1)
	for range n {
		s, err := o.cfg.Derender.NewChatSession(req, derender.SessionConfig{Prompt: g.TokenIDs, Stop: stop, Collect: !run.stream})
		if err != nil {
			return nil, AsError(err)
		}
		run.sessions = append(run.sessions, s)
	}
	if run.returnTokenIDs {
		run.tokens = make([][]int, n)
	}
	return run, nil
}

// errClientGone is a failed write to the client.
var errClientGone = errors.New("client went away")

// event derenders one engine event and, when streaming, writes its chunks.
func (r *chatRun) event(ev *protocol.GenerateResponse, read time.Time) error {
	if ev.KVTransferParams != nil && string(ev.KVTransferParams) != "null" {
		r.kv = ev.KVTransferParams
	}
	wrote := false
	if r.stream && !r.started && len(ev.Choices) > 0 {
		if err := r.out.Start(); err != nil {
			return err
		}
		wrote = true
	}
	for i := range ev.Choices {
		c := &ev.Choices[i]
		if c.Index < 0 || c.Index >= len(r.sessions) {
			return &Error{Status: http.StatusBadGateway, Type: http.StatusText(http.StatusBadGateway),
				Message: "engine sent a choice index beyond n"}
		}
		if c.FinishReason != nil && *c.FinishReason == "error" {
			return generationError
		}
		s := r.sessions[c.Index]
		if s.Done() {
			continue
		}
		step := s.Push(c.TokenIDs, c.Logprobs, c.FinishReason)
		if step.StopMatched {
			r.stopMatched = true
		}
		if r.tokens != nil {
			r.tokens[c.Index] = append(r.tokens[c.Index], c.TokenIDs...)
		}
		if ob, ok := r.out.(StepObserver); ok && r.stream {
			ob.Observe(step)
		}
		if !r.stream {
			continue
		}
		if !step.Emit {
			// vLLM sends an event the parser made nothing of only to
			// carry its token_ids.
			if !r.returnTokenIDs || r.hideMeta {
				continue
			}
			step = &derender.ChatStep{Logprobs: step.Logprobs}
		}
		if err := r.out.WriteStep(c, step); err != nil {
			return err
		}
		wrote = true
	}
	if wrote {
		r.o.cfg.Metrics.Event.Observe(time.Since(read))
	}
	return nil
}

// Start commits the stream and sends each choice's role chunk.
func (r *chatRun) Start() error {
	if err := r.openChat(); err != nil {
		return err
	}
	var promptIDs []int
	if r.returnTokenIDs {
		promptIDs = r.prompt
	}
	for i := range r.sessions {
		var u *protocol.UsageInfo
		if r.cont {
			u = protocol.NewUsage(len(r.prompt), 0)
		}
		r.begin()
		r.buf = r.enc.AppendChatRole(r.buf, i, r.role, u, promptIDs)
		if err := r.frame(); err != nil {
			return err
		}
	}
	if r.echo == nil || *r.echo == "" {
		return nil
	}
	for i := range r.sessions {
		var u *protocol.UsageInfo
		if r.cont {
			u = protocol.NewUsage(len(r.prompt), 0)
		}
		r.begin()
		r.buf = r.enc.AppendChatEcho(r.buf, i, *r.echo, u)
		if err := r.frame(); err != nil {
			return err
		}
	}
	return nil
}

func (r *chatRun) WriteStep(c *protocol.GenerateChoice, step *derender.ChatStep) error {
	choice := protocol.ChatChunkChoice{Index: c.Index, Delta: &step.Delta, Logprobs: step.Logprobs}
	if step.FinishReason != nil {
		choice.Final, choice.FinishReason, choice.StopReason = true, *step.FinishReason, step.StopReason
	}
	if r.hideMeta {
		choice.Logprobs = nil
	} else if r.returnTokenIDs {
		choice.TokenIDs = idsOrEmpty(c.TokenIDs)
	}
	var u *protocol.UsageInfo
	if r.cont {
		u = protocol.NewUsage(len(r.prompt), r.sessions[c.Index].Tokens())
	}
	r.begin()
	var err error
	if r.buf, err = r.enc.AppendChatDelta(r.buf, &choice, u); err != nil {
		return err
	}
	return r.frame()
}

// openChat commits the stream with the chat chunk encoder.
func (r *chatRun) openChat() error {
	return r.open(r.id, "chat.completion.chunk", r.created, r.model)
}

// Finish sends the usage chunk (when asked) and [DONE].
func (r *chatRun) Finish(completion int) error {
	if !r.started {
		if err := r.openChat(); err != nil {
			return err
		}
	}
	var u *protocol.UsageInfo
	if r.usage {
		u = protocol.NewUsage(len(r.prompt), completion)
	}
	return r.end(u)
}

// Fail ends a started stream with an error event, then [DONE].
func (r *chatRun) Fail(e *Error) {
	r.o.log.Warn(apiNames[r.api]+" stream failed", "request_id", r.id, "status", e.Status, "err", e.Message)
	r.sseWriter.fail(e)
}

func (r *chatRun) allDone() bool {
	for _, s := range r.sessions {
		if !s.Done() {
			return false
		}
	}
	return true
}

func (r *chatRun) completionTokens() int {
	n := 0
	for _, s := range r.sessions {
		n += s.Tokens()
	}
	return n
}

// response is the non-streaming answer.
func (r *chatRun) response(completion int) *protocol.ServedChatResponse {
	res := &protocol.ServedChatResponse{ID: r.id, Object: "chat.completion", Created: r.created,
		Model: r.model, Choices: make([]protocol.ServedChatChoice, 0, len(r.sessions)),
		Usage: protocol.NewUsage(len(r.prompt), completion), KVTransferParams: r.kv}
	if r.returnTokenIDs {
		res.PromptTokenIDs = r.prompt
	}
	for i, s := range r.sessions {
		c := s.Result()
		c.Message.Role = r.role
		if r.echo != nil {
			// vLLM prepends the echoed text even to a null content.
			full := *r.echo
			if c.Message.Content != nil {
				full += *c.Message.Content
			}
			c.Message.Content = &full
		}
		choice := protocol.ServedChatChoice{Index: i, Message: c.Message, Logprobs: c.Logprobs,
			FinishReason: c.FinishReason, StopReason: c.StopReason}
		if r.hideMeta {
			choice.Logprobs = nil
		} else if r.tokens != nil {
			choice.TokenIDs = idsOrEmpty(r.tokens[i])
		}
		res.Choices = append(res.Choices, choice)
	}
	return res
}

// chatHasParser is whether vLLM's chat server builds a parser
// (ParserManager.get_parser): a reasoning parser, or a tool parser with
// --enable-auto-tool-choice.
func (o *Orchestrator) chatHasParser() bool {
	p := o.cfg.Parsers
	return p.ReasoningParser != "" || p.ToolParser != "" && p.EnableAutoToolChoice
}

// echoContent is what vLLM's echo prepends: the last message's content
// when that message has the response role (text parts joined by "\n"),
// "" when it has another role; nil without echo.
func echoContent(req *protocol.ChatCompletionRequest, role string) *string {
	if !req.Echo {
		return nil
	}
	text := ""
	if n := len(req.Messages); n > 0 {
		if m := &req.Messages[n-1]; m.HasRole && m.Role == role {
			text = echoText(&m.Content)
		}
	}
	return &text
}

// echoText is a content's text for echo: a string as it is, the text of
// a list's parts whose type is "text" joined by "\n". A list holding a
// part that is not an object, or whose "type" or "text" is not a string,
// echoes nothing.
func echoText(c *protocol.Content) string {
	switch c.Kind {
	case protocol.ContentText:
		return c.Text
	case protocol.ContentParts:
		texts := make([]string, 0, len(c.Parts))
		for i := range c.Parts {
			p := &c.Parts[i]
			switch {
			case p.Kind == protocol.PartString:
				return ""
			case p.Kind == protocol.PartNotObject:
				if !p.Bad.IsNull() {
					return ""
				}
				continue
			case !p.TextMember.IsNull() && p.TextMember.Kind != wire.String,
				!p.TypeMember.IsNull() && p.TypeMember.Kind != wire.String:
				return ""
			}
			if t, _ := p.TypeMember.Text(); t == "text" {
				s, _ := p.TextMember.Text()
				texts = append(texts, s)
			}
		}
		return strings.Join(texts, "\n")
	}
	return ""
}

// chatRole is get_chat_request_role: the response role, or the last
// message's role when no generation prompt is added.
func (o *Orchestrator) chatRole(req *protocol.ChatCompletionRequest) string {
	if req.AddGenerationPrompt || len(req.Messages) == 0 {
		return o.cfg.ResponseRole
	}
	if m := &req.Messages[len(req.Messages)-1]; m.HasRole && m.Role != "" {
		return m.Role
	}
	return o.cfg.ResponseRole
}
