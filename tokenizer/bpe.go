package tokenizer

import (
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/vrender/vrender/internal/wire"
)

// bpeModel is HF's BPE model without dropout. Token ids are int32 to halve
// the size of the symbol buffers and merge keys.
type bpeModel struct {
	vocab        *vocab
	merges       *mergeTable
	unkID        int32 // -1: no unknown token, unknown chars are dropped
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool
	prefix       string // continuing_subword_prefix; "" when null
	suffix       string // end_of_word_suffix; "" when null

	fallbackIDs [256]int32 // ids of "<0xXX>" tokens, -1 when absent
	// charIDs holds the ids of single-character tokens for the fast path
	// taken when there is no prefix or suffix.
	asciiIDs [utf8.RuneSelf]int32
	charIDs  map[rune]int32
	// byteIDs[b] is the id of the byte-level token for byte b, -1 if absent.
	byteIDs [256]int32
	// rawVocab maps the raw bytes of byte-level tokens to their ids, so that
	// whole words can be looked up (ignore_merges) without mapping them.
	rawVocab *strIndex

	// boundaryRune, when not -1, is a rune before which a word may be cut
	// without changing the result: see computeBoundary.
	boundaryRune   rune
	boundaryUnsafe map[rune]bool

	cacheText  *wordCache // words given as text
	cacheBytes *wordCache // byte-level words given as raw bytes
}

type bpeConfig struct {
	unkToken       *string
	fuseUnk        bool
	byteFallback   bool
	ignoreMerges   bool
	prefix, suffix string
}

// newBPE builds the model around a vocabulary and its merges.
func newBPE(cfg bpeConfig, v *vocab, merges *mergeTable) *bpeModel {
	m := &bpeModel{
		vocab:        v,
		merges:       merges,
		unkID:        -1,
		fuseUnk:      cfg.fuseUnk,
		byteFallback: cfg.byteFallback,
		ignoreMerges: cfg.ignoreMerges,
		prefix:       cfg.prefix,
		suffix:       cfg.suffix,
		boundaryRune: -1,
		cacheText:    newWordCache(),
		cacheBytes:   newWordCache(),
	}
	if cfg.unkToken != nil {
		if id, ok := m.vocab.id(*cfg.unkToken); ok {
			m.unkID = id
		} else {
			// HF accepts this file and fails only when an unknown character
			// shows up; dropping such characters is the closest total behaviour.
			slog.Warn("tokenizer: BPE unk_token is not in the vocabulary", "unk_token", *cfg.unkToken)
		}
	}
	for b := 0; b < 256; b++ {
		m.fallbackIDs[b] = m.lookup(fmt.Sprintf("<0x%02X>", b))
		m.byteIDs[b] = m.lookup(byteLevelUTF8[b])
	}
	for r := rune(0); r < utf8.RuneSelf; r++ {
		m.asciiIDs[r] = m.lookup(string(r))
	}
	if m.prefix == "" && m.suffix == "" {
		m.charIDs = make(map[rune]int32)
		for tok, id := range m.vocab.ids.all {
			if r, n := utf8.DecodeRuneInString(tok); n == len(tok) && r >= utf8.RuneSelf && r != utf8.RuneError {
				m.charIDs[r] = id
			}
		}
	}
	return m
}

// resolveMerges turns merge token pairs into a merge table, checking that
// both tokens and their concatenation are in the vocabulary as HF does.
func resolveMerges(r *wire.Reader, v *vocab, prefix string) (*mergeTable, error) {
	merges := make([]mergeEntry, 0, v.ids.len()*2)
	var joined []byte
	err := readMerges(r, func(rank int, left, right string) error {
		a, ok := v.id(left)
		if !ok {
			return fmt.Errorf("merge %d: token %q is not in the vocabulary", rank, left)
		}
		b, ok := v.id(right)
		if !ok {
			return fmt.Errorf("merge %d: token %q is not in the vocabulary", rank, right)
		}
		// The merged token drops the right side's continuing_subword_prefix.
		tail := right
		if len(prefix) > 0 && len(tail) >= len(prefix) {
			tail = tail[len(prefix):]
		}
		joined = append(append(joined[:0], left...), tail...)
		merged, ok := v.id(string(joined))
		if !ok {
			return fmt.Errorf("merge %d: merged token %q is not in the vocabulary", rank, joined)
		}
		merges = append(merges, mergeEntry{key: pairKey(a, b), val: uint64(rank)<<32 | uint64(uint32(merged))})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return newMergeTable(merges), nil
}

// setPreTokenization adapts the model to what feeds it: byte-level words
// get a raw-bytes vocabulary for whole-word lookups, other words may be cut
// for speed (computeBoundary).
func (m *bpeModel) setPreTokenization(byteLevel bool) {
	if byteLevel && m.ignoreMerges {
		// Keys share one arena, like the vocabulary's.
		var arena []byte
		var ends []uint32
		var ids []int32
		for id := range m.vocab.tokens {
			if tok, ok := m.vocab.token(id); ok && byteLevelDecodable(tok) {
				arena = byteLevelDecode(arena, tok)
				ends = append(ends, uint32(len(arena)))
				ids = append(ids, int32(id))
			}
		}
		m.rawVocab = newStrIndex(strList{arena: string(arena), ends: ends}, ids)
	}
	if !byteLevel && !m.ignoreMerges && m.prefix == "" && m.suffix == "" {
		m.computeBoundary('▁')
	}
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

func (m *bpeModel) lookup(tok string) int32 {
	if id, ok := m.vocab.id(tok); ok {
		return id
	}
	return -1
}

// computeBoundary enables cutting long words before rune r. SentencePiece
// style models see a whole run of text as one word; BPE over it is correct
// but slow and uncacheable. A cut between runes p and r cannot change the
// result when no vocabulary token contains "pr": no merge can ever produce a
// symbol spanning the cut, so both sides merge independently. p must itself
// be a token so that unknown-character handling does not span the cut either.
func (m *bpeModel) computeBoundary(r rune) {
	if _, ok := m.vocab.id(string(r)); !ok {
		return
	}
	blocked := map[rune]bool{r: true}
	rs := string(r)
	for tok := range m.vocab.ids.all {
		for i := strings.Index(tok, rs); i >= 0; {
			if prev, n := utf8.DecodeLastRuneInString(tok[:i]); n > 0 {
				blocked[prev] = true
			}
			j := strings.Index(tok[i+len(rs):], rs)
			if j < 0 {
				break
			}
			i += len(rs) + j
		}
	}
	m.boundaryRune = r
	m.boundaryUnsafe = blocked
}

// tokenize appends the ids of one pre-tokenized word. When byteLevel is
// set, word holds raw bytes that stand for their byte-level runes.
func (m *bpeModel) tokenize(word string, byteLevel bool, dst []int, sc *bpeScratch) []int {
	if len(word) == 0 {
		return dst
	}
	if byteLevel && (m.prefix != "" || m.suffix != "") {
		// Rare: prefixes are looked up as strings, so work on the mapped text.
		word, byteLevel = byteLevelEncode(word), false
	}
	cache := m.cacheText
	if byteLevel {
		cache = m.cacheBytes
	}
	// The small cache goes first even for ignore_merges, whose whole-word
	// lookup in the large vocabulary map is a cache miss more often than not.
	if out, ok := cache.get(word, dst); ok {
		return out
	}
	if m.ignoreMerges {
		var id int32
		var ok bool
		if byteLevel {
			id, ok = m.rawVocab.get(word)
		} else {
			id, ok = m.vocab.id(word)
		}
		if ok {
			sc.syms = append(sc.syms[:0], id)
			cache.put(word, sc.syms)
			return append(dst, int(id))
		}
	}
	if !byteLevel && m.boundaryRune >= 0 && len(word) > 1 {
		return m.tokenizeCut(word, dst, sc)
	}
	return m.mergeWord(word, byteLevel, cache, dst, sc)
}

// tokenizeCut splits word at safe boundaries (see computeBoundary) and
// tokenizes each part.
func (m *bpeModel) tokenizeCut(word string, dst []int, sc *bpeScratch) []int {
	part := func(s string) {
		if out, ok := m.cacheText.get(s, dst); ok {
			dst = out
			return
		}
		dst = m.mergeWord(s, false, m.cacheText, dst, sc)
	}
	start := 0
	prev := rune(-1)
	for i, c := range word {
		if c == m.boundaryRune && i > start && m.cutAfter(prev) {
			part(word[start:i])
			start = i
		}
		prev = c
	}
	part(word[start:])
	return dst
}

// cutAfter reports whether a word may be cut between p and the boundary rune.
func (m *bpeModel) cutAfter(p rune) bool {
	if m.boundaryUnsafe[p] {
		return false
	}
	if p < utf8.RuneSelf {
		return m.asciiIDs[p] >= 0
	}
	_, known := m.charIDs[p]
	return known
}

// mergeWord runs BPE over word and remembers the result in cache.
func (m *bpeModel) mergeWord(word string, byteLevel bool, cache *wordCache, dst []int, sc *bpeScratch) []int {
	var syms []int32
	if byteLevel {
		syms = m.byteSymbols(word, sc.syms[:0])
	} else {
		syms = m.charSymbols(word, sc.syms[:0])
	}
	syms = m.merge(syms, sc)
	sc.syms = syms
	cache.put(word, syms)
	for _, id := range syms {
		dst = append(dst, int(id))
	}
	return dst
}

// byteSymbols builds the initial symbols of a byte-level word.
func (m *bpeModel) byteSymbols(word string, syms []int32) []int32 {
	for i := 0; i < len(word); i++ {
		if id := m.byteIDs[word[i]]; id >= 0 {
			syms = append(syms, id)
			continue
		}
		// The byte's rune is not a token: take the general path for the
		// whole word so unknown handling matches HF exactly.
		return m.charSymbols(byteLevelEncode(word), syms[:0])
	}
	return syms
}

// charSymbols builds the initial symbols of a word, one per character, with
// HF's byte fallback and unknown-token rules.
func (m *bpeModel) charSymbols(word string, syms []int32) []int32 {
	pendingUnk := false
	fast := m.prefix == "" && m.suffix == ""
	for i, c := range word {
		size := utf8.RuneLen(c)
		if c == utf8.RuneError {
			_, size = utf8.DecodeRuneInString(word[i:])
		}
		ch := word[i : i+size]
		var id int32 = -1
		if fast {
			if c < utf8.RuneSelf {
				id = m.asciiIDs[c]
			} else if v, ok := m.charIDs[c]; ok && c != utf8.RuneError {
				id = v
			} else if c == utf8.RuneError {
				id = m.lookup(ch)
			}
		} else {
			s := ch
			if i > 0 {
				s = m.prefix + s
			}
			if i+size == len(word) {
				s += m.suffix
			}
			id = m.lookup(s)
			ch = s
		}
		if id >= 0 {
			if pendingUnk {
				syms = append(syms, m.unkID)
				pendingUnk = false
			}
			syms = append(syms, id)
			continue
		}
		if m.byteFallback && m.allBytesKnown(ch) {
			// HF adds the byte tokens without flushing a pending unknown
			// token first; keep that order.
			for j := 0; j < len(ch); j++ {
				syms = append(syms, m.fallbackIDs[ch[j]])
			}
			continue
		}
		if m.unkID < 0 {
			continue
		}
		if pendingUnk && !m.fuseUnk {
			syms = append(syms, m.unkID)
		}
		pendingUnk = true
	}
	if pendingUnk {
		syms = append(syms, m.unkID)
	}
	return syms
}

func (m *bpeModel) allBytesKnown(s string) bool {
	for j := 0; j < len(s); j++ {
		if m.fallbackIDs[s[j]] < 0 {
			return false
		}
	}
	return true
}
