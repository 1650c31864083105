package derender

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
)

// stopAutomaton is an Aho-Corasick automaton over the bytes of the stop
// strings (byte matching equals rune matching on valid UTF-8), built
// lazily: a request may send 4 MiB of stops, and building every node and
// fail link up front costs a random memory access per stop byte (0.5 s
// and ~90 MB for 4,000 stops of 1,000 bytes) whatever the output.
//
// The trie is implicit in the sorted, deduplicated stops: a node is the
// range of stops sharing its string as a prefix, so setup is one sort.
// Nodes are materialised when the text reaches them: a node's children
// are enumerated (binary search on the next byte column) the first time
// a transition leaves it, and fail links are set only for the nodes on
// the fail chains of states the text enters. Work per request is bounded
// by what an eager build would do, and in practice is proportional to the
// output, not to the stops.
type stopAutomaton struct {
	// strs are the distinct non-empty stops in byte order; idx[i] is the
	// lowest request index of strs[i] (vLLM checks stops in list order,
	// so of equal stops only the first can win).
	strs []string
	idx  []int32
	// pre[i] is the first 8 bytes of strs[i], big-endian and zero-padded:
	// the trie's first levels are searched in this one array instead of
	// a cache miss into each stop.
	pre []uint64
	// nodes[0] is the root; 0 as a child means none. labels[v] is the
	// byte on the edge into v (a separate array so child scans touch
	// contiguous bytes).
	nodes  []acNode
	labels []byte
	// rows are 256-entry child tables: of wide nodes (over wideStops
	// stops; -1 marks a child not looked up yet), at most maxWideRows,
	// and of nodes with at least denseKids children (0: none). A trie
	// with n leaves has at most (n-1)/(denseKids-1) of the latter, so
	// rows cost at most ~800 KiB with 8,192 stops.
	rows     []int32
	wideRows int
	// empty is the lowest index of an empty stop string, -1 for none.
	empty int32
	// chain is scratch for completing fail chains.
	chain []int32
	// dfa holds the automaton's full transition rows (goto and fail
	// folded) of the states the text visits, filled lazily: entry b of
	// a state's row is the row of the state after b, or 0 when that is
	// not known yet, the state reached ends a stop (its out is set) or
	// has no row. A step of the text is then one load and a test; only
	// new transitions and matches walk the trie. Rows are numbered in a
	// byte, so all of them take 64 KiB at most and the few a text uses
	// stay in the L1 cache. Row 0 is all zeros, the row of every state
	// that has none; dfaNode[r] is the state of row r, and a state's row
	// is acNode.dfa.
	dfa     []uint8
	dfaNode []int32
}

// maxDFARows bounds the transition rows of one request (256 bytes each,
// row 0 included): a text touching more states goes through the trie for
// the rest.
const maxDFARows = 256

// acNode is a trie node: the prefix of length depth shared by
// strs[lo:hi] (only strs[lo] can end at the node).
type acNode struct {
	lo, hi, depth int32
	// fail is the node of the longest proper suffix that is in the
	// trie, -1 until set. A set fail link implies the whole chain below
	// it is set.
	fail int32
	// out is the lowest stop index ending at the node or, once fail is
	// set, anywhere on its fail chain; -1 for none.
	out int32
	// kids is the first child in nodes (children are contiguous, in byte
	// order), -1 until expanded; row is its index in rows or -1.
	kids, nkids, row int32
	// dfa is the node's transition row in stopAutomaton.dfa, 0 for
	// none.
	dfa uint8
}

// denseKids is the child count from which a node gets a 256-entry row
// instead of a linear scan.
const denseKids = 16

func newStopAutomaton(stops []string) *stopAutomaton {
	a := &stopAutomaton{empty: -1}
	// Sorting on the first 8 bytes (zero-padded; ties go to the whole
	// strings) keeps most comparisons in one array instead of a cache
	// miss into each of two stops.
	type sortKey struct {
		prefix uint64
		i      int32
	}
	ord := make([]sortKey, 0, len(stops))
	for i, s := range stops {
		if s == "" {
			if a.empty < 0 {
				a.empty = int32(i)
			}
			continue
		}
		var p [8]byte
		copy(p[:], s)
		ord = append(ord, sortKey{binary.BigEndian.Uint64(p[:]), int32(i)})
	}
	slices.SortFunc(ord, func(x, y sortKey) int {
		if x.prefix != y.prefix {
			return cmp.Compare(x.prefix, y.prefix)
		}
		if c := strings.Compare(stops[x.i], stops[y.i]); c != 0 {
			return c
		}
		return cmp.Compare(x.i, y.i)
	})
	a.strs, a.idx, a.pre = make([]string, 0, len(ord)), make([]int32, 0, len(ord)), make([]uint64, 0, len(ord))
	for _, k := range ord {
		if n := len(a.strs); n > 0 && a.strs[n-1] == stops[k.i] {
			continue
		}
		a.strs, a.idx, a.pre = append(a.strs, stops[k.i]), append(a.idx, k.i), append(a.pre, k.prefix)
	}
	// Room for the nodes a long output touches (a few hundred with
	// thousands of stops; a trie has no more nodes than stop bytes), so
	// that the first tokens do not pay for regrowing them.
	room := 1
	for _, s := range a.strs {
		if room += len(s); room >= 512 {
			room = 512
			break
		}
	}
	a.nodes = append(make([]acNode, 0, room), acNode{hi: int32(len(a.strs)), fail: 0, out: -1, kids: -1, row: -1})
	a.labels = append(make([]byte, 0, room), 0)
	// The root's transitions, computed now: every text starts there and
	// returns there after most bytes that leave the trie, so tokens need
	// not pay for finding them (256 binary searches, not proportional to
	// the stops).
	root := a.dfaRow(0)
	for b := range 256 {
		a.slowStep(0, root, byte(b))
	}
	return a
}

// dfaRow returns v's transition row, adding one if v has none and the
// bound allows; 0 (the empty row) otherwise.
func (a *stopAutomaton) dfaRow(v int32) uint8 {
	if r := a.nodes[v].dfa; r != 0 || len(a.dfaNode) >= maxDFARows {
		return r
	}
	if len(a.dfa) == 0 {
		// The empty row, and room for a few: new capacity is zeroed.
		a.dfa = make([]uint8, 256, 256*16)
		a.dfaNode = append(a.dfaNode, -1)
	}
	r := uint8(len(a.dfaNode))
	a.dfa = slices.Grow(a.dfa, 256)[:len(a.dfa)+256]
	a.nodes[v].dfa = r
	a.dfaNode = append(a.dfaNode, v)
	return r
}

// slowStep is a transition the rows do not answer: from state s (whose
// row is cur, 0 for none) on b. It returns the state reached, its row
// and its out, and records the transition in s's row when the state
// reached has a row and ends no stop (a state that ends one must come
// back here to be reported).
func (a *stopAutomaton) slowStep(s int32, cur uint8, b byte) (v int32, vcur uint8, out int32) {
	v = a.next(s, b)
	out = a.nodes[v].out
	vcur = a.dfaRow(v)
	if cur != 0 && vcur != 0 && out < 0 {
		a.dfa[int(cur)<<8|int(b)] = vcur
	}
	return v, vcur, out
}

// wideStops is the number of stops from which a node finds its children
// one at a time, on demand, instead of all at once: enumerating the ~150
// children of a node over 4,000 random stops costs a thousand cache
// misses, of which the text needs a few.
const wideStops = 32

// maxWideRows bounds the lazy child rows of one request; past it wide
// nodes are expanded whole.
const maxWideRows = 256

// expand materialises v's children: each is the run of v's stops with
// one byte at column depth, found by binary search. A wide node gets a
// child row instead, filled as the text asks (see child).
func (a *stopAutomaton) expand(v int32) {
	n := a.nodes[v]
	if n.hi-n.lo > wideStops && a.wideRows < maxWideRows {
		a.wideRows++
		a.nodes[v].kids = 0
		a.addRow(v, -1)
		return
	}
	k := int(n.depth)
	first := int32(len(a.nodes))
	i := a.firstLonger(v)
	for i < n.hi {
		c := a.col(i, k)
		lo := a.upper(i+1, n.hi, k, c)
		a.addNode(v, i, lo, c)
		i = lo
	}
	a.nodes[v].kids, a.nodes[v].nkids = first, int32(len(a.nodes))-first
	if a.nodes[v].nkids >= denseKids {
		a.addRow(v, 0)
		row := a.rows[int(a.nodes[v].row)*256:][:256]
		for c := first; c < int32(len(a.nodes)); c++ {
			row[a.labels[c]] = c
		}
	}
}

// firstLonger is the first of v's stops longer than v's string: the stop
// ending at v, if any, sorts first.
func (a *stopAutomaton) firstLonger(v int32) int32 {
	n := a.nodes[v]
	if n.lo < n.hi && len(a.strs[n.lo]) == int(n.depth) {
		return n.lo + 1
	}
	return n.lo
}

// col is byte k of strs[i], which is longer than k.
func (a *stopAutomaton) col(i int32, k int) byte {
	if k < 8 {
		return byte(a.pre[i] >> (56 - 8*k))
	}
	return a.strs[i][k]
}

// upper is the first index in [lo, hi) whose byte at column k is above
// c; strs[lo:hi] are longer than k, so column k is non-decreasing.
func (a *stopAutomaton) upper(lo, hi int32, k int, c byte) int32 {
	for lo < hi {
		m := int32(uint32(lo+hi) >> 1)
		if a.col(m, k) > c {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// addNode appends the child of v on byte c over strs[lo:hi].
func (a *stopAutomaton) addNode(v, lo, hi int32, c byte) int32 {
	k := a.nodes[v].depth
	out, fail := int32(-1), int32(-1)
	if len(a.strs[lo]) == int(k)+1 {
		out = a.idx[lo]
	}
	if v == 0 {
		fail = 0 // the root's children fail to the root
	}
	a.nodes = append(a.nodes, acNode{lo: lo, hi: hi, depth: k + 1, fail: fail, out: out, kids: -1, row: -1})
	a.labels = append(a.labels, c)
	return int32(len(a.nodes) - 1)
}

// findChild is a wide node's child on b, found by two binary searches
// (0 for none).
func (a *stopAutomaton) findChild(v int32, b byte) int32 {
	n := a.nodes[v]
	k := int(n.depth)
	i := a.firstLonger(v)
	lo, hi := i, n.hi
	for lo < hi { // the first index whose byte at column k is >= b
		m := int32(uint32(lo+hi) >> 1)
		if a.col(m, k) >= b {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo == n.hi || a.col(lo, k) != b {
		return 0
	}
	return a.addNode(v, lo, a.upper(lo+1, n.hi, k, b), b)
}

// addRow gives v a 256-entry child row, every entry fill.
func (a *stopAutomaton) addRow(v, fill int32) {
	a.nodes[v].row = int32(len(a.rows) / 256)
	a.rows = slices.Grow(a.rows, 256)[:len(a.rows)+256]
	row := a.rows[len(a.rows)-256:]
	for i := range row {
		row[i] = fill
	}
}

// child is v's child on byte b, 0 for none.
func (a *stopAutomaton) child(v int32, b byte) int32 {
	if a.nodes[v].kids < 0 {
		a.expand(v)
	}
	n := &a.nodes[v]
	if n.row >= 0 {
		r := int(n.row)*256 + int(b)
		if c := a.rows[r]; c >= 0 {
			return c
		}
		// A wide node's child not looked up yet.
		c := a.findChild(v, b)
		a.rows[r] = c
		return c
	}
	for c := n.kids; c < n.kids+n.nkids; c++ {
		if l := a.labels[c]; l >= b {
			if l == b {
				return c
			}
			break
		}
	}
	return 0
}

// next is the state after reading b in state s, whose fail chain is set;
// the state returned has its fail chain set too.
func (a *stopAutomaton) next(s int32, b byte) int32 {
	w := s
	var v int32
	for {
		if v = a.child(w, b); v != 0 {
			break
		}
		if w == 0 {
			return 0
		}
		w = a.nodes[w].fail
	}
	if a.nodes[v].fail < 0 {
		a.complete(v, w, b)
	}
	return v
}

// complete sets the fail links of v = child(w, b) and of the nodes below
// it that lack one: each is the next b-child down w's fail chain (which
// is set), as an eager build would compute it. out is then folded from
// the bottom up.
func (a *stopAutomaton) complete(v, w int32, b byte) {
	chain := a.chain[:0]
	for a.nodes[v].fail < 0 {
		chain = append(chain, v)
		var f int32
		for w != 0 {
			w = a.nodes[w].fail
			if f = a.child(w, b); f != 0 {
				break
			}
		}
		a.nodes[v].fail = f
		v = f
	}
	for i := len(chain) - 1; i >= 0; i-- {
		n := &a.nodes[chain[i]]
		if o := a.nodes[n.fail].out; o >= 0 && (n.out < 0 || o < n.out) {
			n.out = o
		}
	}
	a.chain = chain
}
