package tokenizer_test

// Parity against the reference: the official Hugging Face Node binding
// (tokenizers@0.23.2, the Rust core of Python tokenizers 0.23), driven
// through tools/reftok/reftok.js. For each test model the corpus of
// corpus_test.go is encoded by both with add_special_tokens false and true,
// the reference's ids are decoded by both with skip_special_tokens false and
// true, and random id sequences (specials, lone byte tokens that form invalid
// UTF-8, out-of-range ids) are decoded by both. Any difference fails.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vrender/vrender/internal/testenv"
	"github.com/vrender/vrender/tokenizer"
)

// parityModels are the five test models under .cache/models.
var parityModels = []string{"qwen3", "llama3_1", "deepseek_v3", "gptoss", "gemma3"}

// maxReported is how many mismatches of one kind are printed in full.
const maxReported = 5

// randomDecodeSequences is how many random id sequences are decoded per model.
const randomDecodeSequences = 500

func TestParity(t *testing.T) {
	for _, name := range parityModels {
		t.Run(name, func(t *testing.T) { testModelParity(t, name) })
	}
}

func testModelParity(t *testing.T, name string) {
	dir := testenv.ModelDir(t, name)
	ref := startRefTokenizer(t)

	// Load both sides at once: gemma3's tokenizer.json is 33 MB and each
	// side takes seconds on it.
	refLoaded := make(chan error, 1)
	var vocabSize int
	go func() {
		var info struct {
			VocabSize int `json:"vocab_size"`
		}
		err := ref.call(map[string]any{"model": dir, "op": "info"}, &info)
		vocabSize = info.VocabSize
		refLoaded <- err
	}()
	tok := loadedModels.get(t, name)
	if err := <-refLoaded; err != nil {
		t.Fatalf("reference load of %s: %v", dir, err)
	}

	added := tok.AddedTokens()
	cases := parityCorpus(seedFor(name), added)
	texts := make([]string, len(cases))
	for i, c := range cases {
		texts[i] = c.Text
	}

	refIDs := map[bool][][]int{}
	for _, addSpecial := range []bool{false, true} {
		want := ref.encodeBatch(t, texts, addSpecial)
		refIDs[addSpecial] = want
		log := newMismatchLog(fmt.Sprintf("encode(add_special_tokens=%v)", addSpecial))
		for i, c := range cases {
			got, panicMsg := safeEncode(tok, c.Text, addSpecial)
			log.total++
			if panicMsg != "" || !slices.Equal(got, want[i]) {
				log.add(c.Category, func() string { return describeEncodeMismatch(ref, i, c, got, want[i], panicMsg) })
			}
		}
		log.report(t)
	}

	for _, skip := range []bool{false, true} {
		want := ref.decodeBatch(t, refIDs[true], skip)
		log := newMismatchLog(fmt.Sprintf("decode(corpus ids, skip_special_tokens=%v)", skip))
		for i, c := range cases {
			compareDecode(log, tok, c.Category, fmt.Sprintf("case %d [%s]", i, c.Category), refIDs[true][i], skip, want[i])
		}
		log.report(t)
	}

	seqs := randomIDSequences(t, rand.New(rand.NewPCG(seedFor(name), 2)), ref, tok, vocabSize)
	for _, skip := range []bool{false, true} {
		want := ref.decodeBatch(t, seqs, skip)
		log := newMismatchLog(fmt.Sprintf("decode(random ids, skip_special_tokens=%v)", skip))
		for i, ids := range seqs {
			compareDecode(log, tok, "random-ids", fmt.Sprintf("random sequence %d", i), ids, skip, want[i])
		}
		log.report(t)
	}
	checkIDToToken(t, ref, tok, seqs)

	// The fuzz test's round-trip invariant must hold for the reference
	// itself, or it states the model's behaviour wrongly.
	decoded := ref.decodeBatch(t, refIDs[false], false)
	log := newMismatchLog("reference round trip vs roundTripWant (fuzz invariant)")
	for i, c := range cases {
		log.total++
		if want := roundTripWant(name, added, c.Text); decoded[i] != want {
			pos := testenv.FirstDiff([]byte(decoded[i]), []byte(want))
			log.add(c.Category, func() string {
				return fmt.Sprintf("case %d [%s] text %s\n  reference decode: %s\n  invariant:        %s",
					i, c.Category, trimForReport(c.Text, pos), trimForReport(decoded[i], pos), trimForReport(want, pos))
			})
		}
	}
	log.report(t)
}

// seedFor gives each model its own fixed corpus seed.
func seedFor(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// compareDecode decodes ids with vrender and logs a difference from want.
func compareDecode(log *mismatchLog, tok *tokenizer.Tokenizer, category, label string, ids []int, skip bool, want string) {
	log.total++
	got, panicMsg := safeDecode(tok, ids, skip)
	if panicMsg == "" && got == want {
		return
	}
	log.add(category, func() string {
		if panicMsg != "" {
			return fmt.Sprintf("%s ids %v: vrender panicked: %s", label, clipIDs(ids, 0), panicMsg)
		}
		pos := testenv.FirstDiff([]byte(got), []byte(want))
		return fmt.Sprintf("%s ids %v\n  first difference at byte %d\n  vrender:   %s\n  reference: %s",
			label, clipIDs(ids, 0), pos, trimForReport(got, pos), trimForReport(want, pos))
	})
}

// checkIDToToken compares id_to_token for every id the random sequences use.
func checkIDToToken(t *testing.T, ref *refTokenizer, tok *tokenizer.Tokenizer, seqs [][]int) {
	seen := map[int]bool{}
	var ids []int
	for _, s := range seqs {
		for _, id := range s {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	var resp struct {
		Tokens []*string `json:"tokens"`
	}
	if err := ref.call(map[string]any{"op": "id_to_token", "ids": ids}, &resp); err != nil {
		t.Fatalf("reference id_to_token: %v", err)
	}
	log := newMismatchLog("IDToToken(random ids)")
	for i, id := range ids {
		log.total++
		got, ok, panicMsg := safeIDToToken(tok, id)
		want := resp.Tokens[i]
		if panicMsg == "" && ok == (want != nil) && (want == nil || got == *want) {
			continue
		}
		log.add("id_to_token", func() string {
			w := "none"
			if want != nil {
				w = fmt.Sprintf("%q", *want)
			}
			return fmt.Sprintf("id %d: vrender %q ok=%v %s, reference %s", id, got, ok, panicMsg, w)
		})
	}
	log.report(t)
}

// randomIDSequences builds id sequences that decoding must survive: random
// vocabulary ids, added and special tokens, single-byte tokens that spell
// valid and broken UTF-8, and ids past the end of the vocabulary.
func randomIDSequences(t *testing.T, rng *rand.Rand, ref *refTokenizer, tok *tokenizer.Tokenizer, vocabSize int) [][]int {
	byteIDs := byteTokenIDs(t, ref)
	var added []int
	for _, a := range tok.AddedTokens() {
		added = append(added, a.ID)
	}
	outOfRange := []int{vocabSize, vocabSize + 1, vocabSize + 1000, 1<<31 - 1, 1<<32 - 1}
	byteID := func(b byte) (int, bool) { id := byteIDs[b]; return id, id >= 0 }
	anyID := func() int {
		switch k := rng.IntN(20); {
		case k < 9:
			return rng.IntN(vocabSize)
		case k < 12:
			return rng.IntN(min(vocabSize, 1000)) // punctuation, bytes, short pieces
		case k < 15 && len(added) > 0:
			return added[rng.IntN(len(added))]
		case k < 19:
			if id, ok := byteID(byte(rng.IntN(256))); ok {
				return id
			}
			return rng.IntN(vocabSize)
		default:
			return outOfRange[rng.IntN(len(outOfRange))]
		}
	}
	var seqs [][]int
	for i := 0; i < randomDecodeSequences; i++ {
		var seq []int
		switch i % 4 {
		case 0: // anything
			for n := rng.IntN(48) + 1; n > 0; n-- {
				seq = append(seq, anyID())
			}
		case 1: // multi-byte characters spelled as byte tokens, some cut short or reordered
			for n := rng.IntN(6) + 1; n > 0; n-- {
				bs := []byte(string(rune(0x80 + rng.IntN(0x1f000))))
				switch rng.IntN(4) {
				case 0:
					bs = bs[:rng.IntN(len(bs))]
				case 1:
					rng.Shuffle(len(bs), func(a, b int) { bs[a], bs[b] = bs[b], bs[a] })
				}
				for _, b := range bs {
					if id, ok := byteID(b); ok {
						seq = append(seq, id)
					}
				}
				if rng.IntN(3) == 0 {
					seq = append(seq, anyID())
				}
			}
		case 2: // raw high bytes: lone continuation and lead bytes
			for n := rng.IntN(12) + 1; n > 0; n-- {
				if id, ok := byteID(byte(0x80 + rng.IntN(0x80))); ok {
					seq = append(seq, id)
				}
			}
		case 3: // special and added tokens around text, at both ends
			for n := rng.IntN(10) + 1; n > 0; n-- {
				if len(added) > 0 && rng.IntN(2) == 0 {
					seq = append(seq, added[rng.IntN(len(added))])
				} else {
					seq = append(seq, rng.IntN(vocabSize))
				}
			}
		}
		if len(seq) == 0 {
			seq = append(seq, outOfRange[rng.IntN(len(outOfRange))])
		}
		seqs = append(seqs, seq)
	}
	seqs = append(seqs, []int{}, outOfRange)
	return seqs
}

// byteTokenIDs asks the reference for the token of each single byte: a
// byte-fallback token "<0xXX>" if the model has them, else the byte-level
// BPE character (GPT-2's bytes_to_unicode). -1 means no such token.
func byteTokenIDs(t *testing.T, ref *refTokenizer) [256]int {
	var fallback, byteLevel []string
	for b := 0; b < 256; b++ {
		fallback = append(fallback, fmt.Sprintf("<0x%02X>", b))
		byteLevel = append(byteLevel, string(byteLevelRune(byte(b))))
	}
	lookup := func(tokens []string) []*int {
		var resp struct {
			IDs []*int `json:"ids"`
		}
		if err := ref.call(map[string]any{"op": "token_to_id", "tokens": tokens}, &resp); err != nil {
			t.Fatalf("reference token_to_id: %v", err)
		}
		return resp.IDs
	}
	fb, bl := lookup(fallback), lookup(byteLevel)
	var out [256]int
	useFallback := slices.IndexFunc(fb, func(p *int) bool { return p == nil }) < 0
	for b := range out {
		out[b] = -1
		if useFallback {
			out[b] = *fb[b]
		} else if bl[b] != nil {
			out[b] = *bl[b]
		}
	}
	return out
}

// byteLevelRune is GPT-2's printable stand-in for byte b: printable
// Latin-1 bytes stand for themselves, the others are mapped to U+0100 on.
func byteLevelRune(b byte) rune {
	printable := func(c int) bool {
		return (c >= '!' && c <= '~') || (c >= 0xa1 && c <= 0xac) || (c >= 0xae && c <= 0xff)
	}
	if printable(int(b)) {
		return rune(b)
	}
	n := 0
	for c := 0; c < int(b); c++ {
		if !printable(c) {
			n++
		}
	}
	return rune(256 + n)
}

// describeEncodeMismatch explains an encode difference: the case, where the
// ids first differ (as token index and approximate text offset) and the
// tokens around it on both sides.
func describeEncodeMismatch(ref *refTokenizer, i int, c corpusCase, got, want []int, panicMsg string) string {
	if panicMsg != "" {
		return fmt.Sprintf("case %d [%s] text %s: vrender panicked: %s", i, c.Category, trimForReport(c.Text, 0), panicMsg)
	}
	k := 0
	for k < len(got) && k < len(want) && got[k] == want[k] {
		k++
	}
	// The text offset is the length of the reference's decoding of the
	// common prefix; exact for byte-level models, close for the others.
	var prefix struct {
		Text string `json:"text"`
	}
	pos := 0
	if err := ref.call(map[string]any{"op": "decode", "ids": want[:k], "skip_special_tokens": false}, &prefix); err == nil {
		pos = min(len(prefix.Text), len(c.Text))
	}
	return fmt.Sprintf("case %d [%s] text (%d bytes) %s\n  first difference at token %d (text byte ≈ %d)\n  vrender   (%d ids): %s\n  reference (%d ids): %s",
		i, c.Category, len(c.Text), trimForReport(c.Text, pos), k, pos,
		len(got), tokensAround(ref, got, k), len(want), tokensAround(ref, want, k))
}

// tokensAround renders ids[k-2:k+3] with their token strings.
func tokensAround(ref *refTokenizer, ids []int, k int) string {
	lo, hi := max(k-2, 0), min(k+3, len(ids))
	window := ids[lo:hi]
	var resp struct {
		Tokens []*string `json:"tokens"`
	}
	_ = ref.call(map[string]any{"op": "id_to_token", "ids": window}, &resp)
	var sb strings.Builder
	if lo > 0 {
		sb.WriteString("… ")
	}
	for j, id := range window {
		tokStr := "?"
		if j < len(resp.Tokens) && resp.Tokens[j] != nil {
			tokStr = fmt.Sprintf("%q", *resp.Tokens[j])
		}
		if lo+j == k {
			sb.WriteString(">>")
		}
		fmt.Fprintf(&sb, "%d:%s ", id, tokStr)
	}
	if hi < len(ids) {
		sb.WriteString("…")
	}
	return sb.String()
}

// clipIDs prints at most 24 ids around index k.
func clipIDs(ids []int, k int) string {
	lo, hi := max(k-4, 0), min(k+20, len(ids))
	s := fmt.Sprint(ids[lo:hi])
	if lo > 0 {
		s = "…" + s
	}
	if hi < len(ids) {
		s += fmt.Sprintf("… (%d ids)", len(ids))
	}
	return s
}

// mismatchLog counts the cases of one check and the mismatches by category,
// keeping the first few descriptions.
type mismatchLog struct {
	what        string
	total       int
	count       int
	perCategory map[string]int
	first       []string
}

func newMismatchLog(what string) *mismatchLog {
	return &mismatchLog{what: what, perCategory: map[string]int{}}
}

// add records a mismatch; describe is called only for the first few, since
// describing may query the reference.
func (m *mismatchLog) add(category string, describe func() string) {
	m.count++
	m.perCategory[category]++
	if len(m.first) < maxReported {
		m.first = append(m.first, describe())
	}
}

func (m *mismatchLog) report(t *testing.T) {
	t.Helper()
	if m.count == 0 {
		t.Logf("%s: %d cases, 0 mismatches", m.what, m.total)
		return
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %d cases, %d MISMATCHES (by category %v); first %d:", m.what, m.total, m.count, m.perCategory, len(m.first))
	for _, d := range m.first {
		sb.WriteString("\n- ")
		sb.WriteString(d)
	}
	t.Error(sb.String())
}

// The safe* wrappers turn a panic of the implementation under test into a
// reported mismatch, so one bad input does not hide all the other results.

func safeEncode(tok *tokenizer.Tokenizer, text string, addSpecial bool) (ids []int, panicMsg string) {
	defer func() {
		if r := recover(); r != nil {
			panicMsg = fmt.Sprint(r)
		}
	}()
	return tok.Encode(text, addSpecial), ""
}

func safeDecode(tok *tokenizer.Tokenizer, ids []int, skip bool) (text, panicMsg string) {
	defer func() {
		if r := recover(); r != nil {
			panicMsg = fmt.Sprint(r)
		}
	}()
	return tok.Decode(ids, skip), ""
}

func safeIDToToken(tok *tokenizer.Tokenizer, id int) (token string, ok bool, panicMsg string) {
	defer func() {
		if r := recover(); r != nil {
			panicMsg = fmt.Sprint(r)
		}
	}()
	token, ok = tok.IDToToken(id)
	return token, ok, ""
}

// modelSet loads each test model once per test binary; the parity and fuzz
// tests share it so gemma3's 33 MB file is parsed once.
type modelSet struct {
	mu     sync.Mutex
	loaded map[string]func() modelLoad
}

type modelLoad struct {
	tok  *tokenizer.Tokenizer
	took time.Duration
	err  error
}

var loadedModels = &modelSet{loaded: map[string]func() modelLoad{}}

func (m *modelSet) get(t testing.TB, name string) *tokenizer.Tokenizer {
	t.Helper()
	path := filepath.Join(testenv.ModelDir(t, name), "tokenizer.json")
	m.mu.Lock()
	load, ok := m.loaded[name]
	if !ok {
		load = sync.OnceValue(func() (res modelLoad) {
			defer func() {
				if r := recover(); r != nil {
					res.err = fmt.Errorf("panic: %v", r)
				}
			}()
			start := time.Now()
			tok, err := tokenizer.Load(path)
			return modelLoad{tok: tok, took: time.Since(start), err: err}
		})
		m.loaded[name] = load
	}
	m.mu.Unlock()
	res := load()
	if res.err != nil {
		t.Fatalf("vrender tokenizer.Load(%s): %v", path, res.err)
	}
	if !ok { // report the load time with the first use only
		t.Logf("vrender loaded %s in %v", name, res.took.Round(time.Millisecond))
	}
	return res.tok
}

// refTokenizer is a running tools/reftok/reftok.js process.
type refTokenizer struct {
	mu     sync.Mutex
	stdin  io.WriteCloser
	stdout *bufio.Reader
}

// startRefTokenizer starts reftok.js; the process ends with the test.
func startRefTokenizer(t *testing.T) *refTokenizer {
	t.Helper()
	node := testenv.Node(t)
	nodeModules := testenv.RefNodeModules(t)
	script := filepath.Join(testenv.RepoRoot(t), "tools", "reftok", "reftok.js")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	cmd := exec.CommandContext(ctx, node, script, "--node-modules", nodeModules)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start reference tokenizer: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close() // reftok exits at end of input
		if err := cmd.Wait(); err != nil {
			t.Errorf("reference tokenizer exited: %v\n%s", err, stderr.String())
		}
		cancel()
	})
	return &refTokenizer{stdin: stdin, stdout: bufio.NewReaderSize(stdout, 1<<20)}
}

// call sends one request and decodes its answer into resp.
func (r *refTokenizer) call(req map[string]any, resp any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	line, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("marshal request: %w", err)
	}
	if _, err := r.stdin.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("write request: %w", err)
	}
	answer, err := r.stdout.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(answer, &e); err != nil {
		return fmt.Errorf("decode answer: %w", err)
	}
	if e.Error != "" {
		return fmt.Errorf("reference: %s", e.Error)
	}
	return json.Unmarshal(answer, resp)
}

func (r *refTokenizer) encodeBatch(t *testing.T, texts []string, addSpecial bool) [][]int {
	t.Helper()
	var resp struct {
		IDs [][]int `json:"ids_batch"`
	}
	err := r.call(map[string]any{"op": "encode", "texts": texts, "add_special_tokens": addSpecial}, &resp)
	if err != nil || len(resp.IDs) != len(texts) {
		t.Fatalf("reference encode batch: %v (%d answers for %d texts)", err, len(resp.IDs), len(texts))
	}
	return resp.IDs
}

func (r *refTokenizer) decodeBatch(t *testing.T, ids [][]int, skip bool) []string {
	t.Helper()
	var resp struct {
		Texts []string `json:"texts"`
	}
	err := r.call(map[string]any{"op": "decode", "ids_batch": ids, "skip_special_tokens": skip}, &resp)
	if err != nil || len(resp.Texts) != len(ids) {
		t.Fatalf("reference decode batch: %v (%d answers for %d sequences)", err, len(resp.Texts), len(ids))
	}
	return resp.Texts
}
