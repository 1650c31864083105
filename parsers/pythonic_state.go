package parsers

import (
	"fmt"
	"reflect"
)

// The pythonic call list holds a tree of *pyNode that its stack frames
// and keyword values point into; the generic codec would copy shared nodes
// apart. So the list is saved explicitly: every reachable
// node once, in a table, and every pointer as an index into it (-1 nil).

type pyNodeWire struct {
	Kind  pyNodeKind
	Canon string
	Const bool
	KeyID string
	Items []int
	Keys  []string
	Index map[string]int
}

type pyFrameWire struct {
	Node, Key int
	State     uint8
}

type pyCallListWire struct {
	State  pyState
	Name   []string
	Stack  []pyFrameWire
	Str    []pyTok // zero or one element: the pending string literal
	Kws    []string
	KwVals []int
	Kw     int
	Pend   string
	Depth  int
	Prev   uint8
	Calls  int
	Failed bool
	Nodes  []pyNodeWire
}

// MarshalBinary implements encoding.BinaryMarshaler for checkpoints.
func (p *pyCallList) MarshalBinary() ([]byte, error) {
	w := pyCallListWire{State: p.State, Name: p.Name, Kws: p.Kws, Kw: p.Kw, Pend: p.Pend,
		Depth: p.Depth, Prev: p.Prev, Calls: p.Calls, Failed: p.Failed}
	ids := map[*pyNode]int{}
	var ref func(n *pyNode) int
	ref = func(n *pyNode) int {
		if n == nil {
			return -1
		}
		if id, ok := ids[n]; ok {
			return id
		}
		id := len(w.Nodes)
		ids[n] = id
		w.Nodes = append(w.Nodes, pyNodeWire{Kind: n.Kind, Canon: n.Canon, Const: n.Const, KeyID: n.KeyID,
			Keys: n.Keys, Index: n.Index})
		items := make([]int, len(n.Items))
		for i, c := range n.Items {
			items[i] = ref(c)
		}
		w.Nodes[id].Items = items
		return id
	}
	for _, f := range p.Stack {
		w.Stack = append(w.Stack, pyFrameWire{Node: ref(f.Node), Key: ref(f.Key), State: f.State})
	}
	for _, v := range p.KwVals {
		w.KwVals = append(w.KwVals, ref(v))
	}
	if p.Str != nil {
		w.Str = []pyTok{*p.Str}
	}
	return appendState(nil, reflect.ValueOf(&w).Elem())
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler; it rejects
// indices outside the node table.
func (p *pyCallList) UnmarshalBinary(data []byte) error {
	var w pyCallListWire
	if err := decodeAll(data, reflect.ValueOf(&w).Elem()); err != nil {
		return fmt.Errorf("pythonic call list: %w", err)
	}
	nodes := make([]*pyNode, len(w.Nodes))
	for i, n := range w.Nodes {
		nodes[i] = &pyNode{Kind: n.Kind, Canon: n.Canon, Const: n.Const, KeyID: n.KeyID, Keys: n.Keys, Index: n.Index}
	}
	var bad error
	at := func(id int) *pyNode {
		if id == -1 {
			return nil
		}
		if id < 0 || id >= len(nodes) {
			bad = fmt.Errorf("pythonic call list: node %d out of range", id)
			return nil
		}
		return nodes[id]
	}
	for i, n := range w.Nodes {
		if len(n.Items) > 0 {
			nodes[i].Items = make([]*pyNode, len(n.Items))
			for j, c := range n.Items {
				nodes[i].Items[j] = at(c)
			}
		}
	}
	*p = pyCallList{State: w.State, Name: w.Name, Kws: w.Kws, Kw: w.Kw, Pend: w.Pend,
		Depth: w.Depth, Prev: w.Prev, Calls: w.Calls, Failed: w.Failed}
	for _, f := range w.Stack {
		p.Stack = append(p.Stack, pyFrame{Node: at(f.Node), Key: at(f.Key), State: f.State})
	}
	for _, v := range w.KwVals {
		p.KwVals = append(p.KwVals, at(v))
	}
	if len(w.Str) > 0 {
		s := w.Str[0]
		p.Str = &s
	}
	return bad
}
