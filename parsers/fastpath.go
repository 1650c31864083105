package parsers

// The steady state of a one-token stream through a long tool-call argument
// is a push whose text is a piece of a JSON string: the reasoning machine
// passes it on as content, the tool machine hands it out as an arguments
// fragment unchanged. Machines that can tell so cheaply let the parser
// skip their general paths (marker scans, field routing, delta merging)
// for that push; the answer is the one the general path gives.

// passThrougher is a reasoning machine that can tell that a push would
// come out whole as content.
type passThrougher interface {
	passThrough(text string) bool
}

// argStreamer is a tool machine that can tell that a push is, whole and
// unchanged, an arguments fragment of the call at index, and takes it.
type argStreamer interface {
	takeArgs(text string) (index int, ok bool)
}

// passThrough implements passThrougher: in content, with nothing held
// and no byte that starts a marker, Push returns ("", text).
func (e *EngineReasoning) passThrough(text string) bool {
	return e.Disabled || e.InContent && e.Scan.Held == "" && !mayHoldMarker(text, e.spec.contentMarkers)
}

// takeArgs implements argStreamer: inside a named call's arguments
// string, with nothing held and no byte of "</tool_call>", the push is a
// verbatim fragment.
func (h *Hermes) takeArgs(text string) (int, bool) {
	c := &h.Call
	if h.Phase != hermesBody || h.Scan.Held != "" || c.Failed || !c.Named ||
		mayHoldMarker(text, hermesCloseMarkers) || c.Obj.CurKey != c.argsKey() || !c.Obj.InPlainValue(text) {
		return 0, false
	}
	h.keep(text)
	h.dropRaw()
	return c.Index, true
}

// fastArgs is Push for a push both machines pass straight through as an
// arguments fragment; ok is false when the general path must run.
func (p *Parser) fastArgs(text string, reuse bool) (d Delta, ok bool) {
	if !p.Parse || text == "" {
		return d, false
	}
	if p.Reasoning != nil {
		r, isPT := p.Reasoning.(passThrougher)
		if !isPT || !r.passThrough(text) {
			return d, false
		}
	}
	a, isAS := p.Tools.(argStreamer)
	if !isAS {
		return d, false
	}
	idx, ok := a.takeArgs(text)
	if !ok {
		return d, false
	}
	frag := ToolCallDelta{Index: idx, Arguments: text}
	if reuse {
		d.ToolCalls = append(p.reused[:0], frag)
		p.reused = d.ToolCalls[:0]
	} else {
		d.ToolCalls = p.arena.commit(append(p.arena.free(), frag))
	}
	p.filter(&d)
	return d, true
}
