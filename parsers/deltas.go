package parsers

import "strings"

// deltaSink collects one push's tool-call deltas. Argument fragments for
// the call of the last delta are merged into it, as appendArgs does, but
// through a builder: a push that completes many parameters (a whole output
// at once) would otherwise copy the growing arguments once per fragment.
type deltaSink struct {
	calls []ToolCallDelta
	// pend holds the last delta's arguments while fragments are merged.
	pend strings.Builder
}

// add appends a delta that is not an arguments fragment.
func (s *deltaSink) add(d ToolCallDelta) {
	s.flush()
	s.calls = append(s.calls, d)
}

// args adds an arguments fragment for call idx.
func (s *deltaSink) args(idx int, frag string) {
	if frag == "" {
		return
	}
	if n := len(s.calls); n > 0 && s.calls[n-1].Index == idx {
		if s.pend.Len() == 0 {
			s.pend.WriteString(s.calls[n-1].Arguments)
		}
		s.pend.WriteString(frag)
		return
	}
	s.add(ToolCallDelta{Index: idx, Arguments: frag})
}

// argsBytes is args for a fragment in scratch bytes: copied once, into
// the merged arguments or a string of its own.
func (s *deltaSink) argsBytes(idx int, frag []byte) {
	if len(frag) == 0 {
		return
	}
	if n := len(s.calls); n > 0 && s.calls[n-1].Index == idx {
		if s.pend.Len() == 0 {
			s.pend.WriteString(s.calls[n-1].Arguments)
		}
		s.pend.Write(frag)
		return
	}
	s.add(ToolCallDelta{Index: idx, Arguments: string(frag)})
}

func (s *deltaSink) flush() {
	if s.pend.Len() > 0 {
		s.calls[len(s.calls)-1].Arguments = s.pend.String()
		s.pend.Reset()
	}
}

// take returns the deltas collected since the last take.
func (s *deltaSink) take() []ToolCallDelta {
	s.flush()
	calls := s.calls
	s.calls = nil
	return calls
}
