package standin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// tokenize answers the chat form of /tokenize with the golden prompt.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) {
	obj, ok := s.readBody(w, r)
	if !ok {
		return
	}
	if _, chat := obj["messages"]; !chat {
		writeError(w, http.StatusBadRequest, "BadRequestError", "the stand-in only answers the chat form of /tokenize")
		return
	}
	c, err := s.findPrompt(obj)
	if err != nil {
		s.noCase(w, err)
		return
	}
	if c.TokenizeError != "" {
		writeError(w, http.StatusBadRequest, "BadRequestError", c.TokenizeError)
		return
	}
	ids := c.PromptTokenIDs
	writeJSON(w, http.StatusOK, map[string]any{"count": len(ids), "max_model_len": 131072, "tokens": ids, "token_strs": nil})
}

// render answers /v1/chat/completions/render with a GenerateRequest
// holding the golden prompt.
func (s *Server) render(w http.ResponseWriter, r *http.Request) {
	obj, ok := s.readBody(w, r)
	if !ok {
		return
	}
	c, err := s.findPrompt(obj)
	if err != nil {
		s.noCase(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"request_id": "chatcmpl-standin", "token_ids": c.PromptTokenIDs, "token_offsets": nil, "features": nil,
		"content_parts": nil, "sampling_params": map[string]any{}, "model": s.opts.ModelName,
		"reasoning_ended": nil, "reasoning_parser_kwargs": nil, "return_token_ids": nil, "output_mode": "tokens",
		"stream": false, "stream_options": nil, "cache_salt": nil, "priority": 0,
		"kv_transfer_params": nil, "ec_transfer_params": nil,
	})
}

// noCase is the stand-in's 400 for a request outside the golden set.
func (s *Server) noCase(w http.ResponseWriter, err error) {
	status := http.StatusBadRequest
	if !errors.Is(err, errNoCase) {
		status = http.StatusInternalServerError
	}
	writeError(w, status, "BadRequestError", "stand-in: "+err.Error())
}

// chat answers /v1/chat/completions from the matching case.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	obj, ok := s.readBody(w, r)
	if !ok {
		return
	}
	c, err := s.findCase(obj)
	if err != nil {
		s.noCase(w, err)
		return
	}
	var stream, tokenIDs bool
	_ = json.Unmarshal(obj["stream"], &stream)
	_ = json.Unmarshal(obj["return_token_ids"], &tokenIDs)
	if stream {
		s.chatStream(w, c, tokenIDs)
		return
	}
	writeJSON(w, http.StatusOK, s.chatResponse(c, tokenIDs))
}

func (s *Server) chatResponse(c *Case, tokenIDs bool) map[string]any {
	calls := []any{}
	for i, tc := range c.Expect.ToolCalls {
		calls = append(calls, map[string]any{"id": fmt.Sprintf("chatcmpl-tool-standin%d", i), "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}})
	}
	choice := map[string]any{
		"index": 0,
		"message": map[string]any{"role": "assistant", "content": c.Expect.Content, "refusal": nil,
			"annotations": nil, "audio": nil, "function_call": nil, "tool_calls": calls, "reasoning": c.Expect.Reasoning},
		"logprobs": nil, "finish_reason": c.Expect.FinishReason, "stop_reason": nil, "token_ids": nil,
	}
	res := map[string]any{
		"id": "chatcmpl-standin-" + c.ID, "object": "chat.completion", "created": s.now(), "model": s.opts.ModelName,
		"choices": []any{choice}, "service_tier": nil, "system_fingerprint": nil,
		"usage":           map[string]any{"prompt_tokens": len(c.PromptTokenIDs), "completion_tokens": len(c.OutputTokenIDs), "total_tokens": len(c.PromptTokenIDs) + len(c.OutputTokenIDs)},
		"prompt_logprobs": nil, "prompt_token_ids": nil, "kv_transfer_params": nil,
	}
	if tokenIDs {
		choice["token_ids"] = c.OutputTokenIDs
		res["prompt_token_ids"] = c.PromptTokenIDs
	}
	return res
}

// chatStream replays vLLM's recorded stream: the role chunk (with the
// prompt ids), then one chunk per output token carrying that token's id
// and the delta vLLM sent for it, empty where vLLM's parser held text back
// (vLLM sends those chunks only because return_token_ids asks for every
// id), then [DONE].
func (s *Server) chatStream(w http.ResponseWriter, c *Case, tokenIDs bool) {
	byToken := map[int]StreamDelta{}
	role := json.RawMessage(`{"role":"assistant","content":""}`)
	for _, d := range c.VLLMStreamDeltas {
		if d.TokenIndex == nil {
			role = d.Delta
			continue
		}
		byToken[*d.TokenIndex] = d
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	id, created := "chatcmpl-standin-"+c.ID, s.now()
	send := func(delta json.RawMessage, finish *string, ids []int, prompt []int) {
		choice := map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}
		if tokenIDs && ids != nil {
			choice["token_ids"] = ids
		}
		chunk := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created,
			"model": s.opts.ModelName, "choices": []any{choice}}
		if tokenIDs && prompt != nil {
			chunk["prompt_token_ids"] = prompt
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send(role, nil, nil, c.PromptTokenIDs)
	for i, tok := range c.OutputTokenIDs {
		d, ok := byToken[i]
		delta := json.RawMessage(`{}`)
		if ok {
			delta = d.Delta
		}
		finish := d.FinishReason
		if finish == nil && i == len(c.OutputTokenIDs)-1 {
			finish = &c.Expect.FinishReason
		}
		send(delta, finish, []int{tok}, nil)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}
