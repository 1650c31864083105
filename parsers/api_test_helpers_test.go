package parsers

// pushDelta is one Push into a fresh Delta, as a caller that keeps every
// delta makes it.
func pushDelta(p *Parser, text string) Delta {
	var d Delta
	p.Push(text, &d)
	return d
}

// finishDelta is Finish into a fresh Delta.
func finishDelta(p *Parser) Delta {
	var d Delta
	p.Finish(&d)
	return d
}

// marshalState saves p's state for Restore.
func marshalState(p *Parser) ([]byte, error) { return p.AppendState(nil), nil }
