package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// RequestOutput is the client-side record of one request, vLLM's
// RequestFuncOutput. Times are seconds.
type RequestOutput struct {
	Success       bool
	Latency       float64   // send to last chunk (E2EL)
	OutputTokens  int       // usage.completion_tokens (0: the server sent no usage)
	TTFT          float64   // send to first chunk with choices
	ITL           []float64 // gaps between successive chunks with choices
	PromptLen     int
	Error         string
	StartTime     float64 // send time, seconds after the run started
	GeneratedText string  // only when texts are kept
	Chunks        int     // chunks with choices (the output count when no usage came)
	// ServerPromptTokens is usage.prompt_tokens: the prompt as the server
	// rendered it (0 when it sent no usage).
	ServerPromptTokens int
}

// Endpoint kinds, named as vLLM's --backend names them.
const (
	BackendChat        = "openai-chat"
	BackendCompletions = "openai"
)

// BackendFor picks the request format from the endpoint path, as vLLM's
// request functions check the URL suffix.
func BackendFor(endpoint string) (string, error) {
	switch {
	case strings.HasSuffix(endpoint, "chat/completions"):
		return BackendChat, nil
	case strings.HasSuffix(endpoint, "completions"):
		return BackendCompletions, nil
	}
	return "", fmt.Errorf("--endpoint %q: want a path ending in /chat/completions or /completions", endpoint)
}

// RequestBody builds the JSON body vLLM's benchmark sends: greedy, streamed
// with a usage chunk, max_completion_tokens (chat) or max_tokens
// (completions), the prompt as one user message of one text part (chat),
// ignore_eos when asked, then extraBody's keys on top.
func RequestBody(backend, model string, s SampleRequest, ignoreEOS bool, extraBody map[string]any) ([]byte, error) {
	p := map[string]any{
		"model":          model,
		"temperature":    0.0,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
	}
	switch backend {
	case BackendChat:
		p["messages"] = []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": s.Prompt}}}}
		p["max_completion_tokens"] = s.ExpectedOutputLen
	case BackendCompletions:
		p["prompt"] = s.Prompt
		p["repetition_penalty"] = 1.0
		p["max_tokens"] = s.ExpectedOutputLen
		p["logprobs"] = nil
	default:
		return nil, fmt.Errorf("unknown backend %q", backend)
	}
	if ignoreEOS {
		p["ignore_eos"] = true
	}
	for k, v := range extraBody {
		p[k] = v
	}
	body, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("request body: %w", err)
	}
	return body, nil
}

// NewServeTransport returns the one transport a run uses: enough idle
// connections per host that every concurrent stream keeps its connection,
// no compression (the client would pay to inflate what it measures).
func NewServeTransport(concurrency int) *http.Transport {
	if concurrency < 100 {
		concurrency = 100
	}
	return &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        concurrency,
		MaxIdleConnsPerHost: concurrency,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ReadBufferSize:      16 << 10,
		WriteBufferSize:     16 << 10,
	}
}

// streamClient sends benchmark requests and times their streams.
type streamClient struct {
	http     *http.Client
	url      string
	chat     bool
	apiKey   string
	headers  map[string]string
	keepText bool
	epoch    time.Time // StartTime is measured from here
}

// readerPool recycles the per-stream line readers: 500 concurrent streams
// over thousands of requests should not allocate a buffer each.
var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 8<<10) }}

// errNoDone marks a stream that ended without `data: [DONE]`.
var errNoDone = errors.New("stream ended without data: [DONE]")

// do sends one request and reads its stream to the end. Its fields follow
// vLLM's request functions: TTFT at the first chunk with choices, an ITL
// per later chunk with choices, output tokens from the usage chunk; the
// latency ends at the last chunk with choices (completions) or at the last
// data chunk of any kind (chat). Unlike vLLM, an error event, a stream
// without choices or one cut before [DONE] fail the request.
func (c *streamClient) do(ctx context.Context, body []byte, requestID string, promptLen, expectedTokens int) RequestOutput {
	out := RequestOutput{PromptLen: promptLen, ITL: make([]float64, 0, expectedTokens+2)}
	req, err := c.newRequest(ctx, body, requestID)
	if err != nil {
		out.Error = err.Error()
		return out
	}

	st := time.Now()
	out.StartTime = st.Sub(c.epoch).Seconds()
	resp, err := c.http.Do(req)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		out.Error = fmt.Sprintf("HTTP %s: %s", resp.Status, bytes.TrimSpace(msg))
		return out
	}

	br := readerPool.Get().(*bufio.Reader)
	br.Reset(resp.Body)
	defer func() { br.Reset(nil); readerPool.Put(br) }()

	last, readErr := c.readStream(br, st, &out)
	out.Latency = last.Sub(st).Seconds()
	switch {
	case out.Error != "":
	case readErr != nil:
		out.Error = readErr.Error()
	case out.Chunks == 0:
		out.Error = "never received a chunk with choices to compute TTFT"
	default:
		out.Success = true
	}
	return out
}

// newRequest is the POST of body with the stream's headers.
func (c *streamClient) newRequest(ctx context.Context, body []byte, requestID string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	if requestID != "" {
		req.Header.Set("X-Request-Id", requestID)
	}
	return req, nil
}

// readStream reads the SSE answer to its [DONE], recording TTFT, the gaps
// between chunks, usage and error events in out; it returns the time of the
// last chunk counted and why the stream ended early (nil after [DONE]).
func (c *streamClient) readStream(br *bufio.Reader, st time.Time, out *RequestOutput) (time.Time, error) {
	var text strings.Builder
	last := st
	var long []byte // a line longer than the reader's buffer
	readErr := errNoDone
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && (len(line) == 0 || !errors.Is(err, io.EOF)) {
			if !errors.Is(err, io.EOF) {
				readErr = fmt.Errorf("read stream: %w", err)
			}
			break
		}
		payload, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
		if !ok { // blank separator, comment (": ping"), event:/id: fields
			if err != nil {
				break
			}
			continue
		}
		payload = sseTrimSpace(payload)
		if string(payload) == "[DONE]" {
			readErr = nil
			break
		}
		now := time.Now()
		info := scanChunk(payload)
		if info.hasUsage {
			out.OutputTokens = info.completionTokens
			out.ServerPromptTokens = info.promptTokens
		}
		switch info.kind {
		case chunkChoices:
			if out.Chunks == 0 {
				out.TTFT = now.Sub(st).Seconds()
			} else {
				out.ITL = append(out.ITL, now.Sub(last).Seconds())
			}
			out.Chunks++
			last = now
			if c.keepText {
				text.WriteString(chunkText(payload))
			}
		case chunkError:
			if out.Error == "" {
				out.Error = "error event: " + errorMessage(payload)
			}
		}
		if c.chat {
			last = now
		}
		if err != nil {
			break
		}
	}
	out.GeneratedText = text.String()
	return last, readErr
}
