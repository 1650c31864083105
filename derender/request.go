package derender

import (
	"encoding/binary"
	"github.com/vrender/vrender/internal/wire"

	"github.com/vrender/vrender/parsers"
	"github.com/vrender/vrender/protocol"
	"github.com/vrender/vrender/tokenizer"
)

// parserRequest extracts the fields of a chat request that parsing reads.
func parserRequest(cr *protocol.ChatCompletionRequest) (*parsers.Request, error) {
	req := &parsers.Request{Tools: cr.Tools, ToolChoice: cr.ToolChoice, ParallelToolCalls: cr.ParallelToolCalls}
	inc, skip := cr.IncludeReasoning, cr.SkipSpecialTokens
	req.IncludeReasoning, req.SkipSpecialTokens = &inc, &skip
	req.ChatTemplateKwargs = cr.ChatTemplateKwargs
	if _, _, err := req.Choice(); err != nil {
		return nil, badRequest("%v", err)
	}
	return req, nil
}

// NeedsSpecialTokens is parsers.NeedsSpecialTokens for a chat request: the
// parser's adjust_request turns skip_special_tokens off when its markers
// are special tokens. It reads the number of tools and tool_choice only.
func NeedsSpecialTokens(cfg parsers.Config, cr *protocol.ChatCompletionRequest) bool {
	return parsers.NeedsSpecialTokens(cfg, &parsers.Request{Tools: cr.Tools, ToolChoice: cr.ToolChoice})
}

// parseSetup is what a parsed chat choice needs: the chat request, the
// detokenizer options and the prompt the machines are seeded with.
type parseSetup struct {
	chat   *protocol.ChatCompletionRequest
	reqKey []byte // the parsing-relevant fields, part of the cache key
	opts   tokenizer.DetokOptions
	prompt []int
	stops  map[int]bool
}

// newParseSetup reads the request as protocol decoded it.
func (e *Engine) newParseSetup(cr *protocol.ChatCompletionRequest, prompt []int) (*parseSetup, error) {
	if _, err := cr.ToolChoice.Resolve(len(cr.Tools) > 0); err != nil {
		return nil, badRequest("%v", err)
	}
	skip := cr.SkipSpecialTokens
	if e.harmony || NeedsSpecialTokens(e.cfg.Parsers, cr) {
		// The parser must see its markers; vLLM's HarmonyParser reads
		// every token id whatever the request.
		skip = false
	}
	key := appendRequestKey(nil, cr)
	stops := e.stops
	if len(cr.StopTokenIDs) > 0 {
		stops = make(map[int]bool, len(e.stops)+len(cr.StopTokenIDs))
		for id := range e.stops {
			stops[id] = true
		}
		for _, id := range cr.StopTokenIDs {
			stops[id] = true
		}
	}
	return &parseSetup{chat: cr, reqKey: key, opts: tokenizer.DetokOptions{SkipSpecialTokens: skip},
		prompt: prompt, stops: stops}, nil
}

// appendRequestKey appends the parsing-relevant fields of a chat request:
// each tool as its JSON dump, the others raw.
func appendRequestKey(key []byte, cr *protocol.ChatCompletionRequest) []byte {
	field := func(raw []byte) {
		key = binary.AppendUvarint(key, uint64(len(raw)))
		key = append(key, raw...)
	}
	var tool []byte
	for i := range cr.Tools {
		tool = cr.Tools[i].AppendJSON(tool[:0])
		field(tool)
	}
	field([]byte{'|'})
	field(cr.ToolChoice.AppendJSON(nil))
	var kwargs []byte // absent or null: no bytes, as the raw member was
	if cr.ChatTemplateKwargs != nil {
		kwargs = wire.AppendNode(nil, cr.ChatTemplateKwargs)
	}
	field(kwargs)
	return append(key, flag(cr.ParallelToolCalls == nil), flag(cr.ParallelToolCalls != nil && *cr.ParallelToolCalls),
		flag(cr.IncludeReasoning), flag(cr.SkipSpecialTokens))
}

func flag(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// textIDs are the ids of a chunk whose text is decoded: a stop token that
// ended generation is counted but never detokenized (vLLM's engine never
// hands it to the detokenizer).
func (s *parseSetup) textIDs(ids []int, finish *string, isSpecial func(int) bool) []int {
	if finish == nil || *finish != "stop" || len(ids) == 0 {
		return ids
	}
	// A stop token is an EOS id, a stop_token_ids entry, or a special
	// token (Llama 3 stops on <|eom_id|> too, which is in no EOS list of
	// the tokenizer files alone); a stop string never is one.
	if last := ids[len(ids)-1]; s.stops[last] || isSpecial(last) {
		return ids[:len(ids)-1]
	}
	return ids
}

// newToolCallID is vLLM's make_tool_call_id shape.
func newToolCallID() string { return "chatcmpl-tool-" + protocol.RandomUUID() }
