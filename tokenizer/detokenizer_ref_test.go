package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrender/vrender/internal/testenv"
)

// detokRef is a literal transcription of vLLM's Python — detokenize_incrementally,
// convert_prompt_ids_to_tokens and _convert_tokens_to_string_with_added_encoders
// (vllm/tokenizers/detokenizer_utils.py), _seed_stream_state and
// _detokenize_delta (vllm/renderers/online_derenderer.py) — kept deliberately
// naive (whole lists, Python slices, []rune for str) so that it shares no code
// or shortcuts with detokenizer.go.
type detokRef struct {
	v             detokVocab
	allSpecialIDs func(id int) bool
	isFast        bool
	skip, spaces  bool
}

// convertIDsToTokens is transformers' convert_ids_to_tokens(ids,
// skip_special_tokens) followed by vLLM's _replace_none_with_empty.
func (r detokRef) convertIDsToTokens(ids []int, skip bool) []string {
	var out []string
	for _, id := range ids {
		if skip && r.allSpecialIDs(id) {
			continue
		}
		tok, ok := r.v.IDToToken(id)
		if !ok {
			tok = "" // None
		}
		out = append(out, tok)
	}
	return out
}

func (r detokRef) convertPromptIDsToTokens(promptIDs []int) ([]string, int, int) {
	start := len(promptIDs) - 5 - 2
	if start < 0 {
		start = 0
	}
	newTokens := r.convertIDsToTokens(promptIDs[start:], r.skip)
	readOffset := len(newTokens)
	prefixOffset := readOffset - 5
	if prefixOffset < 0 {
		prefixOffset = 0
	}
	return newTokens, prefixOffset, readOffset
}

func (r detokRef) withAddedEncoders(outputTokens []string) string {
	added := map[string]bool{}
	for _, a := range r.v.AddedTokens() {
		added[a.Content] = true
	}
	var subTexts, current []string
	for _, token := range outputTokens {
		if r.skip {
			if id, ok := r.v.TokenToID(token); ok && r.allSpecialIDs(id) {
				continue
			}
		}
		if added[token] {
			if len(current) > 0 {
				subTexts = append(subTexts, r.v.TokensToString(current))
				current = nil
			}
			subTexts = append(subTexts, token)
		} else {
			current = append(current, token)
		}
	}
	if len(current) > 0 {
		subTexts = append(subTexts, r.v.TokensToString(current))
	}
	if r.spaces {
		return strings.Join(subTexts, " ")
	}
	return strings.Join(subTexts, "")
}

func (r detokRef) tokensToString(tokens []string) string {
	if r.isFast || len(r.v.AddedTokens()) == 0 {
		return r.v.TokensToString(tokens)
	}
	return r.withAddedEncoders(tokens)
}

// detokenizeIncrementally is the non-first-iteration path (prev_tokens is
// never None in vLLM's derender).
func (r detokRef) detokenizeIncrementally(allInputIDs []int, prevTokens []string, prefixOffset, readOffset int) ([]string, string, int, int) {
	newTokenID := allInputIDs[len(allInputIDs)-1]
	var newTokens []string
	if 0 <= newTokenID && newTokenID < r.v.Len() {
		newTokens = r.convertIDsToTokens([]int{newTokenID}, r.skip)
	} else {
		newTokens = []string{""}
	}
	outputTokens := append(append([]string{}, prevTokens...), newTokens...)
	prefixText := []rune(r.tokensToString(outputTokens[prefixOffset:readOffset]))
	newText := []rune(r.tokensToString(outputTokens[prefixOffset:]))
	if len(newText) <= len(prefixText) || strings.HasSuffix(string(newText), "\uFFFD") {
		return newTokens, "", prefixOffset, readOffset
	}
	return newTokens, string(newText[len(prefixText):]), readOffset, len(outputTokens)
}

func (r detokRef) seedStreamState(promptIDs []int) DetokState {
	if len(promptIDs) == 0 {
		return DetokState{PrevTokens: []string{}}
	}
	toks, p, rd := r.convertPromptIDsToTokens(promptIDs)
	return DetokState{PrevTokens: toks, PrefixOffset: p, ReadOffset: rd}
}

// detokenizeDelta is _detokenize_delta: one call per token, the window
// trimmed and rebased after each. It also returns the per-token texts.
func (r detokRef) detokenizeDelta(delta []int, st DetokState) ([]string, DetokState) {
	prev := append([]string{}, st.PrevTokens...)
	p, rd := st.PrefixOffset, st.ReadOffset
	var texts []string
	for _, id := range delta {
		newToks, text, np, nr := r.detokenizeIncrementally([]int{id}, prev, p, rd)
		prev = append(append([]string{}, prev...), newToks...)[np:]
		rd = nr - np
		p = 0
		texts = append(texts, text)
	}
	return texts, DetokState{PrevTokens: prev, PrefixOffset: p, ReadOffset: rd}
}

// detokenizeUntrimmed drives detokenize_incrementally over the whole history
// without ever trimming, as vLLM's engine-side callers do; trimming must not
// change a single step's text.
func (r detokRef) detokenizeUntrimmed(delta []int, st DetokState) []string {
	prev := append([]string{}, st.PrevTokens...)
	p, rd := st.PrefixOffset, st.ReadOffset
	var texts []string
	for _, id := range delta {
		newToks, text, np, nr := r.detokenizeIncrementally([]int{id}, prev, p, rd)
		prev = append(prev, newToks...)
		p, rd = np, nr
		texts = append(texts, text)
	}
	return texts
}

// detokNodeScript is the same transcription in JavaScript, run against the
// official Hugging Face `tokenizers` binding (the Rust core Python's
// tokenizers uses): convert_tokens_to_string is the Rust decoder
// (getDecoder().decode), convert_ids_to_tokens is id_to_token and
// len(tokenizer) is get_vocab_size(with_added_tokens=True), as in
// transformers v5. JavaScript string length counts UTF-16 units, so code
// points are counted with Array.from, as Python's len does.
const detokNodeScript = `
const {Tokenizer} = require(process.argv[1] + "/tokenizers");
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const tok = Tokenizer.fromFile(input.tokenizer);
const decoder = tok.getDecoder();
const vocabLen = tok.getVocabSize(true);
const special = new Set(input.special_ids);
const cps = (s) => Array.from(s);
const toString = (tokens) => decoder ? decoder.decode(tokens) : tokens.join(" ");
function convertIds(ids, skip) {
  const out = [];
  for (const id of ids) {
    if (skip && special.has(id)) continue;
    const t = tok.idToToken(id);
    out.push(t === null || t === undefined ? "" : t);
  }
  return out;
}
function detok(id, prev, prefix, read, skip) {
  let newTokens = (0 <= id && id < vocabLen) ? convertIds([id], skip) : [""];
  const output = prev.concat(newTokens);
  const prefixText = cps(toString(output.slice(prefix, read)));
  const newText = cps(toString(output.slice(prefix)));
  if (newText.length <= prefixText.length || newText[newText.length - 1] === "\uFFFD") {
    return [newTokens, "", prefix, read];
  }
  return [newTokens, newText.slice(prefixText.length).join(""), read, output.length];
}
const results = [];
for (const c of input.cases) {
  let prev = [], prefix = 0, read = 0;
  if (c.prompt && c.prompt.length > 0) {
    prev = convertIds(c.prompt.slice(Math.max(c.prompt.length - 7, 0)), c.skip);
    read = prev.length;
    prefix = Math.max(read - 5, 0);
  }
  const texts = [];
  for (const id of (c.ids || [])) {
    const [newTokens, text, p, r] = detok(id, prev, prefix, read, c.skip);
    prev = prev.concat(newTokens).slice(p);
    read = r - p;
    prefix = 0;
    texts.push(text);
  }
  results.push({texts, state: {prev_tokens: prev, prefix_offset: prefix, read_offset: read}});
}
process.stdout.write(JSON.stringify({vocab_len: vocabLen, results}));
`

type detokNodeCase struct {
	Prompt []int `json:"prompt"`
	IDs    []int `json:"ids"`
	Skip   bool  `json:"skip"`
}

type detokNodeResult struct {
	Texts []string   `json:"texts"`
	State DetokState `json:"state"`
}

// runDetokNodeReference runs vLLM's algorithm over cases with the reference
// Rust tokenizer and returns its per-step texts and final states.
func runDetokNodeReference(t *testing.T, modelDir string, specialIDs []int, cases []detokNodeCase) (int, []detokNodeResult) {
	t.Helper()
	node := testenv.Node(t)
	modules := testenv.RefNodeModules(t)
	in, err := json.Marshal(map[string]any{
		"tokenizer":   filepath.Join(modelDir, "tokenizer.json"),
		"special_ids": specialIDs,
		"cases":       cases,
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "-e", detokNodeScript, modules)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference detokenizer (node): %v\n%s", err, stderr.String())
	}
	var res struct {
		VocabLen int               `json:"vocab_len"`
		Results  []detokNodeResult `json:"results"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("reference detokenizer output: %v", err)
	}
	if len(res.Results) != len(cases) {
		t.Fatalf("reference returned %d results for %d cases", len(res.Results), len(cases))
	}
	return res.VocabLen, res.Results
}

// detokDescribe renders a stream for failure messages.
func detokDescribe(prompt, ids []int, opts DetokOptions) string {
	return fmt.Sprintf("prompt=%v ids=%v skip=%v", prompt, ids, opts.SkipSpecialTokens)
}
