package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/vrender/vrender/derender"
	"github.com/vrender/vrender/model"
	"github.com/vrender/vrender/protocol"
)

// defaultDerenderCacheSize is --derender-cache-size's default: live
// streaming parser states kept per replica.
const defaultDerenderCacheSize = 4096

// derenderFlags are the flags of the derender tier beside the render flags
// (which carry the parser names).
type derenderFlags struct {
	cacheSize            int
	reasoningFieldCompat bool
}

func (f *derenderFlags) register(c *command) {
	c.fs.IntVar(&f.cacheSize, "derender-cache-size", defaultDerenderCacheSize,
		"live streaming parser states kept (`N`; 0 disables the cache: every parsed stream call replays the history)")
	c.fs.BoolVar(&f.reasoningFieldCompat, "reasoning-field-compat", false,
		"also send reasoning as reasoning_content, for clients of older vLLM")
}

// engine builds the derender engine for m; VLLM_MAX_N_SEQUENCES is read as
// vLLM reads it.
func (f *derenderFlags) engine(m *model.Model, rf *renderFlags) (*derender.Engine, error) {
	if f.cacheSize < 0 {
		return nil, usagef("--derender-cache-size must not be negative, got %d", f.cacheSize)
	}
	maxN := 0
	if v := os.Getenv("VLLM_MAX_N_SEQUENCES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("VLLM_MAX_N_SEQUENCES=%q is not a positive integer", v)
		}
		maxN = n
	}
	return derender.New(m, derender.Config{
		Parsers:              rf.parserConfig(m),
		MaxLogprobs:          rf.maxLogprobs,
		MaxNSequences:        maxN,
		CacheSize:            f.cacheSize,
		ReasoningFieldCompat: f.reasoningFieldCompat,
	})
}

// derenderCase is the part of a golden-set line (../shared/parity) the CLI
// reads; a line has "output_token_ids" where a DerenderChatRequest has
// "generate_response".
type derenderCase struct {
	ChatRequest        json.RawMessage `json:"chat_request"`
	PromptTokenIDs     []int           `json:"prompt_token_ids"`
	OutputTokenIDs     []int           `json:"output_token_ids"`
	FinishReasonEngine *string         `json:"finish_reason_engine"`
}

// runDerender is `vrender derender`: a DerenderChatRequest (or a golden-set
// line) on stdin, the ChatCompletionResponse on stdout.
func runDerender(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c := newCommand("derender", "--model MODEL [--reasoning-parser X] [--tool-call-parser Y] [--enable-auto-tool-choice] < case.json",
		"Read a DerenderChatRequest (the non-streaming body of /v1/chat/completions/derender), or a line\n"+
			"of the parser golden set, from stdin and print the ChatCompletionResponse vrender answers.")
	var (
		mf modelFlags
		rf renderFlags
		df derenderFlags
	)
	mf.register(c, true)
	rf.register(c)
	df.register(c)
	rest, err := c.parse(args, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	if err := rf.validate(); err != nil {
		return err
	}
	data, err := io.ReadAll(stdin)
	if err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	body, err := derenderBody(data)
	if err != nil {
		return fmt.Errorf("stdin: %w", err)
	}
	req, stream, err := protocol.DecodeDerenderChat(body)
	if err != nil {
		return fmt.Errorf("stdin: %w", err)
	}
	if stream != nil {
		return errors.New("stdin: a streaming request (stream: true) needs the HTTP endpoint; send the batch form")
	}
	m, err := mf.load(ctx)
	if err != nil {
		return err
	}
	e, err := df.engine(m, &rf)
	if err != nil {
		return err
	}
	name := mf.model
	if req.Model != nil && *req.Model != "" {
		name = *req.Model
	}
	res, err := e.Chat(ctx, req, name)
	if err != nil {
		return err
	}
	b, err := protocol.MarshalJSON(res)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}

// derenderBody turns a golden-set line into a DerenderChatRequest body and
// passes anything else through.
func derenderBody(data []byte) ([]byte, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, err
	}
	if _, ok := probe["generate_response"]; ok {
		return data, nil
	}
	if _, ok := probe["output_token_ids"]; !ok {
		return data, nil
	}
	var gc derenderCase
	if err := json.Unmarshal(data, &gc); err != nil {
		return nil, err
	}
	finish := "stop"
	if gc.FinishReasonEngine != nil {
		finish = *gc.FinishReasonEngine
	}
	body := map[string]any{
		"prompt_tokens":    len(gc.PromptTokenIDs),
		"prompt_token_ids": gc.PromptTokenIDs,
		"generate_response": map[string]any{"request_id": "generate-tokens-chatcmpl-" + protocol.RandomUUID(),
			"choices": []any{map[string]any{"index": 0, "token_ids": gc.OutputTokenIDs, "finish_reason": finish}}},
	}
	if len(gc.ChatRequest) > 0 {
		body["chat_request"] = gc.ChatRequest
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
