// Package standin is a stand-in vLLM server built from the parser golden
// set (../shared/parity): it answers the endpoints `vrender parity` calls
// with vLLM's own recorded answers, so the tool can be tested, and
// demonstrated, without a GPU.
//
// Served: GET /v1/models; POST /tokenize (chat form: the golden prompt ids
// of the case whose messages, tools and template kwargs match);
// POST /v1/chat/completions/render (the same ids in a GenerateRequest);
// POST /v1/chat/completions, non-streaming (the case's expected answer,
// which is vLLM's non-streaming answer, with token_ids and
// prompt_token_ids) and streaming (vLLM's recorded deltas, one chunk per
// output token, each carrying that token's id as vLLM does with
// return_token_ids). Cases that share a chat request are told apart by the
// request_id `vrender parity` sends.
package standin

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Case is the part of a golden-set line the stand-in answers from.
type Case struct {
	ID                 string          `json:"id"`
	ChatRequest        json.RawMessage `json:"chat_request"`
	PromptTokenIDs     []int           `json:"prompt_token_ids"`
	OutputTokenIDs     []int           `json:"output_token_ids"`
	FinishReasonEngine string          `json:"finish_reason_engine"`
	Expect             Expect          `json:"expect"`
	VLLMStreamDeltas   []StreamDelta   `json:"vllm_stream_deltas"`
	// TokenizeError, when set, is vLLM's 400 message for the chat form of
	// /tokenize (gpt-oss: /tokenize renders the chat template, which a
	// model directory without one refuses, while render takes Harmony).
	TokenizeError string `json:"tokenize_error,omitempty"`
}

// Expect is vLLM's non-streaming answer.
type Expect struct {
	Content      *string    `json:"content"`
	Reasoning    *string    `json:"reasoning"`
	ToolCalls    []ToolCall `json:"tool_calls"`
	FinishReason string     `json:"finish_reason"`
}

// ToolCall is one expected call.
type ToolCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// StreamDelta is one chunk of vLLM's recorded stream: the delta, its
// finish_reason, and the output token that produced it (nil for the role
// chunk).
type StreamDelta struct {
	Delta        json.RawMessage `json:"delta"`
	FinishReason *string         `json:"finish_reason"`
	TokenIndex   *int            `json:"token_index"`
}

// Load reads golden-set lines.
func Load(r io.Reader) ([]Case, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 64<<20)
	var out []Case
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var c Case
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read golden set: %w", err)
	}
	return out, nil
}

// Options shape the stand-in.
type Options struct {
	// ModelName is the served model name (default "standin").
	ModelName string
	// APIKey, when set, guards /v1 routes as vLLM's --api-key does.
	APIKey string
	// RenderOnly serves as `vllm launch render` does: no
	// /v1/chat/completions.
	RenderOnly bool
	// NoRenderEndpoint drops /v1/chat/completions/render, as an older
	// vllm serve.
	NoRenderEndpoint bool
}

// Server is the stand-in. Cases are not copied: change them before
// serving, not while.
type Server struct {
	cases []Case
	opts  Options
	mux   *http.ServeMux
}

// New builds a stand-in answering from cases.
func New(cases []Case, opts Options) *Server {
	if opts.ModelName == "" {
		opts.ModelName = "standin"
	}
	s := &Server{cases: cases, opts: opts, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /v1/models", s.models)
	s.mux.HandleFunc("POST /tokenize", s.tokenize)
	if !opts.NoRenderEndpoint {
		s.mux.HandleFunc("POST /v1/chat/completions/render", s.render)
	}
	if !opts.RenderOnly {
		s.mux.HandleFunc("POST /v1/chat/completions", s.chat)
	}
	return s
}

// ServeHTTP answers as vLLM's FastAPI server: a missing route is 404
// {"detail":"Not Found"}, a bad key 401 {"error":"Unauthorized"}.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.APIKey != "" && strings.HasPrefix(r.URL.Path, "/v1") &&
		r.Header.Get("Authorization") != "Bearer "+s.opts.APIKey {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "Unauthorized"})
		return
	}
	if _, pattern := s.mux.Handler(r); pattern == "" {
		writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{map[string]any{
		"id": s.opts.ModelName, "object": "model", "owned_by": "vllm", "root": s.opts.ModelName}}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// writeError is vLLM's error body.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": status}})
}

// readBody decodes a request body as a JSON object and checks its model.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, bool) {
	data, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	var obj map[string]json.RawMessage
	if err == nil {
		err = json.Unmarshal(data, &obj)
	}
	if err != nil || obj == nil {
		writeError(w, http.StatusBadRequest, "BadRequestError", "body is not a JSON object")
		return nil, false
	}
	if m, ok := obj["model"]; ok {
		var name string
		if json.Unmarshal(m, &name) != nil || name != s.opts.ModelName {
			writeError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", m))
			return nil, false
		}
	}
	return obj, true
}

func (s *Server) now() int64 { return time.Now().Unix() }
