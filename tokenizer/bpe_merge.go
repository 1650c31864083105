package tokenizer

import "math"

// bpeScratch holds the reusable buffers of one encode call.
type bpeScratch struct {
	syms  []int32
	ranks []uint32
	outs  []int32
	prev  []int32
	next  []int32
	heap  mergeHeap
}

// smallWord is the length up to which the quadratic scan beats the heap.
const smallWord = 48

const noRank = math.MaxUint32

// merge applies the merges to syms in HF's order: always the pair of lowest
// rank, the leftmost one among equals. HF implements this with a heap of
// candidate pairs; short words use an equivalent scan over cached ranks.
func (m *bpeModel) merge(syms []int32, sc *bpeScratch) []int32 {
	if len(syms) < 2 {
		return syms
	}
	if len(syms) <= smallWord {
		return m.mergeSmall(syms, sc)
	}
	return m.mergeHeap(syms, sc)
}

func (m *bpeModel) pairRank(a, b int32) (rank uint32, merged int32) {
	v, ok := m.merges.get(pairKey(a, b))
	if !ok {
		return noRank, -1
	}
	return uint32(v >> 32), int32(uint32(v))
}

func (m *bpeModel) mergeSmall(syms []int32, sc *bpeScratch) []int32 {
	n := len(syms)
	ranks := grow32u(sc.ranks, n)
	outs := grow32(sc.outs, n)
	sc.ranks, sc.outs = ranks, outs
	for i := 0; i+1 < n; i++ {
		ranks[i], outs[i] = m.pairRank(syms[i], syms[i+1])
	}
	for {
		best := uint32(noRank)
		at := -1
		for i := 0; i+1 < n; i++ {
			if ranks[i] < best {
				best, at = ranks[i], i
			}
		}
		if at < 0 {
			return syms[:n]
		}
		syms[at] = outs[at]
		copy(syms[at+1:n-1], syms[at+2:n])
		copy(ranks[at+1:n-1], ranks[at+2:n])
		copy(outs[at+1:n-1], outs[at+2:n])
		n--
		if at > 0 {
			ranks[at-1], outs[at-1] = m.pairRank(syms[at-1], syms[at])
		}
		if at+1 < n {
			ranks[at], outs[at] = m.pairRank(syms[at], syms[at+1])
		} else {
			ranks[at] = noRank
		}
	}
}

// mergeCandidate is a pair starting at symbol pos that merges into id.
type mergeCandidate struct {
	rank uint32
	pos  int32
	id   int32
}

func (a mergeCandidate) less(b mergeCandidate) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.pos < b.pos)
}

type mergeHeap []mergeCandidate

func (h *mergeHeap) push(c mergeCandidate) {
	*h = append(*h, c)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *mergeHeap) pop() mergeCandidate {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(s) {
			break
		}
		c := l
		if r := l + 1; r < len(s) && s[r].less(s[l]) {
			c = r
		}
		if !s[c].less(s[i]) {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return top
}

// mergeHeap is HF's Word::merge_all: a heap of candidate pairs over a
// doubly linked list of symbols; stale candidates are skipped when popped.
func (m *bpeModel) mergeHeap(syms []int32, sc *bpeScratch) []int32 {
	n := len(syms)
	prev := grow32(sc.prev, n)
	next := grow32(sc.next, n)
	sc.prev, sc.next = prev, next
	h := sc.heap[:0]
	for i := 0; i < n; i++ {
		prev[i] = int32(i - 1)
		next[i] = int32(i + 1)
		if i+1 < n {
			if r, id := m.pairRank(syms[i], syms[i+1]); r != noRank {
				h = append(h, mergeCandidate{rank: r, pos: int32(i), id: id})
			}
		}
	}
	next[n-1] = -1
	// Heapify the initial candidates in O(n).
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	const dead = -2
	for len(h) > 0 {
		top := h.pop()
		p := top.pos
		if prev[p] == dead {
			continue
		}
		q := next[p]
		if q < 0 {
			continue
		}
		if _, id := m.pairRank(syms[p], syms[q]); id != top.id {
			continue
		}
		syms[p] = top.id
		nq := next[q]
		next[p] = nq
		prev[q] = dead
		if nq >= 0 {
			prev[nq] = p
		}
		if pp := prev[p]; pp >= 0 {
			if r, id := m.pairRank(syms[pp], syms[p]); r != noRank {
				h.push(mergeCandidate{rank: r, pos: pp, id: id})
			}
		}
		if nq >= 0 {
			if r, id := m.pairRank(syms[p], syms[nq]); r != noRank {
				h.push(mergeCandidate{rank: r, pos: p, id: id})
			}
		}
	}
	sc.heap = h
	out := 0
	for i := int32(0); i >= 0; i = next[i] {
		syms[out] = syms[i]
		out++
	}
	return syms[:out]
}

func siftDown(s []mergeCandidate, i int) {
	for {
		l := 2*i + 1
		if l >= len(s) {
			return
		}
		c := l
		if r := l + 1; r < len(s) && s[r].less(s[l]) {
			c = r
		}
		if !s[c].less(s[i]) {
			return
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
}

func grow32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n, n*2)
	}
	return s[:n]
}

func grow32u(s []uint32, n int) []uint32 {
	if cap(s) < n {
		return make([]uint32, n, n*2)
	}
	return s[:n]
}
