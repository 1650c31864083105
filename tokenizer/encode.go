package tokenizer

// encodeScratch holds the reusable buffers of one Encode call.
type encodeScratch struct {
	bpe      bpeScratch
	pairs    []int
	segs     []splitSeg
	rawSegs  []segment
	normSegs []segment
	levels   [][]piece // pre-tokenizer output per chain depth
	matches  [][]int   // Split match offsets per chain depth
	misses   []segMiss // segments the segment cache did not have
	// collect, when set, receives the pre-tokenized pieces instead of the
	// model: tests compare them with the reference's pre_tokenize_str.
	collect func(piece)
}

// segMiss is a segment the cache missed: its hash and its ids' span of the
// output.
type segMiss struct {
	seg segment
	h   uint64
	ids [2]int
}

// encode appends the ids of text before post-processing: added tokens are
// cut out of the raw text, the rest is normalized, cut around normalized
// added tokens, pre-tokenized and given to the model, as HF's
// encode_single_sequence does.
func (t *Tokenizer) encode(text string, ids []int, sc *encodeScratch) []int {
	sc.rawSegs = t.added.findAdded(t.added.raw, text, sc.rawSegs[:0])
	cache := t.segCache.Load()
	sc.misses = sc.misses[:0]
	hitBytes, missBytes := 0, 0
	for _, seg := range sc.rawSegs {
		if seg.id >= 0 {
			ids = append(ids, int(seg.id))
			continue
		}
		part := text[seg.start:seg.end]
		if cache == nil || len(part) < minCachedSegment {
			ids = t.encodeSegment(part, seg.start == 0, ids, sc)
			continue
		}
		key := segKey{text: part, first: t.segFirstKey && seg.start == 0}
		h := cache.hash(key)
		var hit bool
		if ids, hit = cache.get(key, h, ids); hit {
			hitBytes += len(part)
			continue
		}
		n := len(ids)
		ids = t.encodeSegment(part, seg.start == 0, ids, sc)
		sc.misses = append(sc.misses, segMiss{seg: seg, h: h, ids: [2]int{n, len(ids)}})
		missBytes += len(part)
	}
	// A text mostly found in the cache continues an earlier one (an agent's
	// next turn holds the last turn's messages), and its new segments are
	// likely to come back with the next turn: they are stored at once. Other
	// texts' segments (a shared system prompt or tool list is not enough)
	// wait for the admission filter to see them a second time, so that cold
	// traffic pays no copies.
	admit := hitBytes > missBytes
	for _, m := range sc.misses {
		key := segKey{text: text[m.seg.start:m.seg.end], first: t.segFirstKey && m.seg.start == 0}
		cache.put(key, m.h, ids[m.ids[0]:m.ids[1]], admit)
	}
	return ids
}

// encodeSegment appends the ids of part, a span of the raw text between two
// non-normalized added tokens; origin says it starts at offset 0.
func (t *Tokenizer) encodeSegment(part string, origin bool, ids []int, sc *encodeScratch) []int {
	if part == "" {
		return ids
	}
	if t.normalizer != nil {
		if part = t.normalizer.normalize(part); part == "" {
			return ids
		}
	}
	if t.added.norm == nil {
		return t.preTokenize(0, piece{s: part, origin: origin}, ids, sc)
	}
	sc.normSegs = t.added.findAdded(t.added.norm, part, sc.normSegs[:0])
	for _, ns := range sc.normSegs {
		if ns.id >= 0 {
			ids = append(ids, int(ns.id))
			continue
		}
		if sub := part[ns.start:ns.end]; sub != "" {
			ids = t.preTokenize(0, piece{s: sub, origin: origin && ns.start == 0}, ids, sc)
		}
	}
	return ids
}

// preTokenize runs pre-tokenizer level on p, depth first, and tokenizes the
// resulting pieces with the model. Depth first gives the same pieces in the
// same order as HF's breadth-first passes, without materialising them all.
func (t *Tokenizer) preTokenize(level int, p piece, ids []int, sc *encodeScratch) []int {
	for ; level < len(t.preTokenizers); level++ {
		if p.byteLevel {
			// A pre-tokenizer after ByteLevel sees the mapped text.
			p.s, p.byteLevel = byteLevelEncode(p.s), false
		}
		switch pt := t.preTokenizers[level].(type) {
		case *byteLevelPreTok:
			if !pt.addPrefixSpace && pt.re == nil {
				// The common last step: only the deferred mapping.
				p.byteLevel = true
				continue
			}
		case *splitPreTok:
			if pt.behavior == splitIsolated && !pt.invert {
				return t.splitIsolated(level, pt.m, p, ids, sc)
			}
		}
		return t.preTokenizeGeneric(level, p, ids, sc)
	}
	if sc.collect != nil {
		sc.collect(p)
		return ids
	}
	return t.model.tokenize(p.s, p.byteLevel, ids, &sc.bpe)
}

// splitMatches is how many matches splitIsolated takes from its matcher
// at a time: a whole text's offsets cost 16 bytes per piece, for a text of
// digits 16 bytes per byte, and their growth as much again.
const splitMatches = 4096

// splitIsolated is a Split with the Isolated behaviour: every match and
// every gap between matches goes on to the next level.
func (t *Tokenizer) splitIsolated(level int, m matcher, p piece, ids []int, sc *encodeScratch) []int {
	for len(sc.matches) <= level {
		sc.matches = append(sc.matches, nil)
	}
	prev := 0
	sub := func(start, end int) piece {
		return piece{s: p.s[start:end], byteLevel: p.byteLevel, origin: p.origin && start == 0}
	}
	for from := 0; from < len(p.s); {
		var pairs []int
		pairs, from = m.findFrom(p.s, from, splitMatches, sc.matches[level][:0])
		sc.matches[level] = pairs
		for i := 0; i+1 < len(pairs); i += 2 {
			ms, me := pairs[i], pairs[i+1]
			if prev < ms {
				ids = t.preTokenize(level+1, sub(prev, ms), ids, sc)
			}
			if ms < me {
				ids = t.preTokenize(level+1, sub(ms, me), ids, sc)
			}
			prev = me
		}
		if len(pairs) == 0 {
			break
		}
	}
	if prev < len(p.s) {
		ids = t.preTokenize(level+1, sub(prev, len(p.s)), ids, sc)
	}
	return ids
}

// preTokenizeGeneric runs any pre-tokenizer through its split method.
func (t *Tokenizer) preTokenizeGeneric(level int, p piece, ids []int, sc *encodeScratch) []int {
	for len(sc.levels) <= level {
		sc.levels = append(sc.levels, nil)
	}
	pieces := t.preTokenizers[level].split(p, sc.levels[level][:0], sc)
	sc.levels[level] = pieces
	for _, q := range pieces {
		if q.s != "" {
			ids = t.preTokenize(level+1, q, ids, sc)
		}
	}
	return ids
}
