package parsers

import (
	"errors"
	"fmt"

	"github.com/vrender/vrender/internal/statecodec"
)

// The pythonic call list holds a tree of *pyNode that its stack frames
// and keyword values point into; coding the pointers as values would copy
// shared nodes apart. So the list is saved explicitly: every reachable
// node once, in a table, and every pointer as an index into it (-1 nil).

type pyNodeWire struct {
	kind    pyNodeKind
	canon   string
	isConst bool
	keyID   string
	items   []int
	keys    []string
	index   map[string]int
}

type pyFrameWire struct {
	node, key int
	state     uint8
}

type pyCallListWire struct {
	state  pyState
	name   []string
	stack  []pyFrameWire
	str    []pyTok // zero or one element: the pending string literal
	kws    []string
	kwVals []int
	kw     int
	pend   string
	depth  int
	prev   uint8
	calls  int
	failed bool
	nodes  []pyNodeWire
}

// codec saves and restores the call list through its wire form.
func (p *pyCallList) codec(c *statecodec.Codec) {
	if !c.Decoding() {
		w := p.wire()
		w.codec(c)
		return
	}
	var w pyCallListWire
	if w.codec(c); c.Failed() {
		return
	}
	if err := p.fromWire(&w); err != nil {
		c.Failf("%v", err)
	}
}

// wire is the list with its node pointers as table indices.
func (p *pyCallList) wire() pyCallListWire {
	w := pyCallListWire{state: p.state, name: p.name, kws: p.kws, kw: p.kw, pend: p.pend,
		depth: p.depth, prev: p.prev, calls: p.calls, failed: p.failed}
	ids := map[*pyNode]int{}
	var ref func(n *pyNode) int
	ref = func(n *pyNode) int {
		if n == nil {
			return -1
		}
		if id, ok := ids[n]; ok {
			return id
		}
		id := len(w.nodes)
		ids[n] = id
		w.nodes = append(w.nodes, pyNodeWire{kind: n.kind, canon: n.canon, isConst: n.isConst, keyID: n.keyID,
			keys: n.keys, index: n.index})
		items := make([]int, len(n.items))
		for i, c := range n.items {
			items[i] = ref(c)
		}
		w.nodes[id].items = items
		return id
	}
	for _, f := range p.stack {
		w.stack = append(w.stack, pyFrameWire{node: ref(f.node), key: ref(f.key), state: f.state})
	}
	for _, v := range p.kwVals {
		w.kwVals = append(w.kwVals, ref(v))
	}
	if p.str != nil {
		w.str = []pyTok{*p.str}
	}
	return w
}

// fromWire rebuilds the list from its wire form. It rejects indices
// outside the node table, and an item that is not numbered after its
// parent (wire numbers a tree in preorder), so a hostile table cannot
// make a cycle for the machine to walk forever.
func (p *pyCallList) fromWire(w *pyCallListWire) error {
	nodes := make([]*pyNode, len(w.nodes))
	for i, n := range w.nodes {
		nodes[i] = &pyNode{kind: n.kind, canon: n.canon, isConst: n.isConst, keyID: n.keyID, keys: n.keys, index: n.index}
	}
	var bad error
	at := func(id, after int) *pyNode {
		if id == -1 {
			return nil
		}
		if id <= after || id >= len(nodes) {
			bad = fmt.Errorf("pythonic call list: node %d out of range", id)
			return nil
		}
		return nodes[id]
	}
	for i, n := range w.nodes {
		if len(n.items) > 0 {
			nodes[i].items = make([]*pyNode, len(n.items))
			for j, c := range n.items {
				nodes[i].items[j] = at(c, i)
			}
		}
	}
	if len(w.str) > 1 {
		return errors.New("pythonic call list: more than one pending string")
	}
	*p = pyCallList{state: w.state, name: w.name, kws: w.kws, kw: w.kw, pend: w.pend,
		depth: w.depth, prev: w.prev, calls: w.calls, failed: w.failed}
	for _, f := range w.stack {
		p.stack = append(p.stack, pyFrame{node: at(f.node, -1), key: at(f.key, -1), state: f.state})
	}
	for _, v := range w.kwVals {
		p.kwVals = append(p.kwVals, at(v, -1))
	}
	if len(w.str) > 0 {
		s := w.str[0]
		p.str = &s
	}
	return bad
}

// codec saves and restores the state of a pyCallListWire.
func (p *pyCallListWire) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &p.state, 13)
	statecodec.Strings(c, &p.name)
	statecodec.Slice(c, &p.stack, func(c *statecodec.Codec, v *pyFrameWire) { v.codec(c) })
	statecodec.Slice(c, &p.str, func(c *statecodec.Codec, v *pyTok) { v.codec(c) })
	statecodec.Strings(c, &p.kws)
	statecodec.Slice(c, &p.kwVals, (*statecodec.Codec).Int)
	c.Int(&p.kw)
	c.String(&p.pend)
	c.Int(&p.depth)
	c.Byte(&p.prev)
	c.Int(&p.calls)
	c.Bool(&p.failed)
	statecodec.Slice(c, &p.nodes, func(c *statecodec.Codec, v *pyNodeWire) { v.codec(c) })
}

// codec saves and restores the state of a pyFrameWire.
func (p *pyFrameWire) codec(c *statecodec.Codec) {
	c.Int(&p.node)
	c.Int(&p.key)
	c.Byte(&p.state)
}

// codec saves and restores the state of a pyNodeWire.
func (p *pyNodeWire) codec(c *statecodec.Codec) {
	statecodec.Enum(c, &p.kind, 3)
	c.String(&p.canon)
	c.Bool(&p.isConst)
	c.String(&p.keyID)
	statecodec.Slice(c, &p.items, (*statecodec.Codec).Int)
	statecodec.Strings(c, &p.keys)
	statecodec.Map(c, &p.index, (*statecodec.Codec).String, (*statecodec.Codec).Int)
}
