package server

import (
	"net/http"

	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/render"
)

// handleMessagesRender answers POST /v1/messages/render (vllm PR #45803):
// the Anthropic Messages body is converted to the chat request vLLM's
// /v1/messages builds from it and rendered by the chat render path, so the
// GenerateRequest is the one /v1/chat/completions/render gives for that
// chat request. Errors are the chat render route's OpenAI-style bodies.
func (s *server) handleMessagesRender(w http.ResponseWriter, r *http.Request) {
	body, e := s.readJSONBody(w, r)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	areq, err := protocol.DecodeAnthropicMessagesRequest(body)
	if err != nil {
		s.writeError(w, r, decodeError(err))
		return
	}
	req, err := render.AnthropicToChat(areq)
	if err != nil {
		s.writeError(w, r, decodeError(err))
		return
	}
	if e := s.checkModel(req.Model); e != nil {
		s.writeError(w, r, e)
		return
	}
	if e := s.checkChatLimits(len(req.Messages), len(req.Tools)); e != nil {
		s.writeError(w, r, e)
		return
	}
	s.writeChatRender(w, r, req, epMessagesRender)
}
