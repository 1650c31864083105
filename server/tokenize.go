package server

import (
	"net/http"

	"github.com/vrender/vrender/internal/telemetry"
	"github.com/vrender/vrender/protocol"
)

// handleTokenize answers POST /tokenize: the prompt form tokenizes the
// text, the chat form renders the conversation with the chat template first.
func (s *server) handleTokenize(w http.ResponseWriter, r *http.Request) {
	body, tree, e := s.readJSONTree(w, r)
	if e != nil {
		s.writeError(w, r, e)
		return
	}
	req, err := protocol.DecodeTokenizeTree(body, tree)
	if err != nil {
		s.writeError(w, r, decodeError(err))
		return
	}
	if e := s.checkModel(req.ModelName()); e != nil {
		s.writeError(w, r, e)
		return
	}
	tok := s.model.Tokenizer
	var ids []int
	ctx, span := s.span(r.Context(), "tokenize")
	if req.Chat != nil {
		if e := s.checkChatLimits(len(req.Chat.Messages), len(req.Chat.Tools)); e != nil {
			span.End()
			s.writeError(w, r, e)
			return
		}
		if ids, err = s.tokenizeChat(ctx, req.Chat); err != nil {
			span.End()
			s.writeError(w, r, s.renderError(r.Context(), err))
			return
		}
	} else {
		// vLLM's /tokenize has no length limit; the server's byte limit
		// keeps one prompt from costing the tokenizer gigabytes.
		if err := s.generator.CheckPromptBytes(req.Completion.Prompt); err != nil {
			span.End()
			s.writeError(w, r, s.renderError(r.Context(), err))
			return
		}
		start := s.stages.Start()
		ids = tok.Encode(req.Completion.Prompt, req.Completion.AddSpecialTokens)
		s.stages.Since(telemetry.StageTokenize, start)
	}
	span.End()
	s.metrics.prompt[epTokenize].Add(int64(len(ids)))
	var strs []string
	if req.WantTokenStrs() {
		strs = make([]string, len(ids))
		for i, id := range ids {
			strs[i], _ = tok.IDToToken(id)
		}
	}
	s.writeJSON(w, r, http.StatusOK, &protocol.TokenizeResponse{
		Count:       len(ids),
		MaxModelLen: s.model.MaxModelLen,
		Tokens:      ids,
		TokenStrs:   strs,
	})
}

// decodeError maps a request decoding failure to its error body.
func decodeError(err error) *apiError {
	if ae := frontEndError(err); ae != nil {
		return ae
	}
	return badRequest(err.Error(), nil)
}
