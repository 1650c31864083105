package preflight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vrender/vrender/orchestrator/engine"
	"github.com/vrender/vrender/protocol"
)

// prefillKVParams is what vLLM's disaggregated proxy
// (tests/v1/kv_connector/nixl_integration/toy_proxy_server.py) asks a
// prefill engine for: keep the KV cache for a remote decode.
var prefillKVParams = json.RawMessage(`{"do_remote_decode":true,"do_remote_prefill":false,` +
	`"remote_engine_id":null,"remote_block_ids":null,"remote_host":null,"remote_port":null}`)

// exchange is one request's way through render, the engine(s) and derender.
type exchange struct {
	promptTokens, outputTokens int
	answer                     string
	elapsed                    time.Duration
}

// stageError names the part of the exchange that failed and what to fix.
type stageError struct {
	stage, fix string
	err        error
}

func (e *stageError) Error() string { return e.stage + ": " + e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

// roundTrip renders a one-message chat request, generates it on the
// collocated engine or prefill then decode, and derenders the answer.
func (r *runner) roundTrip(ctx context.Context, id, content string, maxTokens int) (*exchange, error) {
	start := time.Now()
	body, err := json.Marshal(map[string]any{
		"model":      r.cfg.ModelName,
		"messages":   []map[string]string{{"role": "user", "content": content}},
		"max_tokens": maxTokens,
		"seed":       0,
	})
	if err != nil {
		return nil, err
	}
	chat, err := protocol.DecodeChatCompletionRequest(body)
	if err != nil {
		return nil, &stageError{"render", "this is a vrender bug: report it", err}
	}
	rendered, err := r.cfg.Generator.RenderChat(ctx, chat)
	if err != nil {
		return nil, &stageError{"render", "check --model and the chat template flags", err}
	}
	g := rendered.Request
	g.SamplingParams.Stop = nil // derender applies stop strings, as the orchestrator does
	g.SamplingParams.ExplicitMaxTokens = true

	resp, err := r.generate(ctx, &g, id)
	if err != nil {
		return nil, err
	}
	out, err := r.cfg.Derender.Chat(ctx, &protocol.DerenderChatRequest{GenerateResponse: *resp,
		PromptTokenIDs: g.TokenIDs, ChatRequest: chat}, r.cfg.ModelName)
	if err != nil {
		return nil, &stageError{"derender", "the engine's output does not fit --model's tokenizer: " +
			"serve the same model on the engines as in vrender", err}
	}
	x := &exchange{promptTokens: len(g.TokenIDs), elapsed: time.Since(start)}
	for _, ch := range resp.Choices {
		x.outputTokens += len(ch.TokenIDs)
	}
	if len(out.Choices) > 0 {
		x.answer = answerText(&out.Choices[0].Message)
	}
	return x, nil
}

// generate sends g to the collocated engine, or to prefill (one token,
// keeping the KV cache) then decode with the kv_transfer_params prefill
// returned, as vLLM's proxy drives a disaggregated pair.
func (r *runner) generate(ctx context.Context, g *protocol.GenerateRequest, id string) (*protocol.GenerateResponse, error) {
	if r.prefill == nil {
		resp, err := r.gen.client.Generate(ctx, g, id)
		if err != nil {
			return nil, engineStageError("generate", r.gen, err)
		}
		return resp, nil
	}
	pre := *g
	one := 1
	pre.SamplingParams.MaxTokens = &one
	pre.SamplingParams.MinTokens = 0
	pre.KVTransferParams = prefillKVParams
	presp, err := r.prefill.client.Generate(ctx, &pre, id)
	if err != nil {
		return nil, engineStageError("prefill", r.prefill, err)
	}
	kv := presp.KVTransferParams
	if len(kv) == 0 || string(kv) == "null" {
		return nil, &stageError{"prefill", "run the prefill engine with a KV connector: " +
			`--kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_producer"}' (or kv_both)`,
			errors.New("the prefill engine returned no kv_transfer_params")}
	}
	dec := *g
	dec.KVTransferParams = kv
	resp, err := r.gen.client.Generate(ctx, &dec, id)
	if err != nil {
		return nil, engineStageError("decode", r.gen, err)
	}
	return resp, nil
}

func engineStageError(stage string, t *target, err error) error {
	fix := fmt.Sprintf("look at the %s's log (%s)", t.label(), t.url)
	var ee *engine.Error
	if errors.As(err, &ee) {
		switch {
		case ee.EngineStatus == 0 && ee.Status == 503:
			fix = fmt.Sprintf("the %s went away or is overloaded: check that it is running at %s", t.label(), t.url)
		case ee.EngineStatus == 401 || ee.EngineStatus == 403:
			fix = fmt.Sprintf("the %s wants an API key: pass its --api-key as --engine-api-key", t.label())
		case ee.EngineStatus == 404:
			fix = fmt.Sprintf("the %s has no tokens-only generate route or does not serve the model: "+
				"start it with `vllm serve MODEL --tokens-only` and check --served-model-name", t.label())
		case ee.EngineStatus == 400:
			fix = fmt.Sprintf("the %s refused the request: serve the same model (and max_model_len) "+
				"on the engine as in vrender", t.label())
		}
	}
	return &stageError{stage, fix, err}
}

// answerText is everything the model said: content, reasoning and tool calls.
func answerText(m *protocol.ChatMessage) string {
	var b strings.Builder
	if m.Reasoning != nil {
		b.WriteString(*m.Reasoning)
	}
	if m.Content != nil {
		b.WriteString(*m.Content)
	}
	for _, tc := range m.ToolCalls {
		b.WriteString(tc.Function.Name)
	}
	return strings.TrimSpace(b.String())
}

// checkShortRequest sends one short request end to end.
func (r *runner) checkShortRequest(ctx context.Context) []Check {
	const name = "short request end to end"
	path := "render -> engine -> derender"
	if r.prefill != nil {
		path = "render -> prefill -> decode -> derender"
	}
	x, err := r.roundTrip(ctx, "preflight-short-"+protocol.RandomUUID(),
		"Preflight check: reply with one short sentence saying hello.", 64)
	if err != nil {
		return []Check{failFromError(name, path, err)}
	}
	if x.answer == "" {
		return []Check{fail(name, fmt.Sprintf("%s: the answer is empty (%d output tokens)", path, x.outputTokens),
			"the engine generated nothing readable: check that it serves the same model and tokenizer as vrender")}
	}
	return []Check{pass(name, fmt.Sprintf("%s: %d prompt tokens, %d output tokens in %s, answer %q", path,
		x.promptTokens, x.outputTokens, x.elapsed.Round(time.Millisecond), clip(x.answer, 60)),
		map[string]float64{"prompt_tokens": float64(x.promptTokens), "output_tokens": float64(x.outputTokens),
			"seconds": x.elapsed.Seconds()})}
}

func failFromError(name, path string, err error) Check {
	var se *stageError
	if errors.As(err, &se) {
		return fail(name, fmt.Sprintf("%s: %s failed: %v", path, se.stage, se.err), se.fix)
	}
	return fail(name, path+": "+err.Error(), "see the error above")
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
