package parity

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/vrender/vrender/protocol"
)

// Client talks to a vLLM server's OpenAI API: `vllm serve` or
// `vllm launch render`.
type Client struct {
	// BaseURL is the server's root (http://host:8000), without /v1.
	BaseURL string
	// APIKey is sent as a Bearer token when set (vLLM's --api-key).
	APIKey string
	// HTTP is the client to use; nil means http.DefaultClient.
	HTTP *http.Client
}

// ErrUnsupported is a route the server does not serve (404 without a vLLM
// error body, or 405): /v1/chat/completions on a render server, the render
// endpoints on an older vllm serve.
var ErrUnsupported = errors.New("route not served")

// HTTPError is a non-2xx answer.
type HTTPError struct {
	Status int
	// Message is vLLM's error message, or the body when it has none.
	Message string
}

func (e *HTTPError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message) }

// Refused reports whether err is vLLM refusing the request itself (400),
// which vrender should refuse too.
func Refused(err error) bool {
	var h *HTTPError
	return errors.As(err, &h) && h.Status == http.StatusBadRequest
}

// maxBody bounds a non-streaming answer.
const maxBody = 256 << 20

func (c *Client) do(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	res, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if res.StatusCode/100 == 2 {
		return res, nil
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return nil, fmt.Errorf("%s %s: %w", method, path, statusError(res.StatusCode, data))
}

// statusError tells a missing route (FastAPI's {"detail":"Not Found"}, or
// 405) from vLLM answering with its own error body (a 404 for an unknown
// model is vLLM's, and a real failure).
func statusError(status int, data []byte) error {
	var body struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
	}
	_ = json.Unmarshal(data, &body)
	if status == http.StatusMethodNotAllowed || (status == http.StatusNotFound && body.Error == nil) {
		return ErrUnsupported
	}
	msg := strings.TrimSpace(string(data))
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body.Error, &e) == nil && e.Message != "" {
		msg = e.Message
	} else {
		var s string
		if json.Unmarshal(body.Error, &s) == nil && s != "" {
			msg = s // 401 {"error":"Unauthorized"}
		}
	}
	return &HTTPError{Status: status, Message: msg}
}

func (c *Client) postJSON(ctx context.Context, path string, body []byte, out any) error {
	res, err := c.do(ctx, http.MethodPost, path, body)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		return fmt.Errorf("POST %s: read body: %w", path, err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("POST %s: decode body: %w", path, err)
	}
	return nil
}

// Models lists the served model names (GET /v1/models), first the default.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	res, err := c.do(ctx, http.MethodGet, "/v1/models", nil)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, maxBody)).Decode(&list); err != nil {
		return nil, fmt.Errorf("GET /v1/models: decode body: %w", err)
	}
	names := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		names = append(names, m.ID)
	}
	return names, nil
}

// Tokenize posts the chat form of /tokenize and returns the prompt ids.
func (c *Client) Tokenize(ctx context.Context, body []byte) ([]int, error) {
	var out struct {
		Tokens []int `json:"tokens"`
	}
	if err := c.postJSON(ctx, "/tokenize", body, &out); err != nil {
		return nil, err
	}
	return out.Tokens, nil
}

// Render posts /v1/chat/completions/render and returns the GenerateRequest's
// token_ids.
func (c *Client) Render(ctx context.Context, body []byte) ([]int, error) {
	var out struct {
		TokenIDs []int `json:"token_ids"`
	}
	if err := c.postJSON(ctx, "/v1/chat/completions/render", body, &out); err != nil {
		return nil, err
	}
	return out.TokenIDs, nil
}

// Completion is one choice of vLLM's chat completion with the token IDs
// return_token_ids asked for.
type Completion struct {
	Answer Answer
	// PromptTokenIDs is the prompt vLLM generated from.
	PromptTokenIDs []int
	// Chunks are the output ids as the server sent them: one slice for a
	// non-streaming answer, one per chunk that carried ids for a stream.
	Chunks [][]int
}

// OutputTokenIDs is every output id, in order.
func (c *Completion) OutputTokenIDs() []int {
	var ids []int
	for _, ch := range c.Chunks {
		ids = append(ids, ch...)
	}
	return ids
}

// Chat posts a non-streaming /v1/chat/completions and returns its first
// choice.
func (c *Client) Chat(ctx context.Context, body []byte) (*Completion, error) {
	var out struct {
		Choices []struct {
			Message      json.RawMessage `json:"message"`
			FinishReason *string         `json:"finish_reason"`
			TokenIDs     []int           `json:"token_ids"`
		} `json:"choices"`
		PromptTokenIDs []int `json:"prompt_token_ids"`
	}
	if err := c.postJSON(ctx, "/v1/chat/completions", body, &out); err != nil {
		return nil, err
	}
	if len(out.Choices) == 0 {
		return nil, errors.New("POST /v1/chat/completions: no choices in the answer")
	}
	ch := out.Choices[0]
	if ch.TokenIDs == nil {
		return nil, errors.New("POST /v1/chat/completions: no token_ids in the answer (vLLM too old for return_token_ids?)")
	}
	a, err := answerFromWire(ch.Message, ch.FinishReason)
	if err != nil {
		return nil, fmt.Errorf("POST /v1/chat/completions: %w", err)
	}
	return &Completion{Answer: a, PromptTokenIDs: out.PromptTokenIDs, Chunks: [][]int{ch.TokenIDs}}, nil
}

// streamChunk is one SSE event of a streaming chat completion.
type streamChunk struct {
	Choices []struct {
		Index        int                   `json:"index"`
		Delta        protocol.DeltaMessage `json:"delta"`
		FinishReason *string               `json:"finish_reason"`
		TokenIDs     []int                 `json:"token_ids"`
	} `json:"choices"`
	PromptTokenIDs []int           `json:"prompt_token_ids"`
	Error          json.RawMessage `json:"error"`
}

// ChatStream posts a streaming /v1/chat/completions and accumulates choice
// 0 as a client would.
func (c *Client) ChatStream(ctx context.Context, body []byte) (*Completion, error) {
	res, err := c.do(ctx, http.MethodPost, "/v1/chat/completions", body)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var (
		acc  accumulator
		comp Completion
		done bool
	)
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<16), maxLine)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue // blank separators, comments, event names
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			done = true
			break
		}
		var ch streamChunk
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return nil, fmt.Errorf("POST /v1/chat/completions (stream): decode chunk: %w", err)
		}
		if ch.Error != nil {
			return nil, fmt.Errorf("POST /v1/chat/completions (stream): error event: %s", ch.Error)
		}
		if ch.PromptTokenIDs != nil && comp.PromptTokenIDs == nil {
			comp.PromptTokenIDs = ch.PromptTokenIDs
		}
		for _, choice := range ch.Choices {
			if choice.Index != 0 {
				continue
			}
			acc.add(&choice.Delta, choice.FinishReason)
			if len(choice.TokenIDs) > 0 {
				comp.Chunks = append(comp.Chunks, choice.TokenIDs)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("POST /v1/chat/completions (stream): %w", err)
	}
	if !done {
		return nil, errors.New("POST /v1/chat/completions (stream): stream ended without [DONE]")
	}
	if len(comp.Chunks) == 0 {
		return nil, errors.New("POST /v1/chat/completions (stream): no token_ids in the chunks (vLLM too old for return_token_ids?)")
	}
	comp.Answer = acc.answer()
	return &comp, nil
}
