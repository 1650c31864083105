package bench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/vrender/vrender/tokenizer"
)

// SampleRequest is one prompt of a serving benchmark, as vLLM's
// benchmarks/datasets.py describes it.
type SampleRequest struct {
	Prompt            string
	PromptLen         int // prompt tokens by the benchmark's tokenizer (0 when none was given)
	ExpectedOutputLen int // max tokens asked for
	RequestID         string
}

// RandomDatasetOptions mirrors vLLM's --random-* flags.
type RandomDatasetOptions struct {
	NumPrompts      int
	InputLen        int     // --random-input-len (vLLM default 1024)
	OutputLen       int     // --random-output-len (vLLM default 128)
	RangeRatio      float64 // --random-range-ratio in [0, 1)
	PrefixLen       int     // --random-prefix-len
	Seed            uint64
	RequestIDPrefix string
}

// serveRNG returns the dataset's random source. vLLM uses numpy's PCG64; Go's
// PCG differs, so prompts are reproducible per seed but not identical to
// vLLM's (the lengths follow the same distribution).
func serveRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

// serveUniformInt returns an integer uniform in [low, high].
func serveUniformInt(r *rand.Rand, low, high int) int { return low + r.IntN(high-low+1) }

// RandomDataset generates synthetic prompts the way vLLM's RandomDataset
// does: per-request input and output lengths uniform around the configured
// means, prompt text decoded from a run of consecutive non-special token
// ids starting at a random offset, then re-encoded and adjusted until it
// encodes to the sampled length (the decode/encode round trip is not
// length-preserving in general).
func RandomDataset(tok *tokenizer.Tokenizer, o RandomDatasetOptions) ([]SampleRequest, error) {
	if tok == nil {
		return nil, errors.New("random dataset: a tokenizer is required (--tokenizer DIR)")
	}
	if o.NumPrompts <= 0 {
		return nil, fmt.Errorf("random dataset: --num-prompts must be positive, got %d", o.NumPrompts)
	}
	if o.RangeRatio < 0 || o.RangeRatio >= 1 {
		return nil, fmt.Errorf("random dataset: --random-range-ratio must be in [0, 1), got %g", o.RangeRatio)
	}
	numSpecial := len(tok.Encode("", true)) - len(tok.Encode("", false))
	realInput := max(0, o.InputLen-numSpecial)
	inLow := int(math.Floor(float64(realInput) * (1 - o.RangeRatio)))
	inHigh := int(math.Ceil(float64(realInput) * (1 + o.RangeRatio)))
	outLow := max(1, int(math.Floor(float64(o.OutputLen)*(1-o.RangeRatio))))
	outHigh := max(1, int(math.Ceil(float64(o.OutputLen)*(1+o.RangeRatio))))
	if o.PrefixLen+inLow < 1 {
		return nil, fmt.Errorf("random dataset: --random-input-len %d is too small: with %d special tokens and range ratio %g "+
			"a prompt could have no tokens", o.InputLen, numSpecial, o.RangeRatio)
	}

	allowed := allowedTokenIDs(tok)
	if len(allowed) == 0 {
		return nil, errors.New("random dataset: the tokenizer has no non-special tokens")
	}
	r := serveRNG(o.Seed)
	inputLens := make([]int, o.NumPrompts)
	outputLens := make([]int, o.NumPrompts)
	offsets := make([]int, o.NumPrompts)
	for i := range inputLens {
		inputLens[i] = serveUniformInt(r, inLow, inHigh)
	}
	for i := range outputLens {
		outputLens[i] = serveUniformInt(r, outLow, outHigh)
	}
	for i := range offsets {
		offsets[i] = r.IntN(len(allowed))
	}
	prefix := make([]int, o.PrefixLen)
	for i := range prefix {
		prefix[i] = allowed[r.IntN(len(allowed))]
	}

	out := make([]SampleRequest, o.NumPrompts)
	for i := range out {
		seq := make([]int, 0, o.PrefixLen+inputLens[i])
		seq = append(seq, prefix...)
		for j := range inputLens[i] {
			seq = append(seq, allowed[(offsets[i]+i+j)%len(allowed)])
		}
		prompt, n := decodeToTargetLen(tok, r, allowed, seq, o.PrefixLen+inputLens[i])
		out[i] = SampleRequest{Prompt: prompt, PromptLen: n, ExpectedOutputLen: outputLens[i], RequestID: o.RequestIDPrefix + strconv.Itoa(i)}
	}
	return out, nil
}

// allowedTokenIDs lists the base vocabulary's ids that are not special
// tokens (vLLM: arange(vocab_size) minus all_special_ids).
func allowedTokenIDs(tok *tokenizer.Tokenizer) []int {
	vocab := tok.Len() - len(tok.AddedTokens())
	ids := make([]int, 0, vocab)
	for id := range vocab {
		if _, ok := tok.IDToToken(id); ok && !tok.IsSpecial(id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// decodeToTargetLen decodes ids to text and re-encodes it, padding with
// random tokens or truncating, at most ten times, until the text encodes to
// target tokens (vLLM's gen_prompt_decode_to_target_len). It returns the
// text and its final token count.
func decodeToTargetLen(tok *tokenizer.Tokenizer, r *rand.Rand, allowed, seq []int, target int) (string, int) {
	const maxRetry = 10
	var prompt string
	for try := 0; ; try++ {
		prompt = tok.Decode(seq, false)
		seq = tok.Encode(prompt, false)
		if try >= maxRetry || len(seq) == target {
			return prompt, len(seq)
		}
		if len(seq) < target {
			for len(seq) < target {
				seq = append(seq, allowed[r.IntN(len(allowed))])
			}
		} else {
			seq = seq[:target]
		}
	}
}

// CustomDatasetOptions mirrors vLLM's custom dataset flags.
type CustomDatasetOptions struct {
	Path            string // --dataset-path: JSONL, one {"prompt": ...} per line
	NumPrompts      int    // <= 0: every line
	OutputLen       int    // --custom-output-len; -1: each line's "output_tokens"
	Seed            uint64
	NoShuffle       bool
	RequestIDPrefix string
}

// customLine is one line of a custom dataset.
type customLine struct {
	Prompt       *string `json:"prompt"`
	OutputTokens *int    `json:"output_tokens"`
}

// CustomDataset reads a JSONL file of {"prompt": "...", "output_tokens": N}
// lines like vLLM's CustomDataset: shuffled by the seed (unless NoShuffle),
// the first NumPrompts taken and, if the file is shorter, lines repeated at
// random to reach NumPrompts. The prompt is sent as is (vLLM's
// --skip-chat-template): the server applies the chat template. tok, when
// not nil, counts the prompt tokens.
func CustomDataset(tok *tokenizer.Tokenizer, o CustomDatasetOptions) ([]SampleRequest, error) {
	f, err := os.Open(o.Path)
	if err != nil {
		return nil, fmt.Errorf("custom dataset: %w", err)
	}
	defer f.Close()
	var lines []customLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var l customLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("custom dataset: %s line %d: %w", o.Path, n, err)
		}
		if l.Prompt == nil {
			return nil, fmt.Errorf("custom dataset: %s line %d has no \"prompt\"", o.Path, n)
		}
		if o.OutputLen < 0 && l.OutputTokens == nil {
			return nil, fmt.Errorf("custom dataset: %s line %d has no \"output_tokens\" and --custom-output-len is -1", o.Path, n)
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("custom dataset: read %s: %w", o.Path, err)
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("custom dataset: %s holds no prompts", o.Path)
	}
	r := serveRNG(o.Seed)
	if !o.NoShuffle {
		r.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	}
	num := o.NumPrompts
	if num <= 0 {
		num = len(lines)
	}
	out := make([]SampleRequest, 0, num)
	for i := range num {
		src := i
		if i >= len(lines) {
			src = r.IntN(len(lines))
		}
		l := lines[src]
		outLen := o.OutputLen
		if outLen < 0 {
			outLen = *l.OutputTokens
		}
		s := SampleRequest{Prompt: *l.Prompt, ExpectedOutputLen: outLen, RequestID: o.RequestIDPrefix + strconv.Itoa(i)}
		if tok != nil {
			s.PromptLen = len(tok.Encode(s.Prompt, true))
		}
		out = append(out, s)
	}
	return out, nil
}
