package enginesim

import (
	"fmt"
	"net/http"

	"github.com/vrender/vrender/protocol"
)

// checkLogprobs is SamplingParams._validate_logprobs, run by vLLM's input
// processor before the prompt is checked: sample and prompt logprobs
// beyond --max-logprobs are refused, -1 counting as the whole vocabulary.
func (s *Sim) checkLogprobs(p *protocol.SamplingParams) *apiError {
	limit := s.cfg.MaxLogprobs
	if limit == -1 {
		limit = s.vocabSize
	}
	check := func(n *int, what, param string) *apiError {
		if n == nil || *n == 0 {
			return nil
		}
		want := *n
		if want == -1 {
			want = s.vocabSize
		}
		if want <= limit {
			return nil
		}
		msg := fmt.Sprintf("Requested %s logprobs of %d, which is greater than max allowed: %d (parameter=%s, value=%d)",
			what, want, limit, param, want)
		return &apiError{http.StatusBadRequest,
			protocol.NewErrorResponse(http.StatusBadRequest, protocol.ErrorTypeBadRequest, msg, &param)}
	}
	if e := check(p.Logprobs, "sample", "logprobs"); e != nil {
		return e
	}
	return check(p.PromptLogprobs, "prompt", "prompt_logprobs")
}
