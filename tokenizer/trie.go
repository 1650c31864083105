package tokenizer

import (
	"sort"
	"strings"
)

// tokenTrie finds added tokens in text with leftmost-longest semantics, the
// match kind HF builds its Aho-Corasick automaton with. A byte trie walked
// from each candidate start is enough: added tokens are short, and the root
// table rejects most start bytes at once.
type tokenTrie struct {
	root  [256]int32 // child of the root per byte, -1 if none
	nodes []trieNode
	edges []trieEdge
	// firsts are the bytes tokens start with, when there are at most
	// maxFirsts of them (every test tokenizer's raw added tokens start with
	// '<' but gemma3's five): a scanner then finds candidates with
	// IndexByte's vector search instead of a table lookup per byte.
	firsts []byte
}

// maxFirsts bounds the first bytes a trieScan searches for one by one.
const maxFirsts = 6

type trieNode struct {
	first, count int32 // edges[first:first+count], sorted by byte
	value        int32 // token id ending here, -1 if none
}

type trieEdge struct {
	b     byte
	child int32
}

type triePattern struct {
	text string
	id   int32
}

// newTokenTrie builds the trie; with duplicate texts the last one wins.
func newTokenTrie(pats []triePattern) *tokenTrie {
	if len(pats) == 0 {
		return nil
	}
	// Build with maps, then flatten into sorted edge lists.
	type bnode struct {
		kids  map[byte]int32
		value int32
	}
	b := []bnode{{kids: map[byte]int32{}, value: -1}}
	for _, p := range pats {
		n := int32(0)
		for i := 0; i < len(p.text); i++ {
			c, ok := b[n].kids[p.text[i]]
			if !ok {
				c = int32(len(b))
				b = append(b, bnode{kids: map[byte]int32{}, value: -1})
				b[n].kids[p.text[i]] = c
			}
			n = c
		}
		b[n].value = p.id
	}
	t := &tokenTrie{nodes: make([]trieNode, len(b))}
	for i := range t.root {
		t.root[i] = -1
	}
	for i, n := range b {
		keys := make([]int, 0, len(n.kids))
		for k := range n.kids {
			keys = append(keys, int(k))
		}
		sort.Ints(keys)
		t.nodes[i] = trieNode{first: int32(len(t.edges)), count: int32(len(keys)), value: n.value}
		for _, k := range keys {
			t.edges = append(t.edges, trieEdge{b: byte(k), child: n.kids[byte(k)]})
			if i == 0 {
				t.root[k] = n.kids[byte(k)]
			}
		}
	}
	if len(b[0].kids) <= maxFirsts {
		for k := range 256 {
			if t.root[k] >= 0 {
				t.firsts = append(t.firsts, byte(k))
			}
		}
	}
	return t
}

func (t *tokenTrie) child(n int32, c byte) int32 {
	nd := &t.nodes[n]
	es := t.edges[nd.first : nd.first+nd.count]
	if len(es) <= 8 {
		for _, e := range es {
			if e.b == c {
				return e.child
			}
		}
		return -1
	}
	lo, hi := 0, len(es)
	for lo < hi {
		m := (lo + hi) / 2
		if es[m].b < c {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(es) && es[lo].b == c {
		return es[lo].child
	}
	return -1
}

// longestAt returns the end and id of the longest token starting at s[i:],
// or end -1.
func (t *tokenTrie) longestAt(s string, i int) (end int, id int32) {
	end = -1
	n := t.root[s[i]]
	for j := i + 1; n >= 0; j++ {
		if v := t.nodes[n].value; v >= 0 {
			end, id = j, v
		}
		if j >= len(s) {
			break
		}
		n = t.child(n, s[j])
	}
	return end, id
}

// trieScan finds a trie's matches in one text, left to right: it remembers
// where each first byte next occurs, so that every byte of the text is
// searched once per first byte whatever the number of matches.
type trieScan struct {
	t   *tokenTrie
	s   string
	pos [maxFirsts]int // next offset of t.firsts[k] at or after the last search; -1: not searched yet
}

func (t *tokenTrie) scan(s string) trieScan {
	sc := trieScan{t: t, s: s}
	for k := range sc.pos {
		sc.pos[k] = -1
	}
	return sc
}

// next returns the leftmost-longest match starting at or after from, as
// tokenTrie.next does; from never decreases between calls.
func (sc *trieScan) next(from int) (start, end int, id int32) {
	t := sc.t
	if t.firsts == nil {
		return t.next(sc.s, from)
	}
	for from < len(sc.s) {
		i := len(sc.s)
		for k, b := range t.firsts {
			p := sc.pos[k]
			if p < from {
				if j := strings.IndexByte(sc.s[from:], b); j >= 0 {
					p = from + j
				} else {
					p = len(sc.s)
				}
				sc.pos[k] = p
			}
			i = min(i, p)
		}
		if i == len(sc.s) {
			break
		}
		if e, v := t.longestAt(sc.s, i); e >= 0 {
			return i, e, v
		}
		from = i + 1
	}
	return -1, -1, -1
}

// next returns the leftmost-longest match starting at or after from.
func (t *tokenTrie) next(s string, from int) (start, end int, id int32) {
	for i := from; i < len(s); i++ {
		if t.root[s[i]] < 0 {
			continue
		}
		if e, v := t.longestAt(s, i); e >= 0 {
			return i, e, v
		}
	}
	return -1, -1, -1
}
