package enginesim

import (
	"strconv"

	"github.com/vrender/vrender/internal/wire"
)

// The engine's JSON is written by hand into reused buffers: one event per
// token for hundreds of concurrent streams is the hot path, and the key
// order must follow vLLM's pydantic models anyway.
//
// Stream event (GenerateTokensStreamResponse, model_dump_json with the
// None-valued prompt_token_ids/mm_placeholders/metrics excluded):
//
//	{"request_id":…,"usage":…,["prompt_token_ids":[…],]"output_mode":"tokens","choices":[{choice}]}
//
// Choice (GenerateTokensStreamChoice; stop_reason as older vLLM versions
// send it, so a client can tell which stop token ended the output):
//
//	{"index":…,"finish_reason":…,"stop_reason":…,"token_ids":[…],"routed_experts":null,
//	 "sampling_mask":null,"weight_versions":…,"logprobs":…} (logprobs in Config.LogprobsShape)

func appendInt(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) }

// appendUsage writes UsageInfo: prompt_tokens, total_tokens,
// completion_tokens, and prompt_tokens_details: PromptTokenUsageInfo
// {"cached_tokens":N} when cached is set (--enable-prompt-tokens-details),
// else null; withDetails false is exclude_none (no nulls).
func appendUsage(b []byte, prompt, completion int, withDetails bool, cached *int) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = appendInt(b, prompt)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, prompt+completion)
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, completion)
	switch {
	case cached != nil:
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = appendInt(b, *cached)
		if withDetails {
			b = append(b, `,"multimodal_tokens":null`...)
		}
		b = append(b, '}')
	case withDetails:
		b = append(b, `,"prompt_tokens_details":null`...)
	}
	return append(b, '}')
}

// choiceFields are the members of one choice in one response.
type choiceFields struct {
	index      int
	finish     string // "" for null
	stopReason int
	hasStop    bool
	tokens     []int
	pos        int // output position of tokens[0] (for logprobs)
	total      int // the choice's tokens so far, for weight_versions on its last event
	final      bool
}

// appendChoice writes one choice object.
func (g *generation) appendChoice(b []byte, c choiceFields) []byte {
	b = append(b, `{"index":`...)
	b = appendInt(b, c.index)
	b = append(b, `,"finish_reason":`...)
	if c.finish == "" {
		b = append(b, "null"...)
	} else {
		b = append(b, '"')
		b = append(b, c.finish...)
		b = append(b, '"')
	}
	b = append(b, `,"stop_reason":`...)
	if c.hasStop {
		b = appendInt(b, c.stopReason)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"token_ids":`...)
	b = wire.AppendInts(b, c.tokens)
	b = append(b, `,"routed_experts":null,"sampling_mask":null,"weight_versions":`...)
	if c.final {
		b = append(b, `[{"version":"default","start":0,"end":`...)
		b = appendInt(b, c.total)
		b = append(b, "}]"...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"logprobs":`...)
	if g.logprobs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"content":[`...)
		for i, t := range c.tokens {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendLogprobEntry(b, t, c.pos+i, *g.logprobs, g.vocab, g.generateShape)
		}
		b = append(b, "]}"...)
	}
	return append(b, '}')
}

// appendEvent writes one SSE event for one choice.
func (g *generation) appendEvent(b []byte, c choiceFields, withPromptIDs bool) []byte {
	b = append(b, `data: {"request_id":`...)
	b = append(b, g.idJSON...)
	b = append(b, `,"usage":`...)
	if g.continuousUsage {
		b = appendUsage(b, g.promptLen, c.total, true, nil)
	} else {
		b = append(b, "null"...)
	}
	if withPromptIDs {
		b = append(b, `,"prompt_token_ids":`...)
		b = wire.AppendInts(b, g.req.TokenIDs)
	}
	b = append(b, `,"output_mode":"tokens","choices":[`...)
	b = g.appendChoice(b, c)
	return append(b, "]}\n\n"...)
}

// appendFinalUsage writes the include_usage event (exclude_none: no
// metrics, and prompt_tokens_details only when set).
func (g *generation) appendFinalUsage(b []byte, completion int) []byte {
	b = append(b, `data: {"request_id":`...)
	b = append(b, g.idJSON...)
	b = append(b, `,"usage":`...)
	b = appendUsage(b, g.promptLen, completion, false, g.cachedDetails)
	return append(b, `,"output_mode":"tokens","choices":[]}`+"\n\n"...)
}

const doneEvent = "data: [DONE]\n\n"

// appendResponse writes the non-streaming body (GenerateTokensResponse,
// model_dump: every field, nulls included).
func (g *generation) appendResponse(b []byte, model string, created int64, choices []choiceFields) []byte {
	completion := 0
	for _, c := range choices {
		completion += len(c.tokens)
	}
	b = append(b, `{"request_id":`...)
	b = append(b, g.idJSON...)
	b = append(b, `,"model":`...)
	b = wire.AppendString(b, model)
	b = append(b, `,"created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"usage":`...)
	b = appendUsage(b, g.promptLen, completion, true, g.cachedDetails)
	b = append(b, `,"prompt_logprobs":null,"prompt_token_id_logprobs":null,"prompt_token_ids":`...)
	if g.returnTokenIDs {
		b = wire.AppendInts(b, g.req.TokenIDs)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"mm_placeholders":null,"metrics":null,"kv_transfer_params":`...)
	if g.kvResponse != nil {
		b = append(b, g.kvResponse...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"ec_transfer_params":null,"output_mode":"tokens","choices":[`...)
	for i, c := range choices {
		if i > 0 {
			b = append(b, ',')
		}
		b = g.appendChoice(b, c)
	}
	return append(b, "]}"...)
}
