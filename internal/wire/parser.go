package wire

// Parser parses documents one after another into shared slabs, so that a
// request's many small documents (tool-call arguments) cost the
// allocations of one. Each tree is what Parse returns and stays valid
// after later calls; a Parser is not safe for concurrent use.
type Parser struct{ p parser }

// Parse is the package's Parse, using and growing the Parser's slabs.
func (ps *Parser) Parse(data []byte) (*Node, error) {
	old := ps.p
	// Everything but the slabs starts afresh, as in Parse; the slabs are
	// only ever appended to, so earlier trees keep their nodes and text.
	ps.p = parser{s: data, build: true, nodes: old.nodes, ptrs: old.ptrs, keys: old.keys,
		text: old.text, chunk: old.chunk, stack: old.stack[:0], kstk: old.kstk[:0]}
	n, err := ps.p.document()
	if err != nil {
		return nil, ps.p.err(err)
	}
	return n, nil
}
