package tokenizer

import (
	"math"
	"strings"
	"unicode/utf8"
)

// decodeTable holds what Decode needs per id, computed once at load so that
// decoding the usual decoder chains is a loop over precomputed strings.
type decodeTable struct {
	tokens strList // token string by id (added vocabulary first)
	known  []bool  // id has a token
	skip   []bool  // dropped by Decode(skip_special_tokens=true)
	mode   decodeMode

	// decodeByteLevel: the decoded bytes of every id in one arena; id's
	// bytes end at ends[id] and start where id-1's end.
	bytes string
	ends  []uint32
	// step holds, per id, what the detokenizer's fast step must know
	// without a map lookup or a UTF-8 scan, in one 8-byte entry so a step
	// touches one cache line of the table.
	step []stepEntry

	// decodeFused: the tokens after the leading per-token decoders
	// (Replace, Strip), and the byte of each "<0xXX>" token when the chain
	// has ByteFallback (-1 for other tokens).
	fused   strList
	byteVal []int16
}

type decodeMode uint8

const (
	decodeGeneric   decodeMode = iota // run the decoder chain
	decodeByteLevel                   // the chain is exactly ByteLevel
	decodeFused                       // per-token steps, then ByteFallback and/or Fuse
)

func newDecodeTable(t *Tokenizer) decodeTable {
	n := t.Len()
	d := decodeTable{known: make([]bool, n), skip: make([]bool, n)}
	var tokens strListBuilder
	for id := 0; id < n; id++ {
		tok, ok := t.IDToToken(id)
		tokens.add(tok)
		if !ok {
			continue
		}
		d.known[id] = true
		// HF checks the token string, not the id, against the special tokens.
		d.skip[id] = t.added.special[tok]
	}
	d.tokens = tokens.list()
	chain := flattenDecoders(t.decoder)
	if len(chain) == 1 {
		if _, ok := chain[0].(byteLevelDecoder); ok {
			d.initByteLevel()
			for id := range d.step {
				if t.IsSpecial(id) {
					d.step[id].flags |= stepSpecial
				}
			}
			return d
		}
	}
	if perToken, byteFallback, ok := fusedShape(chain); ok {
		d.initFused(perToken, byteFallback)
	}
	return d
}

func flattenDecoders(d decoder) []decoder {
	if seq, ok := d.(decoderSeq); ok {
		var out []decoder
		for _, x := range seq {
			out = append(out, flattenDecoders(x)...)
		}
		return out
	}
	if d == nil {
		return nil
	}
	return []decoder{d}
}

// fusedShape recognises chains of per-token decoders followed by an
// optional ByteFallback and optional Fuses: the result is then the
// concatenation of per-id strings with byte runs decoded in between.
func fusedShape(chain []decoder) (perToken []decoder, byteFallback, ok bool) {
	if len(chain) == 0 {
		return nil, false, false
	}
	i := 0
	for ; i < len(chain); i++ {
		switch chain[i].(type) {
		case replaceDecoder, stripDecoder:
			perToken = append(perToken, chain[i])
			continue
		}
		break
	}
	if i < len(chain) {
		if _, isBF := chain[i].(byteFallbackDecoder); isBF {
			byteFallback = true
			i++
		}
	}
	for ; i < len(chain); i++ {
		if _, isFuse := chain[i].(fuseDecoder); !isFuse {
			return nil, false, false
		}
	}
	return perToken, byteFallback, true
}

func (d *decodeTable) initByteLevel() {
	d.mode = decodeByteLevel
	var arena []byte
	d.ends = make([]uint32, d.tokens.len())
	for id := range d.tokens.len() {
		if d.known[id] {
			arena = byteLevelDecode(arena, d.tokens.at(id))
		}
		d.ends[id] = uint32(len(arena))
	}
	d.bytes = string(arena)
	d.step = make([]stepEntry, d.tokens.len())
	for id := range d.tokens.len() {
		start := uint32(0)
		if id > 0 {
			start = d.ends[id-1]
		}
		piece := d.bytes[start:d.ends[id]]
		e := &d.step[id]
		e.start = start
		if d.known[id] && piece != "" && len(piece) <= math.MaxUint16 &&
			!strings.HasSuffix(piece, detokHoldBackSuffix) && utf8.ValidString(piece) {
			e.n, e.flags = uint16(len(piece)), stepFast
		}
	}
}

// stepEntry is where id's decoded bytes lie in the arena (start, n; n is
// set only with stepFast) and its step flags.
type stepEntry struct {
	start uint32
	n     uint16
	flags uint8
}

// Flags of decodeTable.step.
const (
	// stepFast: the id has a token whose decoded bytes are non-empty,
	// complete UTF-8 and do not end in U+FFFD.
	stepFast uint8 = 1 << iota
	// stepSpecial: Tokenizer.IsSpecial(id).
	stepSpecial
)

func (d *decodeTable) initFused(perToken []decoder, byteFallback bool) {
	d.mode = decodeFused
	d.byteVal = make([]int16, d.tokens.len())
	var fused strListBuilder
	for id := range d.tokens.len() {
		d.byteVal[id] = -1
		if !d.known[id] {
			fused.add("")
			continue
		}
		tok := d.tokens.at(id)
		for _, p := range perToken {
			tok = decodeOne(p, tok)
		}
		fused.add(tok)
		if b, ok := parseByteToken(tok); ok && byteFallback {
			d.byteVal[id] = int16(b)
		}
	}
	d.fused = fused.list()
}

// decodeOne applies a per-token decoder to one token.
func decodeOne(p decoder, tok string) string {
	if r, ok := p.(replaceDecoder); ok {
		return replaceMatches(r.pattern, tok, r.content)
	}
	return p.decodeChain([]string{tok})[0]
}

func (d *decodeTable) decode(t *Tokenizer, ids []int, skipSpecial bool) string {
	switch d.mode {
	case decodeByteLevel:
		buf := make([]byte, 0, len(ids)*6)
		for _, id := range ids {
			if d.dropped(id, skipSpecial) {
				continue
			}
			start := uint32(0)
			if id > 0 {
				start = d.ends[id-1]
			}
			buf = append(buf, d.bytes[start:d.ends[id]]...)
		}
		return lossyString(buf)
	case decodeFused:
		return d.decodeFused(ids, skipSpecial)
	}
	tokens := make([]string, 0, len(ids))
	for _, id := range ids {
		if !d.dropped(id, skipSpecial) {
			tokens = append(tokens, d.tokens.at(id))
		}
	}
	if t.decoder == nil {
		return strings.Join(tokens, " ")
	}
	return strings.Join(t.decoder.decodeChain(tokens), "")
}

func (d *decodeTable) dropped(id int, skipSpecial bool) bool {
	return id < 0 || id >= len(d.known) || !d.known[id] || (skipSpecial && d.skip[id])
}

// decodeFused is ByteFallback then Fuse over precomputed token strings: a
// run of byte tokens becomes its text when valid UTF-8, else one U+FFFD per
// byte.
func (d *decodeTable) decodeFused(ids []int, skipSpecial bool) string {
	buf := make([]byte, 0, len(ids)*4)
	run := -1 // start in buf of the pending run of bytes
	flush := func() {
		if run < 0 {
			return
		}
		if bs := buf[run:]; !utf8.Valid(bs) {
			n := len(bs)
			buf = buf[:run]
			for range n {
				buf = append(buf, "\uFFFD"...)
			}
		}
		run = -1
	}
	for _, id := range ids {
		if d.dropped(id, skipSpecial) {
			continue
		}
		if b := d.byteVal[id]; b >= 0 {
			if run < 0 {
				run = len(buf)
			}
			buf = append(buf, byte(b))
			continue
		}
		flush()
		buf = append(buf, d.fused.at(id)...)
	}
	flush()
	return string(buf)
}
