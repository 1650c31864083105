package server

import (
	"fmt"
	"net/http"

	"github.com/vrender/vrender/protocol"
)

// Default field limits. vLLM sets none; these are far above any real
// conversation and keep one request from holding a core for minutes.
const (
	DefaultMaxMessages = 10000
	DefaultMaxTools    = 2048
	// DefaultMaxDerenderTokens bounds the token ids of one derender
	// request (choices, prompt and carried stream state together).
	DefaultMaxDerenderTokens = 4 << 20
)

// Limits bound request fields. Zero means the default; negative means no
// limit.
type Limits struct {
	MaxMessages       int
	MaxTools          int
	MaxDerenderTokens int
}

func (l Limits) withDefaults() Limits {
	def := func(v, d int) int {
		switch {
		case v == 0:
			return d
		case v < 0:
			return -1
		}
		return v
	}
	return Limits{
		MaxMessages:       def(l.MaxMessages, DefaultMaxMessages),
		MaxTools:          def(l.MaxTools, DefaultMaxTools),
		MaxDerenderTokens: def(l.MaxDerenderTokens, DefaultMaxDerenderTokens),
	}
}

// limitError is the 400 for a field over its limit, in OpenAI's shape
// with the field as param.
func (s *server) limitError(param, what string, n, limit int) *apiError {
	s.metrics.limited.Add(1)
	return badRequest(fmt.Sprintf("%s (%d) exceeds the server's limit (%d).", what, n, limit), &param)
}

// checkChatLimits bounds a chat request's messages and tools.
func (s *server) checkChatLimits(messages, tools int) *apiError {
	if l := s.limits.MaxMessages; l >= 0 && messages > l {
		return s.limitError("messages", "Number of messages", messages, l)
	}
	if l := s.limits.MaxTools; l >= 0 && tools > l {
		return s.limitError("tools", "Number of tools", tools, l)
	}
	return nil
}

// checkDerenderTokens bounds the token ids a derender request carries.
func (s *server) checkDerenderTokens(n int) *apiError {
	if l := s.limits.MaxDerenderTokens; l >= 0 && n > l {
		return s.limitError("token_ids", "Number of token ids in the request", n, l)
	}
	return nil
}

// generatedTokens counts the generated token ids of engine responses.
func generatedTokens(gens ...*protocol.GenerateResponse) int {
	n := 0
	for _, g := range gens {
		for i := range g.Choices {
			n += len(g.Choices[i].TokenIDs)
		}
	}
	return n
}

// streamStateTokens counts the token ids a stream state carries back.
func streamStateTokens(st *protocol.DerenderStreamState) int {
	if st == nil {
		return 0
	}
	return len(st.OutputTokenIDs) + len(st.LogprobContextTokenIDs)
}

// tooLarge is the 413 for a body over the limit, as Starlette's
// HTTPException would send it.
func (s *server) tooLarge(limit int64) *apiError {
	s.metrics.limited.Add(1)
	return httpError(http.StatusRequestEntityTooLarge,
		fmt.Sprintf("Request body is larger than the limit of %d bytes", limit))
}
