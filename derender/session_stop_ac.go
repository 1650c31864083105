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
	// nodes[0] is the root; 0 as a child means none. labels[v] is the
	// byte on the edge into v (a separate array so child scans touch
	// contiguous bytes).
	nodes  []acNode
	labels []byte
	// rows are 256-entry child tables of the root and of nodes with at
	// least denseKids children. A trie with n leaves has at most
	// (n-1)/(denseKids-1) such nodes, so they cost at most ~550 KiB
	// with 8,192 stops.
	rows []int32
	// empty is the lowest index of an empty stop string, -1 for none.
	empty int32
	// chain is scratch for completing fail chains.
	chain []int32
	// memo caches transitions from non-root states with the out of
	// their target, direct-mapped: a stream revisits few states, and a
	// hit costs one load instead of a walk of child lists and fail
	// links.
	memo *[memoSize]acMemo
}

// acMemo is one cached transition; key is state<<8|byte (never 0: the
// root's transitions are not cached).
type acMemo struct {
	key     uint32
	to, out int32
}

const (
	memoBits = 11
	memoSize = 1 << memoBits
)

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
}

// denseKids is the child count from which a node gets a 256-entry row
// instead of a linear scan.
const denseKids = 16

func newStopAutomaton(stops []string) *stopAutomaton {
	a := &stopAutomaton{empty: -1, memo: new([memoSize]acMemo)}
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
	a.strs, a.idx = make([]string, 0, len(ord)), make([]int32, 0, len(ord))
	for _, k := range ord {
		if n := len(a.strs); n > 0 && a.strs[n-1] == stops[k.i] {
			continue
		}
		a.strs, a.idx = append(a.strs, stops[k.i]), append(a.idx, k.i)
	}
	a.nodes = append(a.nodes, acNode{hi: int32(len(a.strs)), out: -1, kids: -1, row: -1})
	a.labels = append(a.labels, 0)
	a.expand(0)
	if a.nodes[0].row < 0 {
		a.addRow(0) // rows[:256], read directly by stopText.push
	}
	for v := range a.nodes[1:] {
		a.nodes[1+v].fail = 0
	}
	return a
}

// expand materialises v's children: each is the run of v's stops with
// one byte at column depth, found by binary search.
func (a *stopAutomaton) expand(v int32) {
	n := a.nodes[v]
	k := int(n.depth)
	first := int32(len(a.nodes))
	i := n.lo
	if i < n.hi && len(a.strs[i]) == k {
		i++ // the stop ending at v sorts first
	}
	for i < n.hi {
		c := a.strs[i][k]
		// Past the node's own stop every string is longer than k, and
		// column k is non-decreasing.
		lo, hi := i+1, n.hi
		for lo < hi {
			m := int32(uint32(lo+hi) >> 1)
			if a.strs[m][k] > c {
				hi = m
			} else {
				lo = m + 1
			}
		}
		out := int32(-1)
		if len(a.strs[i]) == k+1 {
			out = a.idx[i]
		}
		a.nodes = append(a.nodes, acNode{lo: i, hi: lo, depth: int32(k + 1), fail: -1, out: out, kids: -1, row: -1})
		a.labels = append(a.labels, c)
		i = lo
	}
	a.nodes[v].kids, a.nodes[v].nkids = first, int32(len(a.nodes))-first
	if a.nodes[v].nkids >= denseKids {
		a.addRow(v)
	}
}

func (a *stopAutomaton) addRow(v int32) {
	n := &a.nodes[v]
	n.row = int32(len(a.rows) / 256)
	a.rows = slices.Grow(a.rows, 256)[:len(a.rows)+256]
	row := a.rows[len(a.rows)-256:]
	clear(row)
	for c := n.kids; c < n.kids+n.nkids; c++ {
		row[a.labels[c]] = c
	}
}

// child is v's child on byte b, 0 for none.
func (a *stopAutomaton) child(v int32, b byte) int32 {
	if a.nodes[v].kids < 0 {
		a.expand(v)
	}
	n := &a.nodes[v]
	if n.row >= 0 {
		return a.rows[int(n.row)*256+int(b)]
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

// fill computes a transition the memo lacks.
func (a *stopAutomaton) fill(m *acMemo, key uint32, s int32, b byte) {
	v := a.next(s, b)
	*m = acMemo{key: key, to: v, out: a.nodes[v].out}
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
