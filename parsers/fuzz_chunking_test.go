package parsers

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vrender/vrender/internal/parity"
	"github.com/vrender/vrender/tokenizer"
)

// goldenFuzzCase is a golden parity case ready to run: its request, its
// per-token detokenized pieces and the vocabulary they came from.
type goldenFuzzCase struct {
	c      *goldenCase
	req    Request
	tok    *tokenizer.Tokenizer
	pieces []string
	ids    []int
}

// loadGoldenFuzzCases prepares every golden case. It skips (fails in CI)
// when ../shared/parity, a model or a case's parser is absent.
func loadGoldenFuzzCases(f *testing.F) []goldenFuzzCase {
	f.Helper()
	names, sets := parity.Load(f)
	toks := map[string]*tokenizer.Tokenizer{}
	var out []goldenFuzzCase
	for _, file := range names {
		for i := range sets[file] {
			c := &sets[file][i]
			cfg := goldenConfig(c)
			parity.RequireParsers(f, cfg.ReasoningParser, cfg.ToolParser, HasReasoning, HasTool)
			tok, ok := toks[c.Tokenizer]
			if !ok {
				var err error
				tok, err = tokenizer.Load(filepath.Join(parity.ModelDir(f, c.Tokenizer), "tokenizer.json"))
				if err != nil {
					f.Fatalf("load %s: %v", c.Tokenizer, err)
				}
				toks[c.Tokenizer] = tok
			}
			gc := goldenFuzzCase{c: c, tok: tok}
			req, err := decodeRequest(c.ChatRequest)
			gc.req = req
			if err != nil {
				f.Fatalf("%s/%s: chat_request: %v", file, c.ID, err)
			}
			gc.pieces, gc.ids = detokPieces(tok, c, &gc.req)
			out = append(out, gc)
		}
	}
	if len(out) == 0 {
		f.Fatal("no golden cases with implemented parsers")
	}
	return out
}

// recipeCuts turns recipe bytes into increasing token boundaries ending at
// n (runChunks pushes up to the last boundary only): each byte is a step of 1 to 8 tokens, so the fuzzer explores chunkings
// from one token per chunk to long runs; bit 3 merges the step into the
// next one (no cut here).
func recipeCuts(n int, recipe []byte) []int {
	var cuts []int
	pos := 0
	for _, b := range recipe {
		pos += int(b&7) + 1
		if pos >= n {
			break
		}
		if b&8 == 0 {
			cuts = append(cuts, pos)
		}
	}
	return append(cuts, n)
}

// FuzzGoldenChunking streams real model outputs (the golden parity cases:
// vLLM's own parser answers) under fuzzer-chosen chunkings; a strict case
// must give vLLM's streamed answer exactly under every chunking, so no
// marker leaks and nothing is lost or duplicated at a chunk boundary.
func FuzzGoldenChunking(f *testing.F) {
	cases := loadGoldenFuzzCases(f)
	for i := range cases {
		f.Add(uint16(i), []byte{0, 1, 2, 3, 4, 5, 6, 7})
	}
	f.Add(uint16(0), []byte{})
	f.Add(uint16(1), []byte{7, 15, 7, 15, 0, 0, 0})
	f.Fuzz(func(t *testing.T, which uint16, recipe []byte) {
		gc := &cases[int(which)%len(cases)]
		cuts := recipeCuts(len(gc.pieces), recipe)
		got, _ := runChunks(t, gc.c, gc.tok, &gc.req, gc.pieces, gc.ids, cuts, len(recipe)%2 == 1)
		want := gc.c.Want(true)
		if gc.c.Stream == "relaxed" {
			got = parity.Answer{Reasoning: got.Reasoning, FinishReason: got.FinishReason}
			want = parity.Answer{Reasoning: want.Reasoning, FinishReason: want.FinishReason}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s (%s stream), cuts %v:\n got %s\nwant %s", gc.c.ID, gc.c.Stream, cuts, show(got), show(want))
		}
	})
}

// FuzzGoldenMutated edits real model outputs (drops, repeats and swaps
// tokens of a golden case) into outputs no model gave, then checks that
// the parser's streamed answer does not depend on the chunking: one chunk,
// one token per chunk and a fuzzer-chosen chunking agree. Only strict
// cases' configurations are used: for relaxed ones vLLM's own streaming
// answer depends on the chunking, and so may vrender's.
func FuzzGoldenMutated(f *testing.F) {
	var cases []goldenFuzzCase
	for _, gc := range loadGoldenFuzzCases(f) {
		if gc.c.Stream == "strict" {
			cases = append(cases, gc)
		}
	}
	for i := range cases {
		f.Add(uint16(i), []byte{0, 1, 2}, []byte{3, 1, 4, 1, 5})
	}
	f.Add(uint16(2), []byte{0x80, 0x41, 0xc2, 0x03}, []byte{})
	f.Fuzz(func(t *testing.T, which uint16, edits, recipe []byte) {
		gc := cases[int(which)%len(cases)]
		c := *gc.c
		c.OutputTokenIDs = mutateIDs(gc.c.OutputTokenIDs, edits)
		pieces, ids := detokPieces(gc.tok, &c, &gc.req)
		whole, _ := runChunks(t, &c, gc.tok, &gc.req, pieces, ids, []int{len(pieces)}, false)
		perToken := make([]int, 0, len(pieces))
		for i := 1; i <= len(pieces); i++ {
			perToken = append(perToken, i)
		}
		for _, cuts := range [][]int{perToken, recipeCuts(len(pieces), recipe)} {
			got, _ := runChunks(t, &c, gc.tok, &gc.req, pieces, ids, cuts, false)
			if !reflect.DeepEqual(got, whole) {
				t.Fatalf("%s mutated %v, cuts %v:\n got %s\none chunk %s", c.ID, edits, cuts, show(got), show(whole))
			}
		}
	})
}

// mutateIDs applies edits to a copy of ids: each pair of bytes is an
// operation (top two bits: drop, repeat, swap with the next, or move to the
// end) and a position.
func mutateIDs(ids []int, edits []byte) []int {
	out := append([]int(nil), ids...)
	for i := 0; i+1 < len(edits) && len(out) > 1; i += 2 {
		p := int(edits[i+1]) % len(out)
		switch edits[i] >> 6 {
		case 0:
			out = append(out[:p], out[p+1:]...)
		case 1:
			out = append(out[:p+1], out[p:]...)
		case 2:
			q := (p + 1) % len(out)
			out[p], out[q] = out[q], out[p]
		default:
			id := out[p]
			out = append(append(out[:p], out[p+1:]...), id)
		}
	}
	return out
}
