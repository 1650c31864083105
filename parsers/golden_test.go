package parsers

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vrender/vrender/internal/parity"
	"github.com/vrender/vrender/tokenizer"
)

type goldenCase = parity.Case

// goldenConfig is the parser configuration a case was produced with.
func goldenConfig(c *goldenCase) Config {
	r, tool := c.Parsers()
	return Config{ReasoningParser: r, ToolParser: tool, EnableAutoToolChoice: c.EnableAutoToolChoice}
}

func resultAnswer(r Result) parity.Answer {
	a := parity.Answer{Content: parity.Null(r.Content), Reasoning: parity.Null(r.Reasoning), FinishReason: r.FinishReason}
	for _, tc := range r.ToolCalls {
		a.Calls = append(a.Calls, tc.Name+" "+tc.Arguments)
	}
	return a
}

func goldenTokenizer(t *testing.T, cache map[string]*tokenizer.Tokenizer, name string) *tokenizer.Tokenizer {
	if tok, ok := cache[name]; ok {
		return tok
	}
	dir := parity.ModelDir(t, name)
	tok, err := tokenizer.Load(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	cache[name] = tok
	return tok
}

// detokPieces detokenizes the output one token at a time as vLLM does; the
// stop token is counted but never detokenized.
func detokPieces(tok *tokenizer.Tokenizer, c *goldenCase, req *Request) ([]string, []int) {
	ids := c.OutputTokenIDs
	if c.FinishReasonEngine == "stop" && len(ids) > 0 {
		ids = ids[:len(ids)-1]
	}
	skip := req.SkipSpecialTokens == nil || *req.SkipSpecialTokens
	if NeedsSpecialTokens(goldenConfig(c), req) {
		skip = false
	}
	d := tokenizer.NewDetokenizer(tok, tokenizer.DetokOptions{SkipSpecialTokens: skip}, c.PromptTokenIDs)
	pieces := make([]string, len(ids))
	for i, id := range ids {
		pieces[i] = d.Step(id)
	}
	return pieces, ids
}

// runChunks feeds pieces split at cuts and returns the stream accumulation
// and the parser's final Result; streaming runs the parser as a streaming
// server does (SetStreaming).
func runChunks(t *testing.T, c *goldenCase, v Vocab, req *Request, pieces []string, ids []int, cuts []int, streaming bool) (parity.Answer, Result) {
	p, err := New(goldenConfig(c), v, req, c.PromptTokenIDs)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if streaming {
		p.SetStreaming()
	}
	var acc Accumulator
	var scratch Delta
	prev := 0
	for i, cut := range cuts {
		text := ""
		for _, s := range pieces[prev:cut] {
			text += s
		}
		acc.Add(pushAlternating(p, i, text, &scratch))
		prev = cut
	}
	acc.Add(finishDelta(p))
	res := acc.Result(p, c.FinishReasonEngine)
	a := parity.Answer{Content: acc.Content(), Reasoning: acc.Reasoning(), FinishReason: res.FinishReason}
	for _, tc := range acc.Calls() {
		a.Calls = append(a.Calls, tc.Name+" "+tc.Arguments)
	}
	return a, res
}

func TestGolden(t *testing.T) {
	names, sets := parity.Load(t)
	toks := map[string]*tokenizer.Tokenizer{}
	tally := parity.NewTally(names)
	for _, file := range names {
		for i := range sets[file] {
			c := &sets[file][i]
			cfg := goldenConfig(c)
			t.Run(file+"/"+c.ID, func(t *testing.T) {
				defer tally.Record(file, t)
				parity.RequireParsers(t, cfg.ReasoningParser, cfg.ToolParser, HasReasoning, HasTool)
				req, err := decodeRequest(c.ChatRequest)
				if err != nil {
					t.Fatalf("chat_request: %v", err)
				}
				tok := goldenTokenizer(t, toks, c.Tokenizer)
				pieces, ids := detokPieces(tok, c, &req)
				for k, cuts := range parity.Chunkings(len(pieces), uint64(i)+1) {
					// Every other chunking streams as a server does: the
					// streaming machines keep less, and must reach the
					// same stream answer.
					streaming := k%2 == 1
					got, res := runChunks(t, c, tok, &req, pieces, ids, cuts, streaming)
					if k == 0 {
						if g, w := resultAnswer(res), c.Want(false); !reflect.DeepEqual(g, w) {
							t.Fatalf("non-streaming:\n got %s\nwant %s", show(g), show(w))
						}
					}
					want := c.Want(true)
					if c.Stream == "relaxed" {
						got = parity.Answer{Reasoning: got.Reasoning, FinishReason: got.FinishReason}
						want = parity.Answer{Reasoning: want.Reasoning, FinishReason: want.FinishReason}
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s stream (streaming %v), chunking %d %v:\n got %s\nwant %s", c.Stream, streaming, k, cuts, show(got), show(want))
					}
				}
			})
		}
	}
	tally.Log(t)
}

func show(a parity.Answer) string {
	b, _ := json.Marshal(a)
	return fmt.Sprint(string(b))
}
