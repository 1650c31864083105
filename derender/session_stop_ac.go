package derender

// stopAutomaton is an Aho-Corasick automaton over the bytes of the stop
// strings, so each new byte of output costs O(1) amortised whatever the
// number and length of the stops. Byte matching equals rune matching on
// valid UTF-8. Nodes are stored as parallel int32 slices (first child,
// next sibling) because stops rarely share prefixes: a map or a 256-wide
// table per node would cost tens of bytes per stop byte.
type stopAutomaton struct {
	label []byte
	child []int32
	sib   []int32
	fail  []int32
	// out is the lowest index of a stop string ending at the node or at
	// any node on its fail chain (-1 for none): vLLM checks stops in list
	// order, so only the lowest index that matches can win.
	out  []int32
	root [256]int32
	// dense gives the nodes with many children (the shallow ones every
	// byte of output visits) a 256-entry row in rows; -1 elsewhere.
	dense []int32
	rows  []int32
	// empty is the lowest index of an empty stop string, -1 for none.
	empty int32
}

func newStopAutomaton(stops []string) *stopAutomaton {
	n := 1
	for _, s := range stops {
		n += len(s)
	}
	a := &stopAutomaton{label: make([]byte, 1, n), child: make([]int32, 1, n), sib: make([]int32, 1, n),
		fail: make([]int32, 1, n), out: make([]int32, 1, n), empty: -1}
	a.out[0] = -1
	for i, s := range stops {
		if s == "" {
			if a.empty < 0 {
				a.empty = int32(i)
			}
			continue
		}
		var u int32
		for j := 0; j < len(s); j++ {
			v := a.childOf(u, s[j])
			if v == 0 {
				v = int32(len(a.label))
				a.label = append(a.label, s[j])
				a.child = append(a.child, 0)
				a.sib = append(a.sib, a.child[u])
				a.fail = append(a.fail, 0)
				a.out = append(a.out, -1)
				a.child[u] = v
				if u == 0 {
					a.root[s[j]] = v
				}
			}
			u = v
		}
		if a.out[u] < 0 {
			a.out[u] = int32(i)
		}
	}
	// Breadth first, so a node's fail target is final before the node.
	queue := make([]int32, 0, len(a.label))
	for c := a.child[0]; c != 0; c = a.sib[c] {
		queue = append(queue, c)
	}
	a.denseRows(queue)
	for h := 0; h < len(queue); h++ {
		u := queue[h]
		for v := a.child[u]; v != 0; v = a.sib[v] {
			f := a.next(a.fail[u], a.label[v])
			a.fail[v] = f
			if o := a.out[f]; o >= 0 && (a.out[v] < 0 || o < a.out[v]) {
				a.out[v] = o
			}
			queue = append(queue, v)
		}
	}
	return a
}

// Dense rows: nodes with at least denseChildren children get one, the
// shallowest first, at most maxDenseRows (1 KiB each).
const (
	denseChildren = 4
	maxDenseRows  = 4096
)

// denseRows gives rows to the nodes with many children, in breadth-first
// order from the root's children (queue).
func (a *stopAutomaton) denseRows(queue []int32) {
	a.dense = make([]int32, len(a.label))
	for i := range a.dense {
		a.dense[i] = -1
	}
	q := append([]int32(nil), queue...)
	for h := 0; h < len(q) && len(a.rows) < maxDenseRows*256; h++ {
		u, n := q[h], 0
		for c := a.child[u]; c != 0; c = a.sib[c] {
			n++
			q = append(q, c)
		}
		if n < denseChildren {
			continue
		}
		a.dense[u] = int32(len(a.rows) / 256)
		row := make([]int32, 256)
		for c := a.child[u]; c != 0; c = a.sib[c] {
			row[a.label[c]] = c
		}
		a.rows = append(a.rows, row...)
	}
}

func (a *stopAutomaton) childOf(u int32, b byte) int32 {
	if u == 0 {
		return a.root[b]
	}
	if a.dense != nil {
		if d := a.dense[u]; d >= 0 {
			return a.rows[int(d)*256+int(b)]
		}
	}
	for c := a.child[u]; c != 0; c = a.sib[c] {
		if a.label[c] == b {
			return c
		}
	}
	return 0
}

// next is the state after reading b in state u.
func (a *stopAutomaton) next(u int32, b byte) int32 {
	for u != 0 {
		if v := a.childOf(u, b); v != 0 {
			return v
		}
		u = a.fail[u]
	}
	return a.root[b]
}
