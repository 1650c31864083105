package server

import (
	"net/http"

	"github.com/vrender/vrender/anthropic"
	"github.com/vrender/vrender/protocol"
)

// handleMessagesRender answers POST /v1/messages/render (vllm PR #45803):
// the Anthropic Messages body is converted to the chat request vLLM's
// /v1/messages builds from it and rendered by the chat render path, so the
// GenerateRequest is the one /v1/chat/completions/render gives for that
// chat request. Errors are the chat render route's OpenAI-style bodies.
func (s *server) handleMessagesRender(w http.ResponseWriter, r *http.Request) {
	req, ok := s.readMessagesRequest(w, r, s.writeError)
	if !ok {
		return
	}
	s.writeChatRender(w, r, req, epMessagesRender)
}

// readMessagesRequest reads a Messages body, validates it as vLLM's model
// does and converts it to its chat request, then checks the served model
// name and the message and tool limits. A body failing validation gets the
// OpenAI-shaped 400; later errors are written by writeErr. On failure it
// returns false.
func (s *server) readMessagesRequest(w http.ResponseWriter, r *http.Request,
	writeErr func(http.ResponseWriter, *http.Request, *apiError)) (*protocol.ChatCompletionRequest, bool) {
	body, e := s.readJSONBody(w, r)
	if e != nil {
		s.writeError(w, r, e)
		return nil, false
	}
	areq, err := anthropic.DecodeMessagesRequest(body)
	if err != nil {
		s.writeError(w, r, decodeError(err))
		return nil, false
	}
	req, err := anthropic.ToChat(areq)
	if err != nil {
		writeErr(w, r, decodeError(err))
		return nil, false
	}
	if e := s.checkModel(req.Model); e != nil {
		writeErr(w, r, e)
		return nil, false
	}
	if e := s.checkChatLimits(len(req.Messages), len(req.Tools)); e != nil {
		writeErr(w, r, e)
		return nil, false
	}
	return req, true
}
